package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// checkMessages reports what makes a Messages API body invalid: the
// conversation starts with the user and alternates; no message is empty;
// every assistant message with tool_use blocks is followed by a user
// message that starts with one tool_result per call, with the same IDs,
// before any other block; no tool_result answers anything else; tool_use
// blocks and a tool_choice need tools.
func checkMessages(b map[string]any) error {
	tools := len(replay.Items(b["tools"]))
	if _, ok := b["tool_choice"]; ok && tools == 0 {
		return fmt.Errorf("tool_choice without tools")
	}
	msgs := replay.Items(b["messages"])
	if len(msgs) == 0 || msgs[0]["role"] != "user" {
		return fmt.Errorf("the conversation does not start with the user")
	}
	pending := map[string]bool{}
	for i, m := range msgs {
		if i > 0 && m["role"] == msgs[i-1]["role"] {
			return fmt.Errorf("message %d: two %v messages in a row", i, m["role"])
		}
		blocks := replay.Items(m["content"])
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
					return fmt.Errorf("message %d block %d: a %v block before the results for %v", i, j, bl["type"], replay.Keys(pending))
				}
			}
		}
		if answering && len(pending) > 0 {
			return fmt.Errorf("message %d: calls %v have no tool_result in the next message", i, replay.Keys(pending))
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
		"plain":    mustNew(t, Config{APIKey: "unused"}),
		"thinking": mustNew(t, Config{APIKey: "unused", Thinking: Thinking{Budget: 2048}}),
	}
	cases := replay.ValidityCases(t, own)
	for name, m := range models {
		for _, tc := range cases {
			t.Run(name+"/"+tc.Name, func(t *testing.T) {
				p, err := m.params(tc.Req)
				require.NoError(t, err)
				b := replay.Body(t, p)
				require.NoError(t, checkMessages(b))
				raw, err := json.Marshal(b)
				require.NoError(t, err)
				assert.NotContains(t, string(raw), "another provider's thoughts")
				assert.NotContains(t, string(raw), "Zm9yZWlnbg==")
				if tc.Req.ToolChoice.Mode == toolloop.ToolChoiceNone {
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
	for _, m := range replay.Items(b["messages"]) {
		var s []string
		for _, bl := range replay.Items(m["content"]) {
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
	m := mustNew(t, Config{APIKey: "unused"})
	edges := replay.EdgeTranscripts(own)
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
			p, err := m.params(&toolloop.Request{Messages: msgs, Tools: replay.ToolsOf(msgs)})
			require.NoError(t, err)
			assert.Equal(t, tt.want, blockSequence(replay.Body(t, p)))
		})
	}
}

// TestResultsGoFirst checks that a tool result goes before other user
// content of its turn, even when a user message came between the call and
// its result.
func TestResultsGoFirst(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	msgs := []toolloop.Message{
		toolloop.UserMessage("Find the bug."),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{replay.Call("c1", "grep"), replay.Call("c2", "read")}},
		replay.Result("c1", "grep", "main.go:12"),
		toolloop.UserMessage("Hurry."),
		replay.Result("c2", "read", "package main"),
	}
	p, err := m.params(&toolloop.Request{Messages: msgs, Tools: replay.ToolsOf(msgs)})
	require.NoError(t, err)
	b := replay.Body(t, p)
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
