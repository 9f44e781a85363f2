package openai

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
	text := func(s string) []toolloop.Content { return []toolloop.Content{toolloop.TextContent(s)} }
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
			Usage:      toolloop.Usage{InputTokens: 11, OutputTokens: 9},
		},
	}, {
		name:     "cached prompt tokens",
		response: "cached_usage.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text("Still here.")},
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 2048, OutputTokens: 4, CacheReadTokens: 1920},
		},
	}, {
		name:     "single tool call",
		response: "tool_call.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: "call_Kd8VvE0mQ3rZ9xYt2LpW7nHs", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}},
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 62, OutputTokens: 16},
		},
	}, {
		name:     "parallel tool calls",
		response: "parallel_tool_calls.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: "call_2fQm8YtR0cWv9LsK3pXe1NaB", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "call_7HgT3kLp0QzX8mVb2NsR4yWc", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`)},
			}},
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 62, OutputTokens: 48},
		},
	}, {
		name:     "malformed arguments kept verbatim",
		response: "malformed_args.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: "call_Zx81LmQ0pVb7Nc3Ks9Rt2Ye4", Name: "get_weather", Arguments: json.RawMessage(`{'city': 'Paris',`)},
			}},
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 62, OutputTokens: 12},
		},
	}, {
		name:     "refusal",
		response: "refusal.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text("I'm sorry, but I can't help with that request.")},
			StopReason: toolloop.StopRefusal,
			Usage:      toolloop.Usage{InputTokens: 25, OutputTokens: 11},
		},
	}, {
		name:     "content filter",
		response: "content_filter.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text(filteredText)},
			StopReason: toolloop.StopRefusal,
			Usage:      toolloop.Usage{InputTokens: 25},
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
			tt.want.Model = "gpt-4.1-2025-04-14"
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
	assert.Equal(t, "/chat/completions", reqs[0].URL.Path)
	assert.Equal(t, "Bearer test-key", reqs[0].Header.Get("Authorization"))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
