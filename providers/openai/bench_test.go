package openai

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolloop/toolloop"
)

// benchRequest is a 20-message transcript: a system prompt, a question and
// nine tool rounds, with three tools.
func benchRequest() *toolloop.Request {
	msgs := []toolloop.Message{
		toolloop.SystemMessage("You are a coding agent. Read before you edit; run the tests after."),
		toolloop.UserMessage("Fix the divide-by-zero bug in src/math.go and make the tests pass."),
	}
	for i := range 9 {
		id := fmt.Sprintf("call_%02d", i)
		msgs = append(msgs,
			toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("Reading the next file.")},
				ToolCalls:  []toolloop.ToolCall{{ID: id, Name: "read_file", Arguments: json.RawMessage(`{"path":"src/math.go","offset":0,"limit":200}`)}},
				StopReason: toolloop.StopToolUse},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: id, Name: "read_file", Status: toolloop.StatusOK,
				Content: []toolloop.Content{toolloop.TextContent("package math\n\nfunc Divide(a, b int) int {\n\treturn a / b\n}\n")}}),
		)
	}
	return &toolloop.Request{Messages: msgs, Tools: []toolloop.ToolSpec{
		{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"]}`)},
		{Name: "edit_file", Description: "Edit a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string"},"new":{"type":"string"}},"required":["path","old","new"],"additionalProperties":false}`)},
		{Name: "run_tests", Description: "Run the tests.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
	}}
}

// BenchmarkParams measures mapping a 20-message transcript to the SDK's
// request, and to the JSON body the SDK sends.
func BenchmarkParams(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused", Strict: true})
	req := benchRequest()
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.params(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map+marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := m.params(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchReasoningRequest is benchRequest with the reasoning of a DeepSeek
// or Gemini session: each assistant turn has its reasoning text and a
// thought signature on its call, and every other turn also carries another
// provider's block, which is dropped.
func benchReasoningRequest(m *Model) *toolloop.Request {
	req := benchRequest()
	extra := m.extra("", "")
	for i := range req.Messages {
		msg := &req.Messages[i]
		if msg.Role != toolloop.RoleAssistant {
			continue
		}
		blocks := []toolloop.Content{
			toolloop.ReasoningContent("The file is read in pieces; the next piece holds Divide, where b may be zero.",
				toolloop.Reasoning{Provider: chatReasoning, Extra: extra}),
			toolloop.ReasoningContent("", toolloop.Reasoning{Provider: chatReasoning, Signature: "CiQB0e2Kb3vYq8Xw1mZ7cT2nR5wYpL9dHs4kF6jA0bN8eU1iQoMSWwHR7Ypm3V9s2lZk4cQ8xJ1nT5bW0aF7dG2hK6eL9rP3uS4vM8yB1zC5wN0tE7q",
				CallID: msg.ToolCalls[0].ID, Extra: extra}),
		}
		if i%4 == 2 {
			blocks = append(blocks, toolloop.ReasoningContent("Anthropic thinking", toolloop.Reasoning{Provider: "anthropic", Signature: "EqQBCkgIARABGAIiQL"}))
		}
		msg.Content = append(blocks, msg.Content...)
	}
	return req
}

// BenchmarkParamsReasoning measures mapping the 20-message transcript of
// BenchmarkParams with reasoning blocks in every assistant turn, and to
// the JSON body the SDK sends.
func BenchmarkParamsReasoning(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused", BaseURL: "https://api.deepseek.com", Strict: true})
	req := benchReasoningRequest(m)
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.params(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map+marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := m.params(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
