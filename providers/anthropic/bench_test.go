package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"
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
		id := fmt.Sprintf("toolu_%02d", i)
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
	m := mustNew(b, Config{APIKey: "unused"})
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

// benchThinkingRequest is benchRequest with extended thinking: each tool
// round starts with a signed thinking block, and every other one has a
// second, interleaved block tied to its call.
func benchThinkingRequest() *toolloop.Request {
	req := benchRequest()
	sig := strings.Repeat("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", 6)
	for i := range req.Messages {
		msg := &req.Messages[i]
		if msg.Role != toolloop.RoleAssistant {
			continue
		}
		thinking := []toolloop.Content{toolloop.ReasoningContent(
			"The test fails on a zero divisor. Read the function, then guard b == 0 and return an error.",
			toolloop.Reasoning{Provider: "anthropic", Signature: sig})}
		msg.Content = append(thinking, msg.Content...)
		if i%4 == 0 {
			msg.Content = append(msg.Content, toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "anthropic",
				Encrypted: sig, Redacted: true, CallID: msg.ToolCalls[0].ID}))
		}
	}
	return req
}

// BenchmarkParamsThinking measures mapping a 20-message transcript with
// reasoning blocks, and with prompt-cache breakpoints, to the SDK's
// request and to the JSON body the SDK sends.
func BenchmarkParamsThinking(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused", Thinking: Thinking{Budget: 4096},
		PromptCache: PromptCache{Tools: true, System: true, Turns: 2}})
	req := benchThinkingRequest()
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
