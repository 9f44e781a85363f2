package anthropic

import (
	"strings"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/providertest"
)

// BenchmarkParams measures mapping the conformance kit's 20-message
// transcript to the SDK's request, and to the JSON body the SDK sends.
func BenchmarkParams(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused"})
	providertest.Bench(b, func(r *toolloop.Request) (any, error) { return m.params(r) }, nil)
}

// BenchmarkParamsThinking measures the same with extended thinking, each
// tool round starting with a signed thinking block and every other one
// with a second, interleaved block tied to its call, and with prompt-cache
// breakpoints.
func BenchmarkParamsThinking(b *testing.B) {
	m := mustNew(b, Config{APIKey: "unused", Thinking: Thinking{Budget: 4096},
		PromptCache: PromptCache{Tools: true, System: true, Turns: 2}})
	sig := strings.Repeat("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", 6)
	providertest.Bench(b, func(r *toolloop.Request) (any, error) { return m.params(r) }, func(req *toolloop.Request) {
		for i := range req.Messages {
			msg := &req.Messages[i]
			if msg.Role != toolloop.RoleAssistant {
				continue
			}
			msg.Content = append([]toolloop.Content{toolloop.ReasoningContent(
				"The test fails on a zero divisor. Read the function, then guard b == 0 and return an error.",
				toolloop.Reasoning{Provider: "anthropic", Signature: sig})}, msg.Content...)
			if i%4 == 0 {
				msg.Content = append(msg.Content, toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "anthropic",
					Encrypted: sig, Redacted: true, CallID: msg.ToolCalls[0].ID}))
			}
		}
	})
}
