package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// weatherRequest is the request of most scenarios: one question, one tool.
func weatherRequest() *toolloop.Request {
	return &toolloop.Request{
		Messages: []toolloop.Message{
			toolloop.SystemMessage("You are a weather assistant."),
			toolloop.UserMessage("What's the weather in Paris?"),
		},
		Tools: []toolloop.ToolSpec{weatherTool},
	}
}

var weatherTool = toolloop.ToolSpec{
	Name:        "get_weather",
	Description: "Get the current weather for a city.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"],"additionalProperties":false}`),
}

func TestGenerate(t *testing.T) {
	text := func(s ...string) []toolloop.Content {
		var cs []toolloop.Content
		for _, x := range s {
			cs = append(cs, toolloop.TextContent(x))
		}
		return cs
	}
	tests := []struct {
		name     string
		response string
		want     toolloop.Response
	}{{
		name:     "plain answer",
		response: "plain.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text("Hello! How can I help you today?")},
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 12, OutputTokens: 12},
		},
	}, {
		name:     "cache reads and writes",
		response: "cached_usage.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text("Still here.")},
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 21 + 1500 + 3000, OutputTokens: 5, CacheReadTokens: 3000, CacheWriteTokens: 1500},
		},
	}, {
		name:     "single tool call",
		response: "tool_call.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: text("I'll check the weather in Paris."), ToolCalls: []toolloop.ToolCall{
				{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}},
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 380, OutputTokens: 62},
		},
	}, {
		name:     "parallel tool calls",
		response: "parallel_tool_calls.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "toolu_01V2y2gK45rBnl3uOUsO8Vq7", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`)},
			}},
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 380, OutputTokens: 96},
		},
	}, {
		name:     "refusal",
		response: "refusal.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant,
				Content: text("This request was declined because it asks for help attacking systems the user does not own.")},
			StopReason: toolloop.StopRefusal,
			Usage:      toolloop.Usage{InputTokens: 30, OutputTokens: 3},
		},
	}, {
		name:     "max tokens",
		response: "max_tokens.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text("The history of Paris begins with the Parisii, a Celtic tribe who settled on the")},
			StopReason: toolloop.StopLength,
			Usage:      toolloop.Usage{InputTokens: 14, OutputTokens: 16},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: "generate", Response: tt.response})
			got, err := modelFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
			require.NoError(t, err)
			tt.want.Model = "claude-sonnet-4-5-20250929"
			assert.JSONEq(t, mustJSON(t, tt.want), mustJSON(t, got))
		})
	}
}

func TestGenerateSendsKeyAndPath(t *testing.T) {
	srv := serve(t, replay.Step{Response: "plain.json"})
	_, err := modelFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1/messages", reqs[0].URL.Path)
	assert.Equal(t, "test-key", reqs[0].Header.Get("X-Api-Key"))
	assert.NotEmpty(t, reqs[0].Header.Get("Anthropic-Version"))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
