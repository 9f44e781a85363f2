package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/mcp/internal/mcptest"
)

// clipOne runs msg through a clipper that reads it through the smallest
// buffer bufio allows, so that every token straddles reads.
func clipOne(msg string, lim limits) (string, *clipper, error) {
	c := &clipper{in: bufio.NewReaderSize(strings.NewReader(msg), 16)}
	err := c.message(lim)
	return string(c.out), c, err
}

var roomy = limits{text: 1 << 20, bin: 1 << 20, rest: 1 << 20}

// callResult is a response to a tools/call.
func callResult(t testing.TB, res map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "result": res})
	require.NoError(t, err)
	return string(b)
}

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// decodeResult decodes a clipped response's result.
func decodeResult(t *testing.T, out string) (content []map[string]any, structured any) {
	t.Helper()
	var msg struct {
		Result struct {
			Content           []map[string]any `json:"content"`
			StructuredContent any              `json:"structuredContent"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &msg), out)
	return msg.Result.Content, msg.Result.StructuredContent
}

func TestClipPassesWhatFits(t *testing.T) {
	tests := []struct{ name, msg string }{
		{"tool result", callResult(t, map[string]any{
			"content": []any{
				textBlock("hello \"world\"\n\t\\ \u00e9 \U0001F600 \u2028 \x01"),
				map[string]any{"type": "image", "mimeType": "image/png", "data": mcptest.TinyPNG},
				map[string]any{"type": "resource", "resource": map[string]any{"uri": "mem://a", "text": "embedded"}},
				map[string]any{"type": "resource", "resource": map[string]any{"uri": "mem://b", "blob": []byte{0, 1, 2}}},
				map[string]any{"type": "resource_link", "uri": "file:///x", "name": "x"},
			},
			"structuredContent": map[string]any{"a": []any{1.5, -2e10, true, false, nil, "s"}, "b": map[string]any{}},
			"isError":           false,
			"_meta":             map[string]any{"k": []any{}},
		})},
		{"tool list", `{"jsonrpc":"2.0","id":"x1","result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"nextCursor":"c"}}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":3,"message":"step"}}`},
		{"error", `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no"}}`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"ping","id":9}]`},
		{"escaped surrogate pair and lone surrogate", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\ud83d\ude00 \ud800 \u00e9 \/"}]}}`},
		{"white space", " {\n \"jsonrpc\" : \"2.0\" ,\r\n \"id\" : 1 , \"result\" : { \"content\" : [ ] } } "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := clipOne(tt.msg, roomy)
			require.NoError(t, err)
			assert.JSONEq(t, tt.msg, out)
		})
	}
}

// markerRE matches the marker of a cut text, but for the newline before
// it, which it has only when the head does not end with one.
var markerRE = regexp.MustCompile(`\[\.\.\. (\d+) of (\d+) bytes cut from the middle of this output \.\.\.\]\n`)

// checkCut checks that got is want cut in the middle within budget bytes.
func checkCut(t *testing.T, want, got string, budget int) {
	t.Helper()
	require.LessOrEqual(t, len(got), budget)
	require.True(t, utf8.ValidString(got))
	loc := markerRE.FindStringSubmatchIndex(got)
	require.NotNil(t, loc, "no marker in %q", got)
	head, tail := got[:loc[0]], got[loc[1]:]
	cut, _ := strconv.Atoi(got[loc[2]:loc[3]])
	total, _ := strconv.Atoi(got[loc[4]:loc[5]])
	assert.Equal(t, len(want), total)
	require.True(t, strings.HasSuffix(head, "\n"), "no line break before the marker")
	if len(head)+cut+len(tail) != total || !strings.HasPrefix(want, head) {
		head = head[:len(head)-1] // the marker's own line break
	}
	assert.Equal(t, len(want), len(head)+cut+len(tail), "the marker counts what is missing")
	assert.True(t, strings.HasPrefix(want, head), "the head is not the text's beginning")
	assert.True(t, strings.HasSuffix(want, tail), "the tail is not the text's end")
	assert.Greater(t, len(tail), len(head), "the tail is the larger part")
}

func TestClipCutsTextInTheMiddle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab\"\\\n\t\x01/<é€\U0001F600\u2028")
	for _, size := range []int{3000, 10000, 100000} {
		var b strings.Builder
		for b.Len() < size {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		for _, budget := range []int{500, 1000, 1001, 1002, 1003, 2049} {
			t.Run(fmt.Sprint(size, "/", budget), func(t *testing.T) {
				out, c, err := clipOne(callResult(t, map[string]any{"content": []any{textBlock(text)}}), limits{text: budget, bin: 10, rest: 1000})
				require.NoError(t, err)
				content, _ := decodeResult(t, out)
				require.Len(t, content, 1)
				checkCut(t, text, content[0]["text"].(string), budget)
				assert.Equal(t, "7", string(c.id))
			})
		}
	}
	t.Run("lines", func(t *testing.T) {
		text := mcptest.LargeText(1 << 20)
		out, _, err := clipOne(callResult(t, map[string]any{"content": []any{textBlock(text)}}), limits{text: 10000, bin: 10, rest: 1000})
		require.NoError(t, err)
		content, _ := decodeResult(t, out)
		got := content[0]["text"].(string)
		checkCut(t, text, got, 10000)
		head, tail, _ := strings.Cut(got, "[...")
		assert.True(t, strings.HasSuffix(head, "\n"), "the head ends with a whole line")
		assert.True(t, strings.HasPrefix(tail[strings.Index(tail, "]\n")+2:], "line "), "the tail starts with a whole line")
	})
}

func TestClipContentBlocks(t *testing.T) {
	big := strings.Repeat("a", 6000)
	image := func(n int) map[string]any {
		return map[string]any{"type": "image", "mimeType": "image/png", "data": make([]byte, n)}
	}
	tests := []struct {
		name    string
		content []any
		lim     limits
		// want is, for each block out, its type and how much text it has
		// (-1: cut, so less than the original).
		want []string
		note string // what the last block says, if blocks were cut
	}{
		{"text shares first come first served", []any{textBlock(big), textBlock(big), textBlock(big)},
			limits{text: 8000, bin: 100, rest: 1000}, []string{"text 6000", "text cut", "note"},
			"1 of 3 content blocks cut to fit the output budget: 1 with text past the 8000 bytes of text a result keeps"},
		{"an image over the limit is left out", []any{textBlock("hi"), image(3000), image(30)},
			limits{text: 8000, bin: 1000, rest: 1000}, []string{"text 2", "image", "note"},
			"1 of 3 content blocks cut to fit the output budget: 1 with 4000 bytes of base64 data over the 1000 bytes of images, audio and blobs a result keeps"},
		{"binary shares the limit", []any{image(600), image(600)},
			limits{text: 8000, bin: 1000, rest: 1000}, []string{"image", "note"}, "1 of 2 content blocks"},
		{"a blob over the limit", []any{map[string]any{"type": "resource", "resource": map[string]any{"uri": "x", "blob": make([]byte, 3000)}}},
			limits{text: 8000, bin: 1000, rest: 1000}, []string{"note"}, "1 of 1 content blocks"},
		{"resource text is cut", []any{map[string]any{"type": "resource", "resource": map[string]any{"uri": "x", "text": big}}},
			limits{text: 1000, bin: 1000, rest: 1000}, []string{"resource cut"}, ""},
		{"empty text is no text", []any{textBlock(big), textBlock("")},
			limits{text: 1000, bin: 1000, rest: 1000}, []string{"text cut", "text 0"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := clipOne(callResult(t, map[string]any{"content": tt.content}), tt.lim)
			require.NoError(t, err)
			content, _ := decodeResult(t, out)
			var got []string
			for i, b := range content {
				typ := b["type"].(string)
				switch {
				case tt.note != "" && i == len(content)-1:
					got = append(got, "note")
					assert.Contains(t, b["text"], tt.note)
				case typ == "text":
					text := b["text"].(string)
					if markerRE.MatchString(text) {
						got = append(got, "text cut")
						assert.LessOrEqual(t, len(text), tt.lim.text)
					} else {
						got = append(got, fmt.Sprint("text ", len(text)))
					}
				case typ == "resource":
					text, _ := b["resource"].(map[string]any)["text"].(string)
					got = append(got, "resource cut")
					checkCut(t, big, text, tt.lim.text)
				default:
					got = append(got, typ)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestClipStructuredContent(t *testing.T) {
	nums := make([]int, 5000)
	members := make(map[string]int, 500)
	for i := range 500 {
		members[fmt.Sprintf("key%04d", i)] = i
	}
	for i := range nums {
		nums[i] = i
	}
	out, _, err := clipOne(callResult(t, map[string]any{
		"content":           []any{},
		"structuredContent": map[string]any{"nums": nums, "strings": []string{strings.Repeat("s", 5000)}, "z": members},
	}), limits{text: 2000, bin: 10, rest: 1000})
	require.NoError(t, err)
	_, structured := decodeResult(t, out)
	sc := structured.(map[string]any)
	got := sc["nums"].([]any)
	require.NotEmpty(t, got)
	last := got[len(got)-1].(map[string]any)["_truncated"].(string)
	var cut, total int
	_, err = fmt.Sscanf(last, "%d of %d items cut to fit the output budget", &cut, &total)
	require.NoError(t, err, last)
	assert.Equal(t, 5000, total)
	assert.Equal(t, 5000, cut+len(got)-1)
	for i, v := range got[:len(got)-1] {
		assert.Equal(t, float64(i), v)
	}
	// The budget was spent on the numbers: what came later is cut, with
	// the object noting how many of its members were.
	assert.Contains(t, sc["_truncated"], "items cut to fit the output budget")
	assert.LessOrEqual(t, len(out), 2000+1000)
}

func TestClipRefuses(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`
	tests := []struct {
		name, msg string
		id        string
	}{
		{"metadata over the rest", callResult(t, map[string]any{"content": []any{}, "_meta": map[string]any{"x": strings.Repeat("m", 5000)}}), "7"},
		{"tool list over the rest", `{"id":"a","result":{"tools":["` + strings.Repeat("t", 5000) + `"]}}`, `"a"`},
		{"not JSON", `{"id":2,"result":nope}`, "2"},
		{"bad escape", `{"id":2,"result":{"content":[{"type":"text","text":"\x"}]}}`, "2"},
		{"missing comma", `{"id":2 "result":{}}`, "2"},
		{"not a literal", `{"id":2,"result":{"structuredContent":[truth]}}`, "2"},
		{"not a number", `{"id":2,"result":{"structuredContent":[01]}}`, "2"},
		{"too deep", deep, "1"},
		{"number too long", `{"id":2,"result":{"structuredContent":[` + strings.Repeat("1", 5000) + `]}}`, "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, err := clipOne(tt.msg, limits{text: 100000, bin: 100, rest: 1000})
			var cerr *clipError
			require.ErrorAs(t, err, &cerr)
			assert.Equal(t, tt.id, string(c.id))
		})
	}
	t.Run("truncated", func(t *testing.T) {
		_, _, err := clipOne(`{"id":2,"result":{"content":[{"type":"text","text":"abc`, roomy)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
}

func decodeAny(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

func FuzzClip(f *testing.F) {
	f.Add(callResult(f, map[string]any{"content": []any{textBlock("hello"), map[string]any{"type": "image", "data": []byte("xyz")}}}), uint16(40), uint16(8))
	f.Add(`{"id":1,"result":{"structuredContent":{"a":[1,2,{"b":"c"}]}}}`, uint16(3), uint16(0))
	f.Add(`{"id":"\ud83d\ude00","result":{"content":[{"type":"text","text":"\u00e9\n\"é"}]}}`, uint16(100), uint16(100))
	f.Add(`[{"method":"x"},1,"2",null]`, uint16(1), uint16(1))
	f.Fuzz(func(t *testing.T, msg string, text, bin uint16) {
		lim := limits{text: int(text), bin: int(bin), rest: 2000}
		out, _, err := clipOne(msg, lim)
		if !json.Valid([]byte(msg)) {
			return
		}
		var cerr *clipError
		if err != nil {
			require.ErrorAs(t, err, &cerr)
			return
		}
		require.True(t, json.Valid([]byte(out)), "invalid output %q", out)
		// With room for everything, nothing changes.
		n := len(msg) + markerReserve
		out, _, err = clipOne(msg, limits{text: n, bin: n, rest: n})
		if err != nil { // only a number or literal too long for any message
			require.ErrorAs(t, err, &cerr)
			require.Greater(t, len(msg), maxScalar)
			return
		}
		assert.Equal(t, decodeAny(t, msg), decodeAny(t, out))
	})
}
