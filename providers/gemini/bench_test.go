package gemini

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolloop/toolloop"
)

// benchRequest is a 20-message transcript: a system prompt, a question and
// nine tool rounds, each with a thought summary and a signed function
// call, with three tools.
func benchRequest() *toolloop.Request {
	msgs := []toolloop.Message{
		toolloop.SystemMessage("You are a coding agent. Read before you edit; run the tests after."),
		toolloop.UserMessage("Fix the divide-by-zero bug in src/math.go and make the tests pass."),
	}
	for i := range 9 {
		id := fmt.Sprintf("gemini-call-Jb3YaO6yBZqNz7IPp_KZ2AE%02d-1", i)
		msgs = append(msgs,
			toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
				toolloop.ReasoningContent("**Reading the code**\n\nI should look at the next file before editing anything.",
					toolloop.Reasoning{Provider: "gemini", Summary: true}),
				toolloop.TextContent("Reading the next file."),
				toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "gemini", Signature: sigCall, CallID: id}),
			},
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

// BenchmarkParams measures mapping a 20-message transcript with reasoning
// blocks to the SDK's contents and configuration, and to the JSON of
// both (the SDK turns them into the request body the same way).
func BenchmarkParams(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused"})
	req := benchRequest()
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := m.params(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map+marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			contents, config, err := m.params(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(map[string]any{"contents": contents, "config": config}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
