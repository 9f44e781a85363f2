package gemini

import (
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/providertest"
)

// BenchmarkParams measures mapping the conformance kit's 20-message
// transcript, each assistant turn with a thought summary and a signed
// function call, to the SDK's contents and configuration, and to the JSON
// of both (the SDK turns them into the request body the same way).
func BenchmarkParams(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused"})
	mapping := func(r *toolloop.Request) (any, error) {
		contents, config, err := m.params(r)
		return map[string]any{"contents": contents, "config": config}, err
	}
	providertest.Bench(b, mapping, func(req *toolloop.Request) {
		for i := range req.Messages {
			msg := &req.Messages[i]
			if msg.Role != toolloop.RoleAssistant {
				continue
			}
			msg.Content = []toolloop.Content{
				toolloop.ReasoningContent("**Reading the code**\n\nI should look at the next file before editing anything.",
					toolloop.Reasoning{Provider: "gemini", Summary: true}),
				toolloop.TextContent("Reading the next file."),
				toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "gemini", Signature: sigCall, CallID: msg.ToolCalls[0].ID}),
			}
		}
	})
}
