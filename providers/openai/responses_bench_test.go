package openai

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolloop/toolloop"
)

// benchResponsesRequest is a 20-message transcript of a reasoning model: a
// system prompt, a question and nine tool rounds, each assistant turn with
// a reasoning block (summary and encrypted content) tied to its call, and
// three tools.
func benchResponsesRequest() *toolloop.Request {
	req := benchRequest()
	for i := range req.Messages {
		msg := &req.Messages[i]
		if msg.Role != toolloop.RoleAssistant {
			continue
		}
		id := msg.ToolCalls[0].ID
		summary := "**Reading the code**\n\nThe divide-by-zero must be in Divide; read the file before editing it."
		extra, _ := json.Marshal(reasoningExtra{Summary: []reasoningPart{{Type: "summary_text", Text: summary}}})
		msg.Content = append([]toolloop.Content{toolloop.ReasoningContent(summary, toolloop.Reasoning{
			Provider: ResponsesProvider, ID: fmt.Sprintf("rs_%02d", i), Summary: true, CallID: id, Extra: extra,
			Encrypted: "gAAAAABoR1x2c8lQ0pKz3nT7vWmY9sFh2Jd6eRq1UoXbA4iLgC5yNwE8tMZkPVr0HjSfDa7lOqB3uGxc9YnI2mTeW6vKzL1pRs4QdNh8JbFoC0gUiA5yXwE3tMlPVr7HjSkDa2lOqB9uGxc6YnI1mTeW4vKzL8pRs5QdNh3JbFoC7gUiA0yXwE==",
		})}, msg.Content...)
	}
	return req
}

// BenchmarkResponsesParams measures mapping a 20-message transcript with
// reasoning blocks to the SDK's Responses request, and to the JSON body
// the SDK sends.
func BenchmarkResponsesParams(b *testing.B) {
	m := mustNewResponses(b, Config{APIKey: "unused", Strict: true, ReasoningEffort: "medium", ReasoningSummary: "auto"})
	req := benchResponsesRequest()
	if len(req.Messages) != 20 {
		b.Fatalf("the transcript has %d messages, want 20", len(req.Messages))
	}
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
