package openai

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestUsage checks the token counts of answers whose totals say whether
// completion_tokens holds every output token: where prompt + completion
// falls short of the total, the difference is output (reasoning) tokens,
// and where the total is prompt + completion it is counted once.
func TestUsage(t *testing.T) {
	tests := []struct {
		response string
		want     toolloop.Usage
	}{
		// OpenAI: total = prompt + completion; reasoning is inside.
		{"usage_cache_write.json", toolloop.Usage{InputTokens: 4096, OutputTokens: 212, CacheReadTokens: 2048, CacheWriteTokens: 1920, ReasoningTokens: 192}},
		// xAI: total = prompt + completion + reasoning.
		{"xai_reasoning.json", toolloop.Usage{InputTokens: 32, OutputTokens: 9 + 316, CacheReadTokens: 6, ReasoningTokens: 316}},
		// Gemini's endpoint: the same.
		{"gemini_tool_call.json", toolloop.Usage{InputTokens: 58, OutputTokens: 15 + 98, ReasoningTokens: 98}},
		// Gemini's endpoint with no reasoning_tokens: total - prompt is 74,
		// completion 12; the 62 missing are its thinking.
		{"gemini_plain.json", toolloop.Usage{InputTokens: 9, OutputTokens: 74, ReasoningTokens: 62}},
		// Mistral: total = prompt + completion, no reasoning count.
		{"mistral_thinking.json", toolloop.Usage{InputTokens: 142, OutputTokens: 159}},
		// No total: completion as it is.
		{"usage_no_total.json", toolloop.Usage{InputTokens: 20, OutputTokens: 8}},
		// DeepSeek: reasoning inside; cache hits also as prompt_cache_hit_tokens.
		{"deepseek_tool_call.json", toolloop.Usage{InputTokens: 312, OutputTokens: 96, CacheReadTokens: 256, ReasoningTokens: 71}},
		{"cached_usage.json", toolloop.Usage{InputTokens: 2048, OutputTokens: 4, CacheReadTokens: 1920}},
	}
	for _, tt := range tests {
		t.Run(tt.response, func(t *testing.T) {
			srv := serve(t, replay.Step{Response: tt.response})
			resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), replay.WeatherRequest())
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Usage)
		})
	}
}
