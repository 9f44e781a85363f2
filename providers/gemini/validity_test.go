package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// wireBody is what the SDK sends of params' results, in its JSON.
func wireBody(t *testing.T, m *Model, req *toolloop.Request) map[string]any {
	t.Helper()
	contents, config, err := m.params(req)
	require.NoError(t, err)
	return replay.Body(t, struct {
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
	if _, ok := b["toolConfig"]; ok && len(replay.Items(b["tools"])) == 0 {
		return fmt.Errorf("toolConfig without tools")
	}
	contents := replay.Items(b["contents"])
	if len(contents) == 0 || contents[0]["role"] != "user" || contents[len(contents)-1]["role"] != "user" {
		return fmt.Errorf("the contents do not start and end with the user's")
	}
	var calls []map[string]any // the calls of the last model content
	for i, c := range contents {
		if i > 0 && c["role"] == contents[i-1]["role"] {
			return fmt.Errorf("content %d: two %v contents in a row", i, c["role"])
		}
		parts := replay.Items(c["parts"])
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
			return fmt.Errorf("content %d: calls %v have no response", i, replay.Keys(want))
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
	m := mustNew(t, Config{APIKey: "unused"})
	for _, tc := range replay.ValidityCases(t, own) {
		t.Run(tc.Name, func(t *testing.T) {
			b := wireBody(t, m, tc.Req)
			require.NoError(t, checkContents(b))
			raw, err := json.Marshal(b)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), "another provider's thoughts")
			assert.NotContains(t, string(raw), "Zm9yZWlnbg==")
			assert.NotContains(t, string(raw), "not shown")
			if tc.Req.ToolChoice.Mode == toolloop.ToolChoiceNone {
				assert.Equal(t, map[string]any{"functionCallingConfig": map[string]any{"mode": "NONE"}}, b["toolConfig"])
			}
		})
	}
}

// partSequence lists a body's contents as role: part kinds (with the name
// or ID of function parts, the text of thoughts, a signature's presence).
func partSequence(b map[string]any) []string {
	var out []string
	for _, c := range replay.Items(b["contents"]) {
		var s []string
		for _, p := range replay.Items(c["parts"]) {
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
	m := mustNew(t, Config{APIKey: "unused"})
	edges := replay.EdgeTranscripts(own)
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
			assert.Equal(t, tt.want, partSequence(wireBody(t, m, &toolloop.Request{Messages: msgs, Tools: replay.ToolsOf(msgs)})))
		})
	}
}

// TestResponsesComeLast checks that a user content keeps its function
// responses together and after everything else: images of results, and a
// user message that came between the call and its last result.
func TestResponsesComeLast(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	msgs := []toolloop.Message{
		toolloop.UserMessage("Find the bug."),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{replay.Call("c1", "shot"), replay.Call("c2", "read")}},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c1", Name: "shot", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.ImageContent("image/png", []byte("png"))}}),
		toolloop.UserMessage("Hurry."),
		replay.Result("c2", "read", "package main"),
		replay.WrapUp,
	}
	b := wireBody(t, m, &toolloop.Request{Messages: msgs, Tools: replay.ToolsOf(msgs)})
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
