package sink_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sink"
)

func formatted(t *testing.T, msgs []toolloop.Message, opts *sink.TranscriptOptions) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, sink.FormatTranscript(&b, msgs, opts))
	return b.String()
}

// Every role and every content type.
func TestFormatTranscript(t *testing.T) {
	truncated := toolloop.TextResult("head … tail")
	truncated.CallID, truncated.Name = "c2", "grep"
	truncated.Meta.Truncated, truncated.Meta.Bytes = true, 120_000
	denied := toolloop.ErrorResult(toolloop.Errorf(toolloop.KindDenied, "denied by policy: secrets"))
	denied.CallID, denied.Name = "c3", "read_file"
	cleared := toolloop.TextResult("[cleared]")
	cleared.CallID, cleared.Name, cleared.Meta.Cleared = "c4", "ls", true
	image := &toolloop.ToolResult{CallID: "c1", Name: "screenshot", Status: toolloop.StatusOK, Content: []toolloop.Content{
		toolloop.ImageContent("image/png", make([]byte, 1500)),
		{Type: toolloop.ContentResource, URI: "file:///a.txt", MIMEType: "text/plain", Text: "embedded"},
		{Type: toolloop.ContentAudio, MIMEType: "audio/wav", Data: make([]byte, 10)},
		toolloop.JSONContent(json.RawMessage(`{"a":1,"b":[true]}`)),
	}}
	msgs := []toolloop.Message{
		toolloop.SystemMessage("Be brief."),
		toolloop.UserMessage("Look at the screen.\n\nThen grep."),
		{Role: toolloop.RoleAssistant, Model: "m-1", StopReason: toolloop.StopToolUse, Usage: &toolloop.Usage{InputTokens: 100, OutputTokens: 20},
			Content: []toolloop.Content{
				toolloop.ReasoningContent("I should look first.", toolloop.Reasoning{Provider: "p"}),
				toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "p", Redacted: true, Encrypted: "xx"}),
				toolloop.TextContent("Looking."),
			},
			ToolCalls: []toolloop.ToolCall{
				{ID: "c1", Name: "screenshot", Arguments: json.RawMessage(`{ "full": true }`)},
				{ID: "c2", Name: "grep", Arguments: json.RawMessage(`{"q":"x",`)},
				{ID: "c3", Name: "read_file", Arguments: json.RawMessage(`{"path":".env"}`)},
				{ID: "c4", Name: "ls"},
			}},
		toolloop.ToolMessage(image),
		toolloop.ToolMessage(truncated),
		toolloop.ToolMessage(denied),
		toolloop.ToolMessage(cleared),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("Done.")}},
		{Role: toolloop.RoleTool},
	}
	want := `system
  Be brief.

user
  Look at the screen.

  Then grep.

assistant (m-1, stop: tool_use, 100 tokens in, 20 out)
  ┊ I should look first.
  ┊ (reasoning withheld)
  Looking.
  → screenshot [c1] {"full":true}
  → grep [c2] {"q":"x",
  → read_file [c3] {"path":".env"}
  → ls [c4] {}

tool screenshot [c1]: ok
  [image image/png, 1.5 KB]
  [resource text/plain file:///a.txt]
  embedded
  [audio audio/wav, 10 B]
  {
    "a": 1,
    "b": [
      true
    ]
  }

tool grep [c2]: ok [truncated from 120.0 KB]
  head … tail

tool read_file [c3]: error (denied)
  denied by policy: secrets

tool ls [c4]: ok [cleared]
  [cleared]

assistant
  Done.

tool (no result)
`
	assert.Equal(t, want, formatted(t, msgs, nil))

	noReasoning := formatted(t, msgs[2:3], &sink.TranscriptOptions{HideReasoning: true})
	assert.NotContains(t, noReasoning, "look first")
	assert.Contains(t, noReasoning, "  Looking.\n")
}

// A huge block keeps its head and tail around a count of what was left
// out; the output stays within MaxBlockBytes per block.
func TestFormatTranscriptBoundsBlocks(t *testing.T) {
	big := "HEAD" + strings.Repeat("line of text\n", 400_000) + "TAIL"
	r := toolloop.TextResult(big)
	r.CallID, r.Name = "c1", "cat"
	msgs := []toolloop.Message{
		toolloop.UserMessage(big),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{{ID: "c1", Name: "cat", Arguments: json.RawMessage(`{"s":"` + strings.Repeat("y", 1<<20) + `"}`)}}},
		toolloop.ToolMessage(r),
	}
	out := formatted(t, msgs, &sink.TranscriptOptions{MaxBlockBytes: 600})
	assert.Less(t, len(out), 3*(600+200)+200, "three blocks of 600 bytes, their indentation and headers")
	assert.Equal(t, 2, strings.Count(out, "HEAD"))
	assert.Equal(t, 2, strings.Count(out, "TAIL"))
	assert.Contains(t, out, "  … 5.2 MB left out …\n")
	assert.Contains(t, out, "… (1.0 MB more)\n")
}

func TestFormatTranscriptNeutralizesTerminalControls(t *testing.T) {
	hostile := "a\x1b]0;pwned\x07b\x1b[2Jc\rd\u202ee"
	r := toolloop.TextResult(hostile)
	r.CallID, r.Name = "c1\x1b[1m", "t\x1b[1m"
	msgs := []toolloop.Message{
		toolloop.UserMessage(hostile),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{{ID: "c1\x1b", Name: "t\x1b", Arguments: json.RawMessage(hostile)}}},
		toolloop.ToolMessage(r),
	}
	for _, c := range []sink.Color{sink.ColorNever, sink.ColorAlways} {
		out := escapes.ReplaceAllString(formatted(t, msgs, &sink.TranscriptOptions{Color: c}), "")
		for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e"} {
			assert.NotContains(t, out, bad)
		}
		assert.Contains(t, out, `a\x1b]0;pwned\x07b\x1b[2Jcd\u202ee`)
	}
}

func TestFormatTranscriptColor(t *testing.T) {
	out := formatted(t, []toolloop.Message{toolloop.UserMessage("hi")}, &sink.TranscriptOptions{Color: sink.ColorAlways})
	assert.Equal(t, "\x1b[1;36muser\x1b[0m\n  hi\n", out)
}

type failingWriter struct {
	n   int
	err error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, w.err
}

// The first write error is returned, and nothing more is written.
func TestFormatTranscriptWriteError(t *testing.T) {
	errDisk := errors.New("disk full")
	w := &failingWriter{err: errDisk}
	err := sink.FormatTranscript(w, []toolloop.Message{toolloop.UserMessage("a"), toolloop.UserMessage("b")}, nil)
	require.ErrorIs(t, err, errDisk)
	assert.Equal(t, 1, w.n)
	assert.NoError(t, sink.FormatTranscript(w, nil, nil))
}
