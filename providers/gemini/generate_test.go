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

func TestGenerateIDsAreStable(t *testing.T) {
	srv := serve(t, replay.Step{Response: "parallel_tool_calls.json"}, replay.Step{Response: "parallel_tool_calls.json"})
	m := modelFor(t, srv, Config{})
	a, err := m.Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	b, err := m.Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	assert.Equal(t, a.Message.ToolCalls, b.Message.ToolCalls, "the same response gives the same IDs")
	assert.NotEqual(t, a.Message.ToolCalls[0].ID, a.Message.ToolCalls[1].ID)
}

// TestMalformedCall checks that a function call the API rejected ends
// the turn with an error stop and says why. (The SDK drops finishMessage
// for the Gemini API, which keeps it for Vertex AI, so the bad call is not
// quoted.)
func TestMalformedCall(t *testing.T) {
	srv := serve(t, replay.Step{Response: "malformed_call.json"})
	got, err := modelFor(t, srv, Config{}).Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopError, got.StopReason)
	assert.Equal(t, []toolloop.Content{text("The model's function call was rejected by the API (finish reason: MALFORMED_FUNCTION_CALL).")}, got.Message.Content)
	assert.Empty(t, got.Message.ToolCalls)
}

// TestUsageAddsUpToTotal checks that input and output tokens add up to
// the totalTokenCount of each recorded response: thinking and tool-use
// prompt tokens are counted, once.
func TestUsageAddsUpToTotal(t *testing.T) {
	for _, name := range []string{"plain.json", "cached_usage.json", "tool_call.json", "parallel_tool_calls.json", "gemini3_call.json",
		"thoughts.json", "safety.json", "prompt_blocked.json", "max_tokens.json", "malformed_call.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "responses", name))
		require.NoError(t, err)
		var body struct {
			UsageMetadata struct {
				TotalTokenCount int64 `json:"totalTokenCount"`
			} `json:"usageMetadata"`
		}
		require.NoError(t, json.Unmarshal(b, &body))
		srv := serve(t, replay.Step{Response: name})
		got, err := modelFor(t, srv, Config{}).Generate(context.Background(), replay.WeatherRequest())
		require.NoError(t, err)
		assert.Equal(t, body.UsageMetadata.TotalTokenCount, got.Usage.InputTokens+got.Usage.OutputTokens, name)
	}
}
