package gemini

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// goldenTranscripts loads the transcript of every core golden file,
// skipping files without one.
func goldenTranscripts(t *testing.T) map[string][]toolloop.Message {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no core golden files found")
	out := map[string][]toolloop.Message{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var f struct {
			Transcript []toolloop.Message `json:"transcript"`
		}
		require.NoError(t, json.Unmarshal(b, &f), p)
		if f.Transcript != nil {
			out[strings.TrimSuffix(filepath.Base(p), ".json")] = f.Transcript
		}
	}
	return out
}

// wrapUp is the user message the loop's wrap-up turn appends.
var wrapUp = toolloop.UserMessage(fmt.Sprintf(toolloop.DefaultWrapUpPrompt, "the maximum number of model turns"))

func call(id, name string) toolloop.ToolCall {
	return toolloop.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{"q":"x"}`)}
}

func result(id, name, text string) toolloop.Message {
	return toolloop.ToolMessage(&toolloop.ToolResult{CallID: id, Name: name, Status: toolloop.StatusOK,
		Content: []toolloop.Content{toolloop.TextContent(text)}})
}

// edgeTranscripts are the shapes context management and budgets give a
// transcript, built by hand; own(text, callID) makes a reasoning block of
// the provider under test.
func edgeTranscripts(own func(text, callID string) toolloop.Content) map[string][]toolloop.Message {
	sys := toolloop.SystemMessage("You are terse.")
	ask := toolloop.UserMessage("Find the bug.")
	stub := "[error output of grep (call c1, 5120 bytes) cleared to save context; call the tool again if you need it]"
	cleared := &toolloop.ToolResult{CallID: "c1", Name: "grep", Status: toolloop.StatusError,
		Content: []toolloop.Content{toolloop.TextContent(stub)},
		Error:   &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: stub},
		Meta:    toolloop.ResultMeta{Bytes: 5120, Cleared: true}}
	foreign := toolloop.ReasoningContent("another provider's thoughts",
		toolloop.Reasoning{Provider: "elsewhere", Signature: "Zm9yZWlnbg==", CallID: "c1"})
	return map[string][]toolloop.Message{
		"compacted": {sys, ask,
			toolloop.UserMessage("[Summary of the earlier part of this conversation, compacted to save context]\n\nTwo files read."),
			toolloop.UserMessage("Remember: answer in one sentence."),
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call("c3", "read")}},
			result("c3", "read", "package main"),
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("Done.")}},
		},
		"wrap_up": {sys, ask,
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call("c1", "grep"), call("c2", "read")}},
			result("c1", "grep", "main.go:12"), result("c2", "read", "package main"),
			wrapUp,
		},
		"cleared_error_stub": {sys, ask,
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call("c1", "grep")}},
			toolloop.ToolMessage(cleared),
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call("c2", "read")}},
			result("c2", "read", "package main"),
			wrapUp,
		},
		"own_reasoning": {sys, ask,
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{own("Grep first.", ""), toolloop.TextContent("Looking."), own("", "c1")},
				ToolCalls: []toolloop.ToolCall{call("c1", "grep")}},
			result("c1", "grep", "main.go:12"),
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{own("Then read.", "c2")},
				ToolCalls: []toolloop.ToolCall{call("c2", "read")}},
			result("c2", "read", "package main"),
		},
		"foreign_reasoning": {sys, ask,
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{foreign, toolloop.TextContent("Looking.")},
				ToolCalls: []toolloop.ToolCall{call("c1", "grep")}},
			result("c1", "grep", "main.go:12"),
			wrapUp,
		},
	}
}

// validityCase is one request to map: a transcript's messages up to a
// model turn, with the tools its calls name and a tool choice.
type validityCase struct {
	name string
	req  *toolloop.Request
}

// validityCases returns, for every golden and edge transcript, each
// request a loop would send on the way (the messages before each assistant
// message), and the whole transcript (a user message added if it ends
// with the model's answer), with tool choice auto and, as a wrap-up turn
// sends it, none.
func validityCases(t *testing.T, own func(text, callID string) toolloop.Content) []validityCase {
	t.Helper()
	all := goldenTranscripts(t)
	for name, msgs := range edgeTranscripts(own) {
		require.NoError(t, looptest.Validate(msgs), name)
		all["edge_"+name] = msgs
	}
	var out []validityCase
	for name, msgs := range all {
		tools := toolsOf(msgs)
		var prefixes [][]toolloop.Message
		for k, m := range msgs {
			if m.Role == toolloop.RoleAssistant && k > 0 {
				prefixes = append(prefixes, msgs[:k])
			}
		}
		whole := slices.Clone(msgs)
		if whole[len(whole)-1].Role == toolloop.RoleAssistant {
			whole = append(whole, toolloop.UserMessage("Go on."))
		}
		prefixes = append(prefixes, whole)
		for i, p := range prefixes {
			for _, mode := range []toolloop.ToolChoiceMode{toolloop.ToolChoiceAuto, toolloop.ToolChoiceNone} {
				out = append(out, validityCase{
					name: fmt.Sprintf("%s/%d_of_%d/%s", name, i+1, len(prefixes), modeName(mode)),
					req:  &toolloop.Request{Messages: p, Tools: tools, ToolChoice: toolloop.ToolChoice{Mode: mode}},
				})
			}
		}
	}
	slices.SortFunc(out, func(a, b validityCase) int { return strings.Compare(a.name, b.name) })
	return out
}

func modeName(mode toolloop.ToolChoiceMode) string {
	if mode == toolloop.ToolChoiceAuto {
		return "auto"
	}
	return string(mode)
}

// toolsOf returns a spec for every tool the transcript's calls name.
func toolsOf(msgs []toolloop.Message) []toolloop.ToolSpec {
	var names []string
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	slices.Sort(names)
	specs := make([]toolloop.ToolSpec, len(names))
	for i, n := range names {
		specs[i] = toolloop.ToolSpec{Name: n, Description: "A tool.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	return specs
}

// body marshals SDK parameters and decodes them as the wire sees them.
func body(t *testing.T, params any) map[string]any {
	t.Helper()
	b, err := json.Marshal(params)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func items(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		m, _ := x.(map[string]any)
		out = append(out, m)
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// wireBody is what the SDK sends of params' results, in its JSON.
func wireBody(t *testing.T, m *Model, req *toolloop.Request) map[string]any {
	t.Helper()
	contents, config, err := m.params(req)
	require.NoError(t, err)
	return body(t, struct {
		Contents   []*genai.Content  `json:"contents"`
		Tools      []*genai.Tool     `json:"tools,omitempty"`
		ToolConfig *genai.ToolConfig `json:"toolConfig,omitempty"`
	}{contents, config.Tools, config.ToolConfig})
}

// checkContents reports what makes a Gemini body invalid: contents start
// with the user's, alternate and end with the user's; none is empty; a
// model content's function calls are answered by the next content, one
// functionResponse each, with the same IDs where IDs are sent (else the
// same names, in order), after any other parts of that content; no
// functionResponse answers anything else; a toolConfig goes with tools.
func checkContents(b map[string]any) error {
	if _, ok := b["toolConfig"]; ok && len(items(b["tools"])) == 0 {
		return fmt.Errorf("toolConfig without tools")
	}
	contents := items(b["contents"])
	if len(contents) == 0 || contents[0]["role"] != "user" || contents[len(contents)-1]["role"] != "user" {
		return fmt.Errorf("the contents do not start and end with the user's")
	}
	var calls []map[string]any // the calls of the last model content
	for i, c := range contents {
		if i > 0 && c["role"] == contents[i-1]["role"] {
			return fmt.Errorf("content %d: two %v contents in a row", i, c["role"])
		}
		parts := items(c["parts"])
		if len(parts) == 0 {
			return fmt.Errorf("content %d: no parts", i)
		}
		if c["role"] == "model" {
			calls = nil
			for _, p := range parts {
				if fc, ok := p["functionCall"].(map[string]any); ok {
					calls = append(calls, fc)
				}
			}
			continue
		}
		var responses []map[string]any
		for j, p := range parts {
			fr, ok := p["functionResponse"].(map[string]any)
			if ok {
				responses = append(responses, fr)
			} else if len(responses) > 0 {
				return fmt.Errorf("content %d part %d: a part after the function responses", i, j)
			}
		}
		if len(responses) != len(calls) {
			return fmt.Errorf("content %d: %d function responses for %d calls", i, len(responses), len(calls))
		}
		want := map[string]bool{}
		for k, fc := range calls {
			id, _ := fc["id"].(string)
			if id == "" {
				if responses[k]["name"] != fc["name"] || responses[k]["id"] != nil {
					return fmt.Errorf("content %d: response %d answers %v, not call %v", i, k, responses[k], fc)
				}
				continue
			}
			want[id] = true
		}
		for _, fr := range responses {
			if id, _ := fr["id"].(string); id != "" {
				if !want[id] {
					return fmt.Errorf("content %d: a response for %q, which the model content before did not call", i, id)
				}
				delete(want, id)
			}
		}
		if len(want) > 0 {
			return fmt.Errorf("content %d: calls %v have no response", i, keys(want))
		}
		calls = nil
	}
	return nil
}

// own makes a Gemini reasoning block: a thought summary, or the signature
// of a call.
func own(text, callID string) toolloop.Content {
	return toolloop.ReasoningContent(text, toolloop.Reasoning{Provider: ProviderName, Signature: "c2lnLQ==",
		CallID: callID, Summary: text != ""})
}

// TestTranscriptValidity maps every golden transcript, and the edge cases
// of long runs, through the request builder and checks the contents the
// API would get.
func TestTranscriptValidity(t *testing.T) {
	m := New(Config{APIKey: "unused"})
	for _, tc := range validityCases(t, own) {
		t.Run(tc.name, func(t *testing.T) {
			b := wireBody(t, m, tc.req)
			require.NoError(t, checkContents(b))
			raw, err := json.Marshal(b)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), "another provider's thoughts")
			assert.NotContains(t, string(raw), "Zm9yZWlnbg==")
			assert.NotContains(t, string(raw), "not shown")
			if tc.req.ToolChoice.Mode == toolloop.ToolChoiceNone {
				assert.Equal(t, map[string]any{"functionCallingConfig": map[string]any{"mode": "NONE"}}, b["toolConfig"])
			}
		})
	}
}

// partSequence lists a body's contents as role: part kinds (with the name
// or ID of function parts, the text of thoughts, a signature's presence).
func partSequence(b map[string]any) []string {
	var out []string
	for _, c := range items(b["contents"]) {
		var s []string
		for _, p := range items(c["parts"]) {
			var kind string
			switch {
			case p["functionCall"] != nil:
				kind = fmt.Sprint("call ", p["functionCall"].(map[string]any)["id"])
			case p["functionResponse"] != nil:
				kind = fmt.Sprint("response ", p["functionResponse"].(map[string]any)["id"])
			case p["thought"] == true:
				kind = fmt.Sprintf("thought %q", p["text"])
			case p["text"] != nil:
				kind = "text"
			default:
				kind = "other"
			}
			if p["thoughtSignature"] != nil {
				kind += " signed"
			}
			s = append(s, kind)
		}
		out = append(out, fmt.Sprintf("%v: %s", c["role"], strings.Join(s, ", ")))
	}
	return out
}

// TestLongRunShapes checks the contents the API gets for the shapes of
// long runs: compaction's user messages merged into one content, the
// wrap-up message before the responses it follows, thought summaries and
// signatures in their place.
func TestLongRunShapes(t *testing.T) {
	m := New(Config{APIKey: "unused"})
	edges := edgeTranscripts(own)
	tests := []struct {
		name string
		want []string
	}{
		{"compacted", []string{"user: text, text, text", "model: call c3", "user: response c3", "model: text"}},
		{"wrap_up", []string{"user: text", "model: call c1, call c2", "user: text, response c1, response c2"}},
		{"own_reasoning", []string{"user: text", `model: thought "Grep first." signed, text, call c1 signed`,
			"user: response c1", "model: call c2 signed", "user: response c2"}},
		{"foreign_reasoning", []string{"user: text", "model: text, call c1", "user: text, response c1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := edges[tt.name]
			assert.Equal(t, tt.want, partSequence(wireBody(t, m, &toolloop.Request{Messages: msgs, Tools: toolsOf(msgs)})))
		})
	}
}

// TestResponsesComeLast checks that a user content keeps its function
// responses together and after everything else: images of results, and a
// user message that came between the call and its last result.
func TestResponsesComeLast(t *testing.T) {
	m := New(Config{APIKey: "unused"})
	msgs := []toolloop.Message{
		toolloop.UserMessage("Find the bug."),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call("c1", "shot"), call("c2", "read")}},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c1", Name: "shot", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.ImageContent("image/png", []byte("png"))}}),
		toolloop.UserMessage("Hurry."),
		result("c2", "read", "package main"),
		wrapUp,
	}
	b := wireBody(t, m, &toolloop.Request{Messages: msgs, Tools: toolsOf(msgs)})
	require.NoError(t, checkContents(b))
	assert.Equal(t, []string{"user: text", "model: call c1, call c2",
		"user: text, other, text, text, response c1, response c2"}, partSequence(b))
}

// TestValidityChecksFail makes sure checkContents can fail.
func TestValidityChecksFail(t *testing.T) {
	u := `{"role":"user","parts":[{"text":"x"}]}`
	tests := []struct {
		name string
		body string
	}{
		{"starts with model", `{"contents":[{"role":"model","parts":[{"text":"x"}]},` + u + `]}`},
		{"ends with model", `{"contents":[` + u + `,{"role":"model","parts":[{"text":"x"}]}]}`},
		{"two user contents", `{"contents":[` + u + `,` + u + `]}`},
		{"empty", `{"contents":[{"role":"user","parts":[]}]}`},
		{"missing response", `{"contents":[` + u + `,{"role":"model","parts":[{"functionCall":{"id":"a","name":"f"}},{"functionCall":{"id":"b","name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"id":"a","name":"f"}}]}]}`},
		{"wrong id", `{"contents":[` + u + `,{"role":"model","parts":[{"functionCall":{"id":"a","name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"id":"b","name":"f"}}]}]}`},
		{"wrong name", `{"contents":[` + u + `,{"role":"model","parts":[{"functionCall":{"name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"name":"g"}}]}]}`},
		{"text after responses", `{"contents":[` + u + `,{"role":"model","parts":[{"functionCall":{"id":"a","name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"id":"a","name":"f"}},{"text":"x"}]}]}`},
		{"orphan", `{"contents":[{"role":"user","parts":[{"functionResponse":{"id":"a","name":"f"}}]}]}`},
		{"config without tools", `{"toolConfig":{},"contents":[` + u + `]}`},
	}
	for _, tt := range tests {
		var b map[string]any
		require.NoError(t, json.Unmarshal([]byte(tt.body), &b))
		assert.Error(t, checkContents(b), tt.name)
	}
}
