package providertest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolloop/toolloop"
)

// Bench measures mapping, a provider's turning of a request into what its
// API is sent, on a transcript of 20 messages: a system prompt, a question
// and nine tool rounds (an assistant message with a call, and its
// result), with three tools. edit, if not nil, changes the transcript
// first: to give each assistant message reasoning blocks of the
// provider's own, say. The sub-benchmark "map" calls mapping;
// "map+marshal" also encodes what it returns as JSON.
func Bench(b *testing.B, mapping func(*toolloop.Request) (any, error), edit func(*toolloop.Request)) {
	b.Helper()
	req := benchRequest()
	if edit != nil {
		edit(req)
	}
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := mapping(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map+marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := mapping(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchRequest is the transcript of Bench.
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
