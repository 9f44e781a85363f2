package anthropic

import (
	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/toolloop/toolloop"
)

// providerName is the Provider of the reasoning blocks this package
// writes, and the only one whose blocks it sends back.
const providerName = "anthropic"

// thinking sets the thinking and effort parameters of p.
func (m *Model) thinking(p *sdk.MessageNewParams) {
	t := m.cfg.Thinking
	switch {
	case t.Budget > 0:
		p.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{
			BudgetTokens: t.Budget, Display: sdk.ThinkingConfigEnabledDisplay(t.Display)}}
	case t.Adaptive:
		p.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{
			Display: sdk.ThinkingConfigAdaptiveDisplay(t.Display)}}
	}
	if m.cfg.Effort != "" {
		p.OutputConfig.Effort = sdk.OutputConfigEffort(m.cfg.Effort)
	}
}

// reasoningContent maps a thinking or redacted_thinking block of an
// answer to a reasoning block. ok is false for any other block.
func reasoningContent(b *sdk.ContentBlockUnion) (c toolloop.Content, ok bool) {
	switch b.Type {
	case "thinking":
		return toolloop.ReasoningContent(b.Thinking, toolloop.Reasoning{Provider: providerName, Signature: b.Signature}), true
	case "redacted_thinking":
		return toolloop.ReasoningContent("", toolloop.Reasoning{Provider: providerName, Encrypted: b.Data, Redacted: true}), true
	}
	return toolloop.Content{}, false
}

// reasoningBlock maps one of our reasoning blocks back to the block it
// came from, exactly. ok is false for a thinking block without a
// signature (one cut off mid-stream), which the API would refuse.
func reasoningBlock(c toolloop.Content) (b sdk.ContentBlockParamUnion, ok bool) {
	r := c.Reasoning
	switch {
	case r.Redacted || (r.Encrypted != "" && r.Signature == ""):
		return sdk.ContentBlockParamUnion{OfRedactedThinking: &sdk.RedactedThinkingBlockParam{Data: r.Encrypted}}, true
	case r.Signature != "":
		return sdk.ContentBlockParamUnion{OfThinking: &sdk.ThinkingBlockParam{Signature: r.Signature, Thinking: c.Text}}, true
	}
	return b, false
}
