package openai

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// checkChat reports what makes a Chat Completions body invalid: every
// assistant message with tool calls must be followed at once by one tool
// message per call, with the same IDs, and no tool message may answer
// anything else; an assistant message has content or tool calls; a
// tool_choice goes with tools. Stricter than OpenAI, for servers whose
// chat templates want turns to alternate: no two user messages in a row.
func checkChat(b map[string]any) error {
	if _, ok := b["tool_choice"]; ok && len(replay.Items(b["tools"])) == 0 {
		return fmt.Errorf("tool_choice without tools")
	}
	msgs := replay.Items(b["messages"])
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if i > 0 && m["role"] == "user" && msgs[i-1]["role"] == "user" {
			return fmt.Errorf("message %d: two user messages in a row", i)
		}
		switch m["role"] {
		case "tool":
			return fmt.Errorf("message %d: a tool message that follows no call", i)
		case "assistant":
			calls := replay.Items(m["tool_calls"])
			if len(calls) == 0 && m["content"] == nil {
				return fmt.Errorf("message %d: an assistant message with neither content nor tool calls", i)
			}
			want := map[string]bool{}
			for _, c := range calls {
				want[c["id"].(string)] = true
			}
			for len(want) > 0 {
				i++
				if i >= len(msgs) || msgs[i]["role"] != "tool" {
					return fmt.Errorf("message %d: calls %v have no tool message right after their assistant message", i, replay.Keys(want))
				}
				id, _ := msgs[i]["tool_call_id"].(string)
				if !want[id] {
					return fmt.Errorf("message %d: tool message for %q, which the assistant message before did not call", i, id)
				}
				delete(want, id)
			}
		}
	}
	return nil
}

// checkResponses reports what makes a Responses body invalid: every
// function_call has exactly one function_call_output with its call ID,
// after it and before the next turn of the model's (an assistant message
// or a function call after the outputs began); no output answers nothing;
// a tool_choice goes with tools.
func checkResponses(b map[string]any) error {
	if _, ok := b["tool_choice"]; ok && len(replay.Items(b["tools"])) == 0 {
		return fmt.Errorf("tool_choice without tools")
	}
	pending := map[string]bool{}
	answering := false // outputs of the current calls have begun
	for i, it := range replay.Items(b["input"]) {
		modelTurn := it["type"] == "function_call" || it["type"] == "reasoning" || it["role"] == "assistant"
		if modelTurn && (answering || it["role"] == "assistant") && len(pending) > 0 {
			return fmt.Errorf("item %d: the model's output comes before the outputs for %v", i, replay.Keys(pending))
		}
		if modelTurn {
			answering = false
		}
		switch it["type"] {
		case "function_call":
			pending[it["call_id"].(string)] = true
		case "function_call_output":
			id, _ := it["call_id"].(string)
			if !pending[id] {
				return fmt.Errorf("item %d: an output for %q, which no pending call has", i, id)
			}
			delete(pending, id)
			answering = true
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("calls %v have no output", replay.Keys(pending))
	}
	return nil
}

// TestChatTranscriptValidity maps every golden transcript, and the edge
// cases of long runs, through the Chat Completions request builder and
// checks the body the API would get.
func TestChatTranscriptValidity(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused", BaseURL: "http://chat.example/v1"})
	own := func(text, callID string) toolloop.Content {
		r := toolloop.Reasoning{Provider: chatReasoning, CallID: callID, Extra: m.serverExtra}
		if callID != "" {
			r.Signature = "c2lnLQ=="
		}
		return toolloop.ReasoningContent(text, r)
	}
	for _, tc := range replay.ValidityCases(t, own) {
		t.Run(tc.Name, func(t *testing.T) {
			p, err := m.params(tc.Req)
			require.NoError(t, err)
			b := replay.Body(t, p)
			require.NoError(t, checkChat(b))
			raw, err := json.Marshal(b)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), "another provider's thoughts")
			assert.NotContains(t, string(raw), "Zm9yZWlnbg==")
			if tc.Req.ToolChoice.Mode == toolloop.ToolChoiceNone {
				assert.Equal(t, "none", b["tool_choice"])
			}
		})
	}
}

// TestChatReasoningStaysWithItsCalls checks where the edge case's own
// reasoning goes: the text on the assistant message that made the calls,
// each call's signature on that call.
func TestChatReasoningStaysWithItsCalls(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused", BaseURL: "http://chat.example/v1"})
	own := func(text, callID string) toolloop.Content {
		r := toolloop.Reasoning{Provider: chatReasoning, CallID: callID, Extra: m.serverExtra}
		if callID != "" {
			r.Signature = "c2lnLQ=="
		}
		return toolloop.ReasoningContent(text, r)
	}
	msgs := replay.EdgeTranscripts(own)["own_reasoning"]
	p, err := m.params(&toolloop.Request{Messages: msgs, Tools: replay.ToolsOf(msgs)})
	require.NoError(t, err)
	var got []string
	for _, msg := range replay.Items(replay.Body(t, p)["messages"]) {
		if msg["role"] != "assistant" {
			continue
		}
		for _, c := range replay.Items(msg["tool_calls"]) {
			extra, _ := c["extra_content"].(map[string]any)
			google, _ := extra["google"].(map[string]any)
			got = append(got, fmt.Sprintf("%v %s sig=%v", msg["reasoning_content"], c["id"], google["thought_signature"]))
		}
	}
	assert.Equal(t, []string{"Grep first. c1 sig=c2lnLQ==", "<nil> c2 sig=c2lnLQ=="}, got,
		"a block tied to a call sends only its signature; text without a call goes on the message")
}

// TestResponsesTranscriptValidity is TestChatTranscriptValidity for the
// Responses API, whose own reasoning items must come just before their
// function calls.
func TestResponsesTranscriptValidity(t *testing.T) {
	m := mustNewResponses(t, Config{APIKey: "unused"})
	n := 0
	own := func(text, callID string) toolloop.Content {
		n++
		return ownReasoning(fmt.Sprintf("rs_%d", n), text, "enc", callID)
	}
	for _, tc := range replay.ValidityCases(t, own) {
		t.Run(tc.Name, func(t *testing.T) {
			p, err := m.params(tc.Req)
			require.NoError(t, err)
			b := replay.Body(t, p)
			require.NoError(t, checkResponses(b))
			raw, err := json.Marshal(b)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), "another provider's thoughts")
			if tc.Req.ToolChoice.Mode == toolloop.ToolChoiceNone {
				assert.Equal(t, "none", b["tool_choice"])
			}
			in := replay.Items(b["input"])
			for i, it := range in {
				if it["type"] != "reasoning" {
					continue
				}
				require.Less(t, i+1, len(in), "a reasoning item ends the input")
				next := in[i+1]
				assert.True(t, next["type"] == "function_call" || next["role"] == "assistant" || next["type"] == "reasoning",
					"reasoning item %d is followed by %v, not the model's own output", i, next)
			}
		})
	}
}

// TestResponsesReasoningStaysWithItsCalls checks the order of the edge
// case's items: the reasoning without a call among the text, each block
// tied to a call just before that call.
func TestResponsesReasoningStaysWithItsCalls(t *testing.T) {
	m := mustNewResponses(t, Config{APIKey: "unused"})
	n := 0
	own := func(text, callID string) toolloop.Content {
		n++
		return ownReasoning(fmt.Sprintf("rs_%d", n), text, "enc", callID)
	}
	msgs := replay.EdgeTranscripts(own)["own_reasoning"]
	p, err := m.params(&toolloop.Request{Messages: msgs, Tools: replay.ToolsOf(msgs)})
	require.NoError(t, err)
	var got []string
	for _, it := range replay.Items(replay.Body(t, p)["input"]) {
		switch {
		case it["role"] != nil:
			got = append(got, fmt.Sprint(it["role"]))
		case it["type"] == "reasoning":
			got = append(got, fmt.Sprint(it["id"]))
		default:
			got = append(got, fmt.Sprint(it["type"], " ", it["call_id"]))
		}
	}
	assert.Equal(t, []string{"user", "rs_1", "assistant", "rs_2", "function_call c1", "function_call_output c1",
		"rs_3", "function_call c2", "function_call_output c2"}, got)
}

// TestValidityChecksFail makes sure the checks above can fail.
func TestValidityChecksFail(t *testing.T) {
	chat := []struct {
		name string
		body string
	}{
		{"missing result", `{"messages":[{"role":"assistant","tool_calls":[{"id":"a"},{"id":"b"}]},{"role":"tool","tool_call_id":"a"}]}`},
		{"user between", `{"messages":[{"role":"assistant","tool_calls":[{"id":"a"}]},{"role":"user","content":"x"},{"role":"tool","tool_call_id":"a"}]}`},
		{"wrong id", `{"messages":[{"role":"assistant","tool_calls":[{"id":"a"}]},{"role":"tool","tool_call_id":"b"}]}`},
		{"orphan", `{"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"b"}]}`},
		{"empty assistant", `{"messages":[{"role":"assistant"}]}`},
		{"choice without tools", `{"tool_choice":"none","messages":[]}`},
		{"two user messages", `{"messages":[{"role":"user","content":"x"},{"role":"user","content":"y"}]}`},
	}
	for _, tt := range chat {
		var b map[string]any
		require.NoError(t, json.Unmarshal([]byte(tt.body), &b))
		assert.Error(t, checkChat(b), "chat: "+tt.name)
	}
	responses := []struct {
		name string
		body string
	}{
		{"missing output", `{"input":[{"type":"function_call","call_id":"a"}]}`},
		{"answer before output", `{"input":[{"type":"function_call","call_id":"a"},{"role":"assistant","content":"x"},{"type":"function_call_output","call_id":"a"}]}`},
		{"next call before all outputs", `{"input":[{"type":"function_call","call_id":"a"},{"type":"function_call","call_id":"b"},{"type":"function_call_output","call_id":"a"},{"type":"function_call","call_id":"c"},{"type":"function_call_output","call_id":"b"},{"type":"function_call_output","call_id":"c"}]}`},
		{"orphan", `{"input":[{"type":"function_call_output","call_id":"a"}]}`},
		{"choice without tools", `{"tool_choice":"none","input":[]}`},
	}
	for _, tt := range responses {
		var b map[string]any
		require.NoError(t, json.Unmarshal([]byte(tt.body), &b))
		assert.Error(t, checkResponses(b), "responses: "+tt.name)
	}
}

// TestChatJoinsUserMessages checks that consecutive user messages go out
// as one: plain texts joined by a blank line, anything else as parts, the
// images of results and the wrap-up message after them in one message.
func TestChatJoinsUserMessages(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	shot := toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c1", Name: "shot", Status: toolloop.StatusOK,
		Content: []toolloop.Content{toolloop.ImageContent("image/png", []byte("png"))}})
	tests := []struct {
		name string
		msgs []toolloop.Message
		want []any // the content of each message after the system prompt
	}{{
		name: "compacted",
		msgs: replay.EdgeTranscripts(func(text, _ string) toolloop.Content {
			return toolloop.ReasoningContent(text, toolloop.Reasoning{Provider: "elsewhere"})
		})["compacted"][1:4],
		want: []any{"Find the bug.\n\n[Summary of the earlier part of this conversation, compacted to save context]\n\nTwo files read.\n\nRemember: answer in one sentence."},
	}, {
		name: "empty message",
		msgs: []toolloop.Message{toolloop.UserMessage(""), toolloop.UserMessage("Find the bug."), {Role: toolloop.RoleUser}},
		want: []any{"Find the bug."},
	}, {
		name: "text and parts",
		msgs: []toolloop.Message{toolloop.UserMessage("Look:"), {Role: toolloop.RoleUser, Content: []toolloop.Content{
			toolloop.ImageContent("image/png", []byte("png")), toolloop.TextContent("What is it?")}}},
		want: []any{[]any{
			map[string]any{"type": "text", "text": "Look:"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,cG5n"}},
			map[string]any{"type": "text", "text": "What is it?"},
		}},
	}, {
		name: "wrap-up after images of results",
		msgs: []toolloop.Message{toolloop.UserMessage("Shoot."),
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{replay.Call("c1", "shot")}}, shot, replay.WrapUp},
		want: []any{"Shoot.", nil, "[1 image(s) attached in the next user message]", []any{
			map[string]any{"type": "text", "text": "Image output of tool call c1 (shot):"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,cG5n"}},
			map[string]any{"type": "text", "text": replay.WrapUp.Text()},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := append([]toolloop.Message{toolloop.SystemMessage("You are terse.")}, tt.msgs...)
			p, err := m.params(&toolloop.Request{Messages: msgs, Tools: replay.ToolsOf(msgs)})
			require.NoError(t, err)
			b := replay.Body(t, p)
			require.NoError(t, checkChat(b))
			var got []any
			for _, msg := range replay.Items(b["messages"])[1:] {
				got = append(got, msg["content"])
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
