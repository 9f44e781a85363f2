package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/mcp/internal/mcptest"
)

func fixed(l limits) func() limits { return func() limits { return l } }

var quiet = slog.New(slog.DiscardHandler)

// readers wrap a stream as a slow network or pipe would deliver it.
var readers = map[string]func(io.Reader) io.Reader{
	"whole":    func(r io.Reader) io.Reader { return r },
	"one byte": iotest.OneByteReader,
	"halves":   iotest.HalfReader,
}

// event is a server-sent event as the SDK reads it.
type event struct{ name, id, data string }

// parseEvents parses a stream of server-sent events as the SDK does.
func parseEvents(t *testing.T, s string) []event {
	t.Helper()
	var evs []event
	var ev event
	var data []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			ev.data = strings.Join(data, "\n")
			if ev != (event{}) {
				evs = append(evs, ev)
			}
			ev, data = event{}, nil
			continue
		}
		field, value, ok := strings.Cut(line, ": ")
		require.True(t, ok, "malformed line %q", line)
		switch field {
		case "event":
			ev.name = value
		case "id":
			ev.id = value
		case "data":
			data = append(data, value)
		}
	}
	require.NoError(t, sc.Err())
	require.Empty(t, data, "unterminated event")
	return evs
}

func TestEventReader(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`
	big := mcptest.LargeText(1 << 20)
	bigResult := callResult(t, map[string]any{"content": []any{textBlock(big)}})
	stream := ": a comment\n\n" +
		"event: endpoint\ndata: /messages?session=1\n\n" +
		"id: 0\nretry: 10\ndata:\n\n" +
		"id: 1\r\ndata: " + progress + "\r\n\r\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":5,\"result\":{}}\n\n" +
		"data: " + bigResult + "\nid: 2\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"content\":[}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"bad\",\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}} trailing\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}" // the stream ends without a blank line
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			r := newEventReader(io.NopCloser(wrap(strings.NewReader(stream))), fixed(limits{text: 10000, bin: 100, rest: 1000}), quiet)
			out, err := io.ReadAll(r)
			require.NoError(t, err)
			evs := parseEvents(t, string(out)+"\n")
			require.Len(t, evs, 8, "%s", out)
			assert.Equal(t, event{name: "endpoint", data: "/messages?session=1"}, evs[0])
			assert.Equal(t, event{id: "0"}, evs[1])
			assert.Equal(t, "1", evs[2].id)
			assert.JSONEq(t, progress, evs[2].data)
			assert.Equal(t, "message", evs[3].name)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":5,"result":{}}`, evs[3].data)

			assert.Equal(t, "2", evs[4].id)
			content, _ := decodeResult(t, evs[4].data)
			checkCut(t, big, content[0]["text"].(string), 10000)

			// A malformed response is answered by an error for its request;
			// a malformed notification is left out.
			for i, id := range map[int]int{5: 6, 6: 8} {
				var resp struct {
					ID    int
					Error struct{ Code int }
				}
				require.NoError(t, json.Unmarshal([]byte(evs[i].data), &resp), evs[i].data)
				assert.Equal(t, id, resp.ID)
				assert.Equal(t, -32603, resp.Error.Code)
			}
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":9,"result":{}}`, evs[7].data)
		})
	}
}

func TestEventReaderLongLines(t *testing.T) {
	// Lines longer than any buffer: a comment, a field and a message.
	long := strings.Repeat("c", 3*readBuffer)
	msg := callResult(t, map[string]any{"content": []any{textBlock(mcptest.LargeText(3 * readBuffer))}})
	stream := ":" + long + "\nid: " + long + "\ndata: " + msg + "\nevent: " + long + "\n\n"
	r := newEventReader(io.NopCloser(strings.NewReader(stream)), fixed(limits{text: 1000, bin: 100, rest: 1000}), quiet)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	evs := parseEvents(t, string(out))
	require.Len(t, evs, 1)
	assert.Equal(t, event{data: evs[0].data}, evs[0], "the long fields are dropped")
	content, _ := decodeResult(t, evs[0].data)
	checkCut(t, mcptest.LargeText(3*readBuffer), content[0]["text"].(string), 1000)
}

func TestEventReaderRefusesLargeEvent(t *testing.T) {
	msg := callResult(t, map[string]any{"content": []any{}, "_meta": map[string]any{"m": strings.Repeat("m", 2000)}})
	stream := "event: endpoint\ndata: " + strings.Repeat("e", 2000) + "\n\n" + "data: " + msg + "\n\n"
	r := newEventReader(io.NopCloser(strings.NewReader(stream)), fixed(limits{text: 1000, bin: 100, rest: 1000}), quiet)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	evs := parseEvents(t, string(out))
	require.Len(t, evs, 1, "the large endpoint event is left out")
	var resp struct {
		ID    int
		Error struct{ Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(evs[0].data), &resp))
	assert.Equal(t, 7, resp.ID)
	assert.Contains(t, resp.Error.Message, fmt.Sprintf("message of %d bytes", len(msg)))
	assert.Contains(t, resp.Error.Message, "1000 bytes")
}

func TestLineReader(t *testing.T) {
	big := mcptest.LargeText(1 << 20)
	lines := []string{
		`{"jsonrpc":"2.0","method":"ping","id":1}`,
		callResult(t, map[string]any{"content": []any{textBlock(big)}}),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[nope]}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled", oops}`,
		`  {"jsonrpc":"2.0","id":3,"result":{}}{"jsonrpc":"2.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`, // no newline at the end
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			in := strings.Join(lines, "\n")
			r := newLineReader(wrap(strings.NewReader(in)), fixed(limits{text: 5000, bin: 100, rest: 1000}), quiet)
			out, err := io.ReadAll(r)
			require.NoError(t, err)
			got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			require.Len(t, got, 6, "%s", out)
			assert.JSONEq(t, lines[0], got[0])
			content, _ := decodeResult(t, got[1])
			checkCut(t, big, content[0]["text"].(string), 5000)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"the server's message of 52 bytes was refused: invalid JSON: invalid literal \"nope\""}}`, got[2])
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"result":{}}`, got[3])
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":4,"result":{}}`, got[4])
			assert.JSONEq(t, lines[5], got[5])
		})
	}
	t.Run("cut short", func(t *testing.T) {
		r := newLineReader(strings.NewReader(`{"jsonrpc":"2.0","id":3,"res`), fixed(roomy), quiet)
		_, err := io.ReadAll(r)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
}

func TestBodyReader(t *testing.T) {
	tests := []struct {
		name, body string
		want       string // "" for an empty body
	}{
		{"a result", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`},
		{"empty", "", ""},
		{"white space", " \n", ""},
		{"data after it", `{"jsonrpc":"2.0","id":1,"result":{}} {}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the server's message of 39 bytes was refused: invalid JSON: data after the message"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newBodyReader(io.NopCloser(strings.NewReader(tt.body)), fixed(roomy), quiet)
			out, err := io.ReadAll(r)
			require.NoError(t, err)
			if tt.want == "" {
				assert.Empty(t, bytes.TrimSpace(out))
				return
			}
			assert.JSONEq(t, tt.want, string(out))
		})
	}
}
