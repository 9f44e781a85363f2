package toolloop_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

// roundTripGolden holds roundTripTranscript as JSON. Rewrite it with
// go test -run TestTranscriptGolden -update.
var roundTripGolden = filepath.Join("testdata", "transcript_roundtrip.json")

// roundTripTranscript uses every content type, every message field, tool
// calls with valid and malformed arguments, and results with every field.
// Extra values have the Go types JSON decodes to, so they compare equal
// after a round trip.
func roundTripTranscript() []toolloop.Message {
	return []toolloop.Message{
		toolloop.SystemMessage("You are a careful coding agent."),
		{Role: toolloop.RoleUser, Content: []toolloop.Content{
			toolloop.TextContent("Fix the bug in <main.go> & tell me: é€😀 \u2028 \"quoted\"\ttab\n"),
			toolloop.ImageContent("image/png", []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}),
			{Type: toolloop.ContentImage, URI: "https://example.com/screenshot.jpg", MIMEType: "image/jpeg"},
			{Type: toolloop.ContentAudio, MIMEType: "audio/wav", Data: []byte("RIFF\x00\x00WAVE")},
			toolloop.JSONContent(json.RawMessage(`{"k":[1,2.5,-0,1e3,"x",null,true,{"n":{}}],"html":"<b>&</b>"}`)),
			{Type: toolloop.ContentResource, URI: "file:///src/main.go", MIMEType: "text/x-go", Text: "package main\n"},
			{Type: toolloop.ContentResource, URI: "file:///bin/blob", MIMEType: "application/octet-stream", Data: []byte{0, 1, 2}},
		}},
		{
			Role: toolloop.RoleAssistant,
			Content: []toolloop.Content{
				toolloop.ReasoningContent("The bug is in main.go; read it first.", toolloop.Reasoning{Provider: "anthropic", Signature: "EqQBCkgIARABGAIiQL+/sig=="}),
				toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "anthropic", Redacted: true, Encrypted: "EmwKAhgBEgy3va3pzix/LafPsn4a"}),
				toolloop.TextContent("Let me look."), toolloop.TextContent(" Two blocks."),
				toolloop.ReasoningContent("**Reading** the file", toolloop.Reasoning{
					Provider: "gemini", ID: "rs_01", Summary: true, CallID: "call_ok", Signature: "CiQBVKhc7g==",
					Extra: json.RawMessage(`{"summary":[{"type":"summary_text","text":"**Reading** the file"}]}`),
				}),
			},
			ToolCalls: []toolloop.ToolCall{
				{ID: "call_ok", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go","lines":[1,20],"q":"a<b"}`)},
				{ID: "call_bad", Name: "write_file", Arguments: json.RawMessage(`{"path":"x.go","content":"unterminated`)},
				{ID: "call_fence", Name: "search", Arguments: json.RawMessage("```json\n{\"q\": \"x\",}\n```")},
				{ID: "call_text", Name: "search", Arguments: json.RawMessage(`path=main.go, mode=é`)},
				{ID: "call_noargs", Name: "list_dir", Arguments: json.RawMessage(`{}`)},
				{ID: "toolu_01A/b+c=:ü", Name: "github__create_issue", Arguments: json.RawMessage(`{"title":"t"}`)},
			},
			StopReason: toolloop.StopToolUse,
			Usage:      &toolloop.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 1000, CacheWriteTokens: 150, ReasoningTokens: 64},
			Model:      "model-x-2025",
		},
		toolloop.ToolMessage(&toolloop.ToolResult{
			CallID: "call_ok", Name: "read_file", Status: toolloop.StatusOK,
			Content: []toolloop.Content{
				toolloop.TextContent("package main\n\nfunc main() {}\n"),
				toolloop.JSONContent(json.RawMessage(`[{"line":1},{"_truncated":"18 of 19 items cut to fit the output budget"}]`)),
			},
			Meta: toolloop.ResultMeta{
				Bytes: 70000, Truncated: true, MIMEType: "text/x-go", Duration: 1500 * time.Millisecond,
				Source: toolloop.SourceBuiltin, SourceName: toolloop.LocalSource,
				Repairs:  []string{"removed trailing commas"},
				Modified: []string{"guard: workspace", "pre_tool_use[0]"},
				Extra: map[string]any{
					"exit_code": float64(1), "stderr": "warning", "ok": false, "none": nil,
					"nested": map[string]any{"list": []any{true, "x", float64(2.5)}},
				},
			},
		}),
		toolloop.ToolMessage(&toolloop.ToolResult{
			CallID: "call_bad", Name: "write_file", Status: toolloop.StatusError,
			Content: []toolloop.Content{toolloop.TextContent("arguments for write_file are not valid JSON")},
			Error:   &toolloop.ToolError{Kind: toolloop.KindInvalidArgs, Message: "arguments for write_file are not valid JSON"},
			Meta:    toolloop.ResultMeta{Bytes: 43, Source: toolloop.SourceBuiltin, SourceName: "local"},
		}),
		toolloop.ToolMessage(&toolloop.ToolResult{
			CallID: "call_fence", Name: "search", Status: toolloop.StatusError,
			Content: []toolloop.Content{toolloop.TextContent("denied by policy: no searching")},
			Error:   &toolloop.ToolError{Kind: toolloop.KindDenied, Message: "denied by policy: no searching"},
			Meta:    toolloop.ResultMeta{Repairs: []string{"removed a code fence around the arguments", "removed trailing commas"}, Source: toolloop.SourceMCP, SourceName: "search-server"},
		}),
		toolloop.ToolMessage(&toolloop.ToolResult{
			CallID: "call_text", Name: "search", Status: toolloop.StatusError,
			Error: &toolloop.ToolError{Kind: toolloop.KindTimeout, Message: "tool search timed out after 2m0s"},
		}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_noargs", Name: "list_dir", Status: toolloop.StatusOK}),
		toolloop.ToolMessage(&toolloop.ToolResult{
			CallID: "toolu_01A/b+c=:ü", Name: "github__create_issue", Status: toolloop.StatusError,
			Content: []toolloop.Content{toolloop.TextContent("tool panicked")},
			Error:   &toolloop.ToolError{Kind: toolloop.KindPanic, Message: "tool github__create_issue panicked: boom"},
			Meta:    toolloop.ResultMeta{Source: toolloop.SourcePlugin, SourceName: "gh"},
		}),
		{
			Role:       toolloop.RoleAssistant,
			Content:    []toolloop.Content{toolloop.TextContent("Done.")},
			StopReason: toolloop.StopEnd,
			Usage:      &toolloop.Usage{InputTokens: 1500, OutputTokens: 3},
			Model:      "model-x-2025",
		},
		{Role: toolloop.RoleAssistant, StopReason: toolloop.StopRefusal, Usage: &toolloop.Usage{}},
	}
}

// normalize makes a message comparable after a JSON round trip: empty and
// nil slices and maps are the same, and JSON values compare by meaning
// (whitespace and escaping aside); arguments that are not JSON compare by
// their bytes.
func normalize(msgs []toolloop.Message) []toolloop.Message {
	out := make([]toolloop.Message, len(msgs))
	for i, m := range msgs {
		m.Content = normContents(m.Content)
		if len(m.ToolCalls) == 0 {
			m.ToolCalls = nil
		} else {
			m.ToolCalls = slices.Clone(m.ToolCalls)
			for j := range m.ToolCalls {
				m.ToolCalls[j].Arguments = normRaw(m.ToolCalls[j].Arguments)
			}
		}
		if m.Result != nil {
			r := *m.Result
			r.Content = normContents(r.Content)
			if len(r.Meta.Repairs) == 0 {
				r.Meta.Repairs = nil
			}
			if len(r.Meta.Modified) == 0 {
				r.Meta.Modified = nil
			}
			if len(r.Meta.Extra) == 0 {
				r.Meta.Extra = nil
			}
			m.Result = &r
		}
		out[i] = m
	}
	return out
}

func normContents(cs []toolloop.Content) []toolloop.Content {
	if len(cs) == 0 {
		return nil
	}
	cs = slices.Clone(cs)
	for i := range cs {
		if len(cs[i].Data) == 0 {
			cs[i].Data = nil
		}
		cs[i].JSON = normRaw(cs[i].JSON)
		if r := cs[i].Reasoning; r != nil {
			r2 := *r
			r2.Extra = normRaw(r.Extra)
			cs[i].Reasoning = &r2
		}
	}
	return cs
}

// normRaw returns valid JSON in a canonical encoding, and anything else
// as it is.
func normRaw(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if !json.Valid(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

func TestTranscriptGolden(t *testing.T) {
	msgs := roundTripTranscript()
	got, err := json.MarshalIndent(msgs, "", "  ")
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(roundTripGolden), 0o755))
		require.NoError(t, os.WriteFile(roundTripGolden, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(roundTripGolden)
	require.NoError(t, err, "run with -update to create it")
	assert.JSONEq(t, string(want), string(got), "the wire form changed (run with -update to accept)")

	// The golden file decodes to the transcript.
	var back []toolloop.Message
	require.NoError(t, json.Unmarshal(want, &back))
	assert.Empty(t, cmp.Diff(normalize(msgs), normalize(back)))
}

func TestTranscriptRoundTrip(t *testing.T) {
	msgs := roundTripTranscript()
	b, err := json.Marshal(msgs)
	require.NoError(t, err)
	var back []toolloop.Message
	require.NoError(t, json.Unmarshal(b, &back))
	require.Len(t, back, len(msgs))
	assert.Empty(t, cmp.Diff(normalize(msgs), normalize(back)))

	// Tool call IDs and malformed arguments come back byte for byte.
	for i, tc := range msgs[2].ToolCalls {
		got := back[2].ToolCalls[i]
		assert.Equal(t, tc.ID, got.ID)
		if !json.Valid(tc.Arguments) {
			assert.Equal(t, string(tc.Arguments), string(got.Arguments), "malformed arguments of %s", tc.ID)
		} else {
			assert.JSONEq(t, string(tc.Arguments), string(got.Arguments))
		}
	}
	// Binary content comes back whole.
	assert.Equal(t, msgs[1].Content[1].Data, back[1].Content[1].Data)
	assert.Equal(t, msgs[1].Content[6].Data, back[1].Content[6].Data)
	// A second trip changes nothing at all.
	b2, err := json.Marshal(back)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(b2))
}

func TestToolCallJSON(t *testing.T) {
	tests := []struct {
		name string
		args json.RawMessage
		// raw reports that the arguments travel as a raw_arguments string.
		raw bool
	}{
		{"object", json.RawMessage(`{"a":1,"b":[true,null]}`), false},
		{"object with space", json.RawMessage(" {\n\t\"a\" : 1 }\n"), false},
		{"html in strings", json.RawMessage(`{"q":"<a href=\"x\">&</a>"}`), false},
		{"null", json.RawMessage(`null`), false},
		{"scalar string", json.RawMessage(`"{\"a\":1}"`), false},
		{"truncated object", json.RawMessage(`{"a":1,`), true},
		{"trailing comma", json.RawMessage(`{"a":1,}`), true},
		{"code fence", json.RawMessage("```json\n{\"a\":1}\n```"), true},
		{"plain text", json.RawMessage(`a=1 & b=<2> "quoted" é`), true},
		{"control characters", json.RawMessage("{\"a\":\"line\nbreak\t\x01\"}"), true},
		{"empty", json.RawMessage{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := toolloop.ToolCall{ID: "call_1", Name: "tool", Arguments: tt.args}
			b, err := json.Marshal(tc)
			require.NoError(t, err)

			var wire map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(b, &wire))
			_, hasArgs := wire["arguments"]
			_, hasRaw := wire["raw_arguments"]
			assert.Equal(t, tt.raw, hasRaw, "raw_arguments in %s", b)
			assert.Equal(t, !tt.raw, hasArgs, "arguments in %s", b)

			var back toolloop.ToolCall
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tc.ID, back.ID)
			assert.Equal(t, tc.Name, back.Name)
			if tt.raw {
				assert.Equal(t, string(tt.args), string(back.Arguments), "byte for byte")
			} else {
				assert.JSONEq(t, string(tt.args), string(back.Arguments))
			}
		})
	}
}

// Arguments that are neither JSON nor valid UTF-8 cannot travel in a JSON
// string unchanged: the repair turns bad bytes into U+FFFD. This records
// the behaviour; models send UTF-8.
func TestToolCallJSONInvalidUTF8(t *testing.T) {
	tc := toolloop.ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage("{\"a\":\"\xff")}
	b, err := json.Marshal(tc)
	require.NoError(t, err)
	var back toolloop.ToolCall
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, utf8.Valid(back.Arguments))
	assert.Equal(t, "{\"a\":\"\uFFFD", string(back.Arguments))
}

func TestToolCallJSONNilArguments(t *testing.T) {
	b, err := json.Marshal(toolloop.ToolCall{ID: "c", Name: "t"})
	require.NoError(t, err)
	var back toolloop.ToolCall
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Empty(t, back.Arguments)
}

func TestToolCallJSONRawWins(t *testing.T) {
	var tc toolloop.ToolCall
	require.NoError(t, json.Unmarshal([]byte(`{"id":"c","name":"t","arguments":{"a":1},"raw_arguments":"{\"a\":"}`), &tc))
	assert.Equal(t, `{"a":`, string(tc.Arguments))
	require.Error(t, json.Unmarshal([]byte(`{"id":"c","name":"t","arguments":{"a":}`), &tc))
}

// FuzzTranscriptJSON: any message that decodes, and marshals, decodes back
// to an equal value; and any tool call arguments that JSON can carry
// (JSON, or UTF-8 text) round-trip, malformed ones byte for byte.
func FuzzTranscriptJSON(f *testing.F) {
	golden, err := os.ReadFile(roundTripGolden)
	require.NoError(f, err)
	var seeds []json.RawMessage
	require.NoError(f, json.Unmarshal(golden, &seeds))
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"role":"assistant","tool_calls":[{"id":"x","name":"y","raw_arguments":"{\"a\":"}]}`))
	f.Add([]byte(`{"role":"tool","result":{"call_id":"x","name":"y","status":"ok","meta":{"bytes":1,"extra":{"a":[1,"b"]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m toolloop.Message
		if json.Unmarshal(data, &m) == nil {
			b, err := json.Marshal(m)
			if err == nil {
				var back toolloop.Message
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatalf("%s marshals to %s, which does not decode: %v", data, b, err)
				}
				if d := cmp.Diff(normalize([]toolloop.Message{m}), normalize([]toolloop.Message{back})); d != "" {
					t.Fatalf("round trip of %s changed the message (-before +after):\n%s", data, d)
				}
			}
		}

		// data as the arguments of a call.
		if !json.Valid(data) && !utf8.Valid(data) {
			return // a JSON string cannot carry these bytes
		}
		call := toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{{ID: "c", Name: "t", Arguments: data}}}
		b, err := json.Marshal(call)
		if err != nil {
			t.Fatalf("marshalling a call with arguments %q: %v", data, err)
		}
		var back toolloop.Message
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("decoding %s: %v", b, err)
		}
		got := back.ToolCalls[0].Arguments
		if json.Valid(data) {
			if !reflect.DeepEqual(normRaw(data), normRaw(got)) {
				t.Fatalf("arguments %q came back as %q", data, got)
			}
		} else if !bytes.Equal(data, got) {
			t.Fatalf("malformed arguments %q came back as %q", data, got)
		}
	})
}

func TestUsageAdd(t *testing.T) {
	u := toolloop.Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 5}
	u.Add(toolloop.Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 40, ReasoningTokens: 50})
	assert.Equal(t, toolloop.Usage{InputTokens: 11, OutputTokens: 22, CacheReadTokens: 33, CacheWriteTokens: 44, ReasoningTokens: 55}, u)
}

func TestReasoningIsNotText(t *testing.T) {
	m := toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
		toolloop.ReasoningContent("secret plan", toolloop.Reasoning{Provider: "p"}),
		toolloop.TextContent("answer"),
	}}
	assert.Equal(t, "answer", m.Text())
}
