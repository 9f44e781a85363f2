package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// geminiSig is the thought signature of the Gemini recordings.
const geminiSig = "CiQB0e2Kb3vYq8Xw1mZ7cT2nR5wYpL9dHs4kF6jA0bN8eU1iQoMSWwHR7Ypm3V9s2lZk4cQ8xJ1nT5bW0aF7dG2hK6eL9rP3uS4vM8yB1zC5wN0tE7q"

// extraFor is the Extra a model talking to srv writes, with field if set.
func extraFor(t *testing.T, srv *replay.Server, field string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(chatExtra{Server: serverOf(srv.URL), Field: field})
	require.NoError(t, err)
	return b
}

// collectAll drains a stream: the final response, the text and the
// reasoning deltas.
func collectAll(t *testing.T, m *Model, req *toolloop.Request) (resp *toolloop.Response, text, reasoning []string) {
	t.Helper()
	for ch, err := range m.Stream(context.Background(), req) {
		require.NoError(t, err)
		if ch.Text != "" {
			text = append(text, ch.Text)
		}
		if ch.Reasoning != "" {
			require.Empty(t, text, "reasoning comes before the answer")
			reasoning = append(reasoning, ch.Reasoning)
		}
		if ch.Response != nil {
			resp = ch.Response
		}
	}
	require.NotNil(t, resp)
	return resp, text, reasoning
}

// sentMessages decodes the messages of a request body.
func sentMessages(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var req struct {
		Messages []map[string]any `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	return req.Messages
}

// TestAgentLoopDeepSeek runs two DeepSeek reasoner turns: the second
// request sends the first turn's reasoning back as reasoning_content, as
// DeepSeek requires within a tool-call turn.
func TestAgentLoopDeepSeek(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "deepseek_turn1", Response: "deepseek_turn1.sse"},
		replay.Step{Golden: "deepseek_turn2", Response: "deepseek_turn2.sse"},
	)
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{
		Model:   modelFor(t, srv, Config{Model: "deepseek-reasoner", ReasoningEffort: "high"}),
		Tools:   replay.WeatherTools(),
		OnEvent: rec.Record,
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant. Use the tools."),
		toolloop.UserMessage("What's the weather in Paris?"),
	})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, 2, res.Turns)
	assert.Equal(t, "It's 18 °C in Paris, with light rain.", res.Messages[len(res.Messages)-1].Text())
	assert.Equal(t, toolloop.Usage{InputTokens: 187 + 279, OutputTokens: 64 + 41, CacheReadTokens: 128 + 256, ReasoningTokens: 38 + 27}, res.Usage)
	assert.Len(t, rec.Of(toolloop.EventModelReasoningDelta), 5+4)

	bodies := srv.Bodies()
	require.Len(t, bodies, 2)
	msgs := sentMessages(t, bodies[1])
	require.Len(t, msgs, 4)
	assert.Equal(t, "The user wants the weather in Paris. I have get_weather, which takes a city name. I'll call it.", msgs[2]["reasoning_content"])
}

// TestAgentLoopGemini runs two turns on Gemini's OpenAI-compatible
// endpoint: the second request sends the thought signature back on the
// tool call it came with, and nothing on the unsigned parallel call.
func TestAgentLoopGemini(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "gemini_turn1", Response: "gemini_turn1.sse"},
		replay.Step{Golden: "gemini_turn2", Response: "gemini_turn2.sse"},
	)
	loop := &toolloop.AgentLoop{Model: modelFor(t, srv, Config{Model: "gemini-2.5-flash"}), Tools: replay.WeatherTools()}
	res, err := loop.Run(context.Background(), []toolloop.Message{
		toolloop.UserMessage("Compare the weather in Paris and Tokyo."),
	})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "Paris: 18 °C and light rain. Tokyo: 24 °C and clear.", res.Messages[len(res.Messages)-1].Text())
	assert.Equal(t, toolloop.Usage{InputTokens: 71 + 152, OutputTokens: 30 + 113 + 17, ReasoningTokens: 113}, res.Usage)

	msgs := sentMessages(t, srv.Bodies()[1])
	require.Len(t, msgs, 4)
	calls := msgs[1]["tool_calls"].([]any)
	require.Len(t, calls, 2)
	assert.Equal(t, map[string]any{"google": map[string]any{"thought_signature": geminiSig}}, calls[0].(map[string]any)["extra_content"])
	assert.NotContains(t, calls[1], "extra_content")
	assert.NotContains(t, msgs[1], "reasoning_content")
}

// TestReasoningSentBack checks what a transcript's reasoning blocks send:
// this server's go back where they came from; another provider's, or
// another server's, send nothing at all.
func TestReasoningSentBack(t *testing.T) {
	calls := []toolloop.ToolCall{
		{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{ID: "call_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`)},
	}
	transcript := func(assistant ...toolloop.Content) *toolloop.Request {
		req := replay.WeatherRequest()
		req.Messages = append(req.Messages,
			toolloop.Message{Role: toolloop.RoleAssistant, Content: append(assistant, toolloop.TextContent("Checking.")), ToolCalls: calls, StopReason: toolloop.StopToolUse},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_1", Name: "get_weather", Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("18 °C")}}),
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_2", Name: "get_weather", Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("24 °C")}}),
		)
		return req
	}
	other, err := json.Marshal(chatExtra{Server: "api.deepseek.com"})
	require.NoError(t, err)
	tests := []struct {
		name   string
		golden string
		blocks func(srv *replay.Server) []toolloop.Content
	}{{
		name:   "another provider's and another server's reasoning send nothing",
		golden: "reasoning_foreign",
		blocks: func(*replay.Server) []toolloop.Content {
			return []toolloop.Content{
				toolloop.ReasoningContent("Anthropic thinking", toolloop.Reasoning{Provider: "anthropic", Signature: "EqQBCkgIARABGAIiQL"}),
				toolloop.ReasoningContent("Gemini's own thought", toolloop.Reasoning{Provider: "gemini", Signature: "CiQB0e2K", CallID: "call_1"}),
				toolloop.ReasoningContent("DeepSeek reasoning", toolloop.Reasoning{Provider: "openai.chat", Extra: other}),
				toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "openai.chat", Signature: "c2lnbmF0dXJl", CallID: "call_1", Extra: other}),
				toolloop.ReasoningContent("no server recorded", toolloop.Reasoning{Provider: "openai.chat"}),
			}
		},
	}, {
		name:   "this server's reasoning goes back in its place",
		golden: "reasoning_own",
		blocks: func(srv *replay.Server) []toolloop.Content {
			return []toolloop.Content{
				toolloop.ReasoningContent("Anthropic thinking", toolloop.Reasoning{Provider: "anthropic", Signature: "EqQBCkgIARABGAIiQL"}),
				toolloop.ReasoningContent("Two cities, ", toolloop.Reasoning{Provider: "openai.chat", Extra: extraFor(t, srv, "reasoning")}),
				toolloop.ReasoningContent("two calls.", toolloop.Reasoning{Provider: "openai.chat", Signature: "bWVzc2FnZQ==", Extra: extraFor(t, srv, "reasoning")}),
				toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "openai.chat", Signature: "Y2FsbF8y", CallID: "call_2", Extra: extraFor(t, srv, "")}),
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: tt.golden, Response: "plain.json"})
			_, err := modelFor(t, srv, Config{}).Generate(context.Background(), transcript(tt.blocks(srv)...))
			require.NoError(t, err)
			body := string(srv.Bodies()[0])
			for _, s := range []string{"Anthropic thinking", "EqQBCkgIARABGAIiQL", "Gemini's own thought", "DeepSeek reasoning", "c2lnbmF0dXJl", "no server recorded", "not shown"} {
				assert.NotContains(t, body, s)
			}
		})
	}
}

func TestServerOf(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	for base, want := range map[string]string{
		"":                             "api.openai.com/v1",
		"https://api.deepseek.com":     "api.deepseek.com",
		"https://API.DeepSeek.com/v1/": "api.deepseek.com/v1",
		"https://generativelanguage.googleapis.com/v1beta/openai/": "generativelanguage.googleapis.com/v1beta/openai",
		"http://localhost:8000/v1":                                 "localhost:8000/v1",
	} {
		assert.Equal(t, want, serverOf(base), base)
	}
	t.Setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
	assert.Equal(t, "localhost:11434/v1", serverOf(""))
}
