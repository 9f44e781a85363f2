package gemini

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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

// The thought signatures of the recorded responses.
const (
	sigCall     = "CikB0e2KNqWmgYiivf/uqfIKHf01phQJFXCDCtktkD1aWmxAF/s1yBSRh5xHWAridN0vBg0hNeql8d/Y5nEbXUj3"
	sigParallel = "CiQB0e2KUPqRd7p15fTxqnAa+xufE5QUCcm0tUUkDGOziP0JXn1DJLW9NJH41mm+sKKk4N38KHj9ZN7nWdAnxpZR"
	sigText     = "CiwB0e2KIqgMogsFqanD1Ve+nmK44N944zMqtnf2Bh29btPWVjt5izfZZ0HeriY9CFfhvLfsJZ+p03JKgL9wYaxG"
	sigGemini3  = "EjQKMgHRnYpv9BU91Qnohg5VcOgDl+wEnd2VMkxUEzloNbxx47+S7kzkGpa6sSlJ06tfCfKzxbRw3HQB995L4/JtLN4O"
	sigStream   = "CioB0e2KsOa0YyY3+EnBERIZFwhMKu64yk7ohGQnmbl4CFfZtDxkwupk8vpH27Qh1sK/l7SepX249BBkO3HGwMiT"
)

func text(s string) toolloop.Content { return toolloop.TextContent(s) }

// sig is a reasoning block holding a thought signature, tied to a call
// when callID is set.
func sig(s, callID string) toolloop.Content {
	return toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "gemini", Signature: s, CallID: callID})
}

// thought is a reasoning block holding a thought summary.
func thought(s, signature string) toolloop.Content {
	return toolloop.ReasoningContent(s, toolloop.Reasoning{Provider: "gemini", Summary: true, Signature: signature})
}

func assistant(cs []toolloop.Content, calls ...toolloop.ToolCall) toolloop.Message {
	return toolloop.Message{Role: toolloop.RoleAssistant, Content: cs, ToolCalls: calls}
}

func TestGenerate(t *testing.T) {
	tests := []struct {
		name     string
		response string
		want     toolloop.Response
	}{{
		name:     "plain answer, thinking counted as output",
		response: "plain.json",
		want: toolloop.Response{
			Message:    assistant([]toolloop.Content{text("Hello! How can I help you today?")}),
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 12, OutputTokens: 9 + 25, ReasoningTokens: 25},
			Model:      "gemini-2.5-flash",
		},
	}, {
		name:     "cached and tool-use prompt tokens",
		response: "cached_usage.json",
		want: toolloop.Response{
			Message:    assistant([]toolloop.Content{text("Still here.")}),
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 4521 + 35, OutputTokens: 4, CacheReadTokens: 3000},
			Model:      "gemini-2.5-flash",
		},
	}, {
		name:     "function call without ID, signed",
		response: "tool_call.json",
		want: toolloop.Response{
			Message: assistant([]toolloop.Content{sig(sigCall, "gemini-call-Jb3YaO6yBZqNz7IPp_KZ2AE-1")},
				toolloop.ToolCall{ID: "gemini-call-Jb3YaO6yBZqNz7IPp_KZ2AE-1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}),
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 62, OutputTokens: 15 + 48, ReasoningTokens: 48},
			Model:      "gemini-2.5-flash",
		},
	}, {
		name:     "parallel function calls, the first signed",
		response: "parallel_tool_calls.json",
		want: toolloop.Response{
			Message: assistant([]toolloop.Content{sig(sigParallel, "gemini-call-sQ3YaKLfHtOpz7IP6sDYoA4-1")},
				toolloop.ToolCall{ID: "gemini-call-sQ3YaKLfHtOpz7IP6sDYoA4-1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				toolloop.ToolCall{ID: "gemini-call-sQ3YaKLfHtOpz7IP6sDYoA4-2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`)}),
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 62, OutputTokens: 30 + 112, ReasoningTokens: 112},
			Model:      "gemini-2.5-flash",
		},
	}, {
		name:     "Gemini 3 function calls with IDs after text",
		response: "gemini3_call.json",
		want: toolloop.Response{
			Message: assistant([]toolloop.Content{text("Let me check."), sig(sigGemini3, "2o1lmhvq")},
				toolloop.ToolCall{ID: "2o1lmhvq", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				toolloop.ToolCall{ID: "x7kq0c3e", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`)}),
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 70, OutputTokens: 34 + 160, ReasoningTokens: 160},
			Model:      "gemini-3-pro-preview",
		},
	}, {
		name:     "thought summary and a signed text part",
		response: "thoughts.json",
		want: toolloop.Response{
			Message: assistant([]toolloop.Content{
				thought("**Assessing the question**\n\nThe user wants the weather in Paris. I already know it from the tool: 18 °C and light rain.", ""),
				text("It is 18 °C in Paris, with light rain."),
				sig(sigText, ""),
			}),
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 95, OutputTokens: 12 + 71, ReasoningTokens: 71},
			Model:      "gemini-2.5-pro",
		},
	}, {
		name:     "answer withheld by the safety filters",
		response: "safety.json",
		want: toolloop.Response{
			Message:    assistant([]toolloop.Content{text("The answer was withheld by the provider's content filters (finish reason: SAFETY).")}),
			StopReason: toolloop.StopRefusal,
			Usage:      toolloop.Usage{InputTokens: 30},
			Model:      "gemini-2.5-flash",
		},
	}, {
		name:     "prompt blocked",
		response: "prompt_blocked.json",
		want: toolloop.Response{
			Message:    assistant([]toolloop.Content{text("The prompt was blocked by the provider's content filters (block reason: PROHIBITED_CONTENT).")}),
			StopReason: toolloop.StopRefusal,
			Usage:      toolloop.Usage{InputTokens: 17},
			Model:      "gemini-2.5-flash",
		},
	}, {
		name:     "max tokens",
		response: "max_tokens.json",
		want: toolloop.Response{
			Message:    assistant([]toolloop.Content{text("The history of Paris begins with the Parisii, a Celtic tribe who settled on the")}),
			StopReason: toolloop.StopLength,
			Usage:      toolloop.Usage{InputTokens: 14, OutputTokens: 16 + 48, ReasoningTokens: 48},
			Model:      "gemini-2.5-flash",
		},
	}, {
		name:     "malformed function call",
		response: "malformed_call.json",
		want: toolloop.Response{
			// The SDK drops finishMessage for the Gemini API (it keeps it
			// for Vertex AI), so the bad call is not quoted.
			Message:    assistant([]toolloop.Content{text("The model's function call was rejected by the API (finish reason: MALFORMED_FUNCTION_CALL).")}),
			StopReason: toolloop.StopError,
			Usage:      toolloop.Usage{InputTokens: 62, OutputTokens: 85, ReasoningTokens: 85},
			Model:      "gemini-2.5-flash",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: "generate", Response: tt.response})
			got, err := modelFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
			require.NoError(t, err)
			assert.JSONEq(t, mustJSON(t, tt.want), mustJSON(t, got))
			assertTotal(t, tt.response, got.Usage)
		})
	}
}

// assertTotal checks that usage adds up to the totalTokenCount of the
// recorded response.
func assertTotal(t *testing.T, response string, u toolloop.Usage) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "responses", response))
	require.NoError(t, err)
	var body struct {
		UsageMetadata struct {
			TotalTokenCount int64 `json:"totalTokenCount"`
		} `json:"usageMetadata"`
	}
	require.NoError(t, json.Unmarshal(b, &body))
	assert.Equal(t, body.UsageMetadata.TotalTokenCount, u.InputTokens+u.OutputTokens, "input and output add up to totalTokenCount")
}

func TestGenerateSendsKeyAndPath(t *testing.T) {
	srv := serve(t, replay.Step{Response: "plain.json"})
	_, err := modelFor(t, srv, Config{Model: "gemini-2.5-pro"}).Generate(context.Background(), weatherRequest())
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1beta/models/gemini-2.5-pro:generateContent", reqs[0].URL.Path)
	assert.Equal(t, "test-key", reqs[0].Header.Get("X-Goog-Api-Key"))
}

func TestGenerateIDsAreStable(t *testing.T) {
	srv := serve(t, replay.Step{Response: "parallel_tool_calls.json"}, replay.Step{Response: "parallel_tool_calls.json"})
	m := modelFor(t, srv, Config{})
	a, err := m.Generate(context.Background(), weatherRequest())
	require.NoError(t, err)
	b, err := m.Generate(context.Background(), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, a.Message.ToolCalls, b.Message.ToolCalls, "the same response gives the same IDs")
	assert.NotEqual(t, a.Message.ToolCalls[0].ID, a.Message.ToolCalls[1].ID)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
