package openai

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

// checkChat reports what makes a Chat Completions body invalid: every
// assistant message with tool calls must be followed at once by one tool
// message per call, with the same IDs, and no tool message may answer
// anything else; an assistant message has content or tool calls; a
// tool_choice goes with tools. Stricter than OpenAI, for servers whose
// chat templates want turns to alternate: no two user messages in a row.
func checkChat(b map[string]any) error {
	if _, ok := b["tool_choice"]; ok && len(items(b["tools"])) == 0 {
		return fmt.Errorf("tool_choice without tools")
	}
	msgs := items(b["messages"])
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if i > 0 && m["role"] == "user" && msgs[i-1]["role"] == "user" {
			return fmt.Errorf("message %d: two user messages in a row", i)
		}
		switch m["role"] {
		case "tool":
			return fmt.Errorf("message %d: a tool message that follows no call", i)
		case "assistant":
			calls := items(m["tool_calls"])
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
					return fmt.Errorf("message %d: calls %v have no tool message right after their assistant message", i, keys(want))
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
	if _, ok := b["tool_choice"]; ok && len(items(b["tools"])) == 0 {
		return fmt.Errorf("tool_choice without tools")
	}
	pending := map[string]bool{}
	answering := false // outputs of the current calls have begun
	for i, it := range items(b["input"]) {
		modelTurn := it["type"] == "function_call" || it["type"] == "reasoning" || it["role"] == "assistant"
		if modelTurn && (answering || it["role"] == "assistant") && len(pending) > 0 {
			return fmt.Errorf("item %d: the model's output comes before the outputs for %v", i, keys(pending))
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
		return fmt.Errorf("calls %v have no output", keys(pending))
	}
	return nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestChatTranscriptValidity maps every golden transcript, and the edge
// cases of long runs, through the Chat Completions request builder and
// checks the body the API would get.
func TestChatTranscriptValidity(t *testing.T) {
	m := New(Config{APIKey: "unused", BaseURL: "http://chat.example/v1"})
	own := func(text, callID string) toolloop.Content {
		r := toolloop.Reasoning{Provider: chatReasoning, CallID: callID, Extra: m.serverExtra}
		if callID != "" {
			r.Signature = "c2lnLQ=="
		}
		return toolloop.ReasoningContent(text, r)
	}
	for _, tc := range validityCases(t, own) {
		t.Run(tc.name, func(t *testing.T) {
			p, err := m.params(tc.req)
			require.NoError(t, err)
			b := body(t, p)
			require.NoError(t, checkChat(b))
			raw, err := json.Marshal(b)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), "another provider's thoughts")
			assert.NotContains(t, string(raw), "Zm9yZWlnbg==")
			if tc.req.ToolChoice.Mode == toolloop.ToolChoiceNone {
				assert.Equal(t, "none", b["tool_choice"])
			}
		})
	}
}

// TestChatReasoningStaysWithItsCalls checks where the edge case's own
// reasoning goes: the text on the assistant message that made the calls,
// each call's signature on that call.
func TestChatReasoningStaysWithItsCalls(t *testing.T) {
	m := New(Config{APIKey: "unused", BaseURL: "http://chat.example/v1"})
	own := func(text, callID string) toolloop.Content {
		r := toolloop.Reasoning{Provider: chatReasoning, CallID: callID, Extra: m.serverExtra}
		if callID != "" {
			r.Signature = "c2lnLQ=="
		}
		return toolloop.ReasoningContent(text, r)
	}
	msgs := edgeTranscripts(own)["own_reasoning"]
	p, err := m.params(&toolloop.Request{Messages: msgs, Tools: toolsOf(msgs)})
	require.NoError(t, err)
	var got []string
	for _, msg := range items(body(t, p)["messages"]) {
		if msg["role"] != "assistant" {
			continue
		}
		for _, c := range items(msg["tool_calls"]) {
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
	m := NewResponses(Config{APIKey: "unused"})
	n := 0
	own := func(text, callID string) toolloop.Content {
		n++
		return ownReasoning(fmt.Sprintf("rs_%d", n), text, "enc", callID)
	}
	for _, tc := range validityCases(t, own) {
		t.Run(tc.name, func(t *testing.T) {
			p, err := m.params(tc.req)
			require.NoError(t, err)
			b := body(t, p)
			require.NoError(t, checkResponses(b))
			raw, err := json.Marshal(b)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), "another provider's thoughts")
			if tc.req.ToolChoice.Mode == toolloop.ToolChoiceNone {
				assert.Equal(t, "none", b["tool_choice"])
			}
			in := items(b["input"])
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
	m := NewResponses(Config{APIKey: "unused"})
	n := 0
	own := func(text, callID string) toolloop.Content {
		n++
		return ownReasoning(fmt.Sprintf("rs_%d", n), text, "enc", callID)
	}
	msgs := edgeTranscripts(own)["own_reasoning"]
	p, err := m.params(&toolloop.Request{Messages: msgs, Tools: toolsOf(msgs)})
	require.NoError(t, err)
	var got []string
	for _, it := range items(body(t, p)["input"]) {
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
	m := New(Config{APIKey: "unused"})
	shot := toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c1", Name: "shot", Status: toolloop.StatusOK,
		Content: []toolloop.Content{toolloop.ImageContent("image/png", []byte("png"))}})
	tests := []struct {
		name string
		msgs []toolloop.Message
		want []any // the content of each message after the system prompt
	}{{
		name: "compacted",
		msgs: edgeTranscripts(func(text, _ string) toolloop.Content {
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
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call("c1", "shot")}}, shot, wrapUp},
		want: []any{"Shoot.", nil, "[1 image(s) attached in the next user message]", []any{
			map[string]any{"type": "text", "text": "Image output of tool call c1 (shot):"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,cG5n"}},
			map[string]any{"type": "text", "text": wrapUp.Text()},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := append([]toolloop.Message{toolloop.SystemMessage("You are terse.")}, tt.msgs...)
			p, err := m.params(&toolloop.Request{Messages: msgs, Tools: toolsOf(msgs)})
			require.NoError(t, err)
			b := body(t, p)
			require.NoError(t, checkChat(b))
			var got []any
			for _, msg := range items(b["messages"])[1:] {
				got = append(got, msg["content"])
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
