package openai

import (
	"fmt"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
	"github.com/toolloop/toolloop/providers/providertest"
)

// BenchmarkParams measures mapping the conformance kit's 20-message
// transcript to the SDK's request, and to the JSON body the SDK sends.
func BenchmarkParams(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused", Strict: true})
	providertest.Bench(b, func(r *toolloop.Request) (any, error) { return m.params(r) }, nil)
}

// BenchmarkParamsReasoning measures the same with the reasoning of a
// DeepSeek or Gemini session: each assistant turn has its reasoning text
// and a thought signature on its call, and every other turn also carries
// another provider's block, which is dropped.
func BenchmarkParamsReasoning(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused", BaseURL: "https://api.deepseek.com", Strict: true})
	extra := m.extra("", "")
	providertest.Bench(b, func(r *toolloop.Request) (any, error) { return m.params(r) }, func(req *toolloop.Request) {
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
	})
}

// BenchmarkResponsesParams measures mapping the transcript to the SDK's
// Responses request, each assistant turn with a reasoning item (summary
// and encrypted content) tied to its call, and to the JSON body the SDK
// sends.
func BenchmarkResponsesParams(b *testing.B) {
	m := mustNewResponses(b, Config{APIKey: "unused", Strict: true, ReasoningEffort: "medium", ReasoningSummary: "auto"})
	providertest.Bench(b, func(r *toolloop.Request) (any, error) { return m.params(r) }, func(req *toolloop.Request) {
		summary := "**Reading the code**\n\nThe divide-by-zero must be in Divide; read the file before editing it."
		extra := replay.JSON(b, reasoningExtra{Summary: []reasoningPart{{Type: "summary_text", Text: summary}}})
		for i := range req.Messages {
			msg := &req.Messages[i]
			if msg.Role != toolloop.RoleAssistant {
				continue
			}
			msg.Content = append([]toolloop.Content{toolloop.ReasoningContent(summary, toolloop.Reasoning{
				Provider: ResponsesProvider, ID: fmt.Sprintf("rs_%02d", i), Summary: true, CallID: msg.ToolCalls[0].ID, Extra: []byte(extra),
				Encrypted: "gAAAAABoR1x2c8lQ0pKz3nT7vWmY9sFh2Jd6eRq1UoXbA4iLgC5yNwE8tMZkPVr0HjSfDa7lOqB3uGxc9YnI2mTeW6vKzL1pRs4QdNh8JbFoC0gUiA5yXwE3tMlPVr7HjSkDa2lOqB9uGxc6YnI1mTeW4vKzL8pRs5QdNh3JbFoC7gUiA0yXwE==",
			})}, msg.Content...)
		}
	})
}
