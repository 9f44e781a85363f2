package anthropic

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

// checkMessages reports what makes a Messages API body invalid: the
// conversation starts with the user and alternates; no message is empty;
// every assistant message with tool_use blocks is followed by a user
// message that starts with one tool_result per call, with the same IDs,
// before any other block; no tool_result answers anything else; tool_use
// blocks and a tool_choice need tools.
func checkMessages(b map[string]any) error {
	tools := len(items(b["tools"]))
	if _, ok := b["tool_choice"]; ok && tools == 0 {
		return fmt.Errorf("tool_choice without tools")
	}
	msgs := items(b["messages"])
	if len(msgs) == 0 || msgs[0]["role"] != "user" {
		return fmt.Errorf("the conversation does not start with the user")
	}
	pending := map[string]bool{}
	for i, m := range msgs {
		if i > 0 && m["role"] == msgs[i-1]["role"] {
			return fmt.Errorf("message %d: two %v messages in a row", i, m["role"])
		}
		blocks := items(m["content"])
		if len(blocks) == 0 {
			return fmt.Errorf("message %d: no content", i)
		}
		answering := len(pending) > 0
		for j, bl := range blocks {
			switch bl["type"] {
			case "tool_use":
				if tools == 0 {
					return fmt.Errorf("message %d: tool_use without tools", i)
				}
				pending[bl["id"].(string)] = true
			case "tool_result":
				id, _ := bl["tool_use_id"].(string)
				if !answering || !pending[id] {
					return fmt.Errorf("message %d: a tool_result for %q, which the message before did not call", i, id)
				}
				delete(pending, id)
			default:
				if answering && len(pending) > 0 {
					return fmt.Errorf("message %d block %d: a %v block before the results for %v", i, j, bl["type"], keys(pending))
				}
			}
		}
		if answering && len(pending) > 0 {
			return fmt.Errorf("message %d: calls %v have no tool_result in the next message", i, keys(pending))
		}
	}
	return nil
}

// own makes an Anthropic thinking block, tied to a call or not.
func own(text, callID string) toolloop.Content {
	return toolloop.ReasoningContent(text, toolloop.Reasoning{Provider: providerName, Signature: "c2lnLQ==", CallID: callID})
}

// TestTranscriptValidity maps every golden transcript, and the edge cases
// of long runs, through the request builder and checks the body the API
// would get, with thinking off and on.
func TestTranscriptValidity(t *testing.T) {
	models := map[string]*Model{
		"plain":    New(Config{APIKey: "unused"}),
		"thinking": New(Config{APIKey: "unused", Thinking: Thinking{Budget: 2048}}),
	}
	cases := validityCases(t, own)
	for name, m := range models {
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				p, err := m.params(tc.req)
				require.NoError(t, err)
				b := body(t, p)
				require.NoError(t, checkMessages(b))
				raw, err := json.Marshal(b)
				require.NoError(t, err)
				assert.NotContains(t, string(raw), "another provider's thoughts")
				assert.NotContains(t, string(raw), "Zm9yZWlnbg==")
				if tc.req.ToolChoice.Mode == toolloop.ToolChoiceNone {
					assert.Equal(t, map[string]any{"type": "none"}, b["tool_choice"])
				}
			})
		}
	}
}

// blockSequence lists a body's messages as role: block types (with the
// call ID of tool blocks, the text of thinking blocks).
func blockSequence(b map[string]any) []string {
	var out []string
	for _, m := range items(b["messages"]) {
		var s []string
		for _, bl := range items(m["content"]) {
			switch bl["type"] {
			case "tool_use":
				s = append(s, fmt.Sprint("tool_use ", bl["id"]))
			case "tool_result":
				s = append(s, fmt.Sprint("tool_result ", bl["tool_use_id"]))
			case "thinking":
				s = append(s, fmt.Sprintf("thinking %q", bl["thinking"]))
			default:
				s = append(s, fmt.Sprint(bl["type"]))
			}
		}
		out = append(out, fmt.Sprintf("%v: %s", m["role"], strings.Join(s, ", ")))
	}
	return out
}

// TestLongRunShapes checks the messages the API gets for the shapes of
// long runs: compaction's user messages merged into one turn, the wrap-up
// message after the results of the last turn, thinking before its call.
func TestLongRunShapes(t *testing.T) {
	m := New(Config{APIKey: "unused"})
	edges := edgeTranscripts(own)
	tests := []struct {
		name string
		want []string
	}{
		{"compacted", []string{"user: text, text, text", "assistant: tool_use c3", "user: tool_result c3", "assistant: text"}},
		{"wrap_up", []string{"user: text", "assistant: tool_use c1, tool_use c2", "user: tool_result c1, tool_result c2, text"}},
		{"own_reasoning", []string{"user: text", `assistant: thinking "Grep first.", text, thinking "", tool_use c1`,
			"user: tool_result c1", `assistant: thinking "Then read.", tool_use c2`, "user: tool_result c2"}},
		{"foreign_reasoning", []string{"user: text", "assistant: text, tool_use c1", "user: tool_result c1, text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := edges[tt.name]
			p, err := m.params(&toolloop.Request{Messages: msgs, Tools: toolsOf(msgs)})
			require.NoError(t, err)
			assert.Equal(t, tt.want, blockSequence(body(t, p)))
		})
	}
}

// TestResultsGoFirst checks that a tool result goes before other user
// content of its turn, even when a user message came between the call and
// its result.
func TestResultsGoFirst(t *testing.T) {
	m := New(Config{APIKey: "unused"})
	msgs := []toolloop.Message{
		toolloop.UserMessage("Find the bug."),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call("c1", "grep"), call("c2", "read")}},
		result("c1", "grep", "main.go:12"),
		toolloop.UserMessage("Hurry."),
		result("c2", "read", "package main"),
	}
	p, err := m.params(&toolloop.Request{Messages: msgs, Tools: toolsOf(msgs)})
	require.NoError(t, err)
	b := body(t, p)
	require.NoError(t, checkMessages(b))
	assert.Equal(t, []string{"user: text", "assistant: tool_use c1, tool_use c2", "user: tool_result c1, tool_result c2, text"}, blockSequence(b))
}

// TestValidityChecksFail makes sure checkMessages can fail.
func TestValidityChecksFail(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"starts with assistant", `{"messages":[{"role":"assistant","content":[{"type":"text"}]}]}`},
		{"two user messages", `{"messages":[{"role":"user","content":[{"type":"text"}]},{"role":"user","content":[{"type":"text"}]}]}`},
		{"empty", `{"messages":[{"role":"user","content":[]}]}`},
		{"missing result", `{"tools":[{}],"messages":[{"role":"user","content":[{"type":"text"}]},{"role":"assistant","content":[{"type":"tool_use","id":"a"},{"type":"tool_use","id":"b"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}]}`},
		{"text before result", `{"tools":[{}],"messages":[{"role":"user","content":[{"type":"text"}]},{"role":"assistant","content":[{"type":"tool_use","id":"a"}]},{"role":"user","content":[{"type":"text"},{"type":"tool_result","tool_use_id":"a"}]}]}`},
		{"orphan", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}]}`},
		{"tool_use without tools", `{"messages":[{"role":"user","content":[{"type":"text"}]},{"role":"assistant","content":[{"type":"tool_use","id":"a"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}]}`},
		{"choice without tools", `{"tool_choice":{"type":"none"},"messages":[{"role":"user","content":[{"type":"text"}]}]}`},
	}
	for _, tt := range tests {
		var b map[string]any
		require.NoError(t, json.Unmarshal([]byte(tt.body), &b))
		assert.Error(t, checkMessages(b), tt.name)
	}
}
