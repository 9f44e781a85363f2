package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// rapi names a file of testdata/responses_api for a replay step, whose
// responses are read from testdata/responses.
func rapi(name string) string { return "../responses_api/" + name }

// responsesFor returns a Responses model talking to srv with a fake key;
// cfg sets the rest.
func responsesFor(t testing.TB, srv *replay.Server, cfg Config) *ResponsesModel {
	t.Helper()
	cfg.BaseURL = srv.URL
	cfg.APIKey = "test-key"
	cfg.HTTPClient = srv.Client()
	if cfg.Model == "" {
		cfg.Model = "gpt-4.1"
	}
	return mustNewResponses(t, cfg)
}

// encrypted1 is the encrypted content of the reasoning in
// reasoning_tool_call.json and reasoning_turn1.sse.
const encrypted1 = "gAAAAABoR1x2c8lQ0pKz3nT7vWmY9sFh2Jd6eRq1UoXbA4iLgC5yNwE8tMZkPVr0HjSfDa7lOqB3uGxc9YnI2mTeW6vKzL1pRs4QdNh8JbFoC0gUiA5yXwE3tMlPVr7HjSkDa2lOqB9uGxc6YnI1mTeW4vKzL8pRs5QdNh3JbFoC7gUiA0yXwE=="

func TestResponsesGenerate(t *testing.T) {
	text := func(s string) []toolloop.Content { return []toolloop.Content{toolloop.TextContent(s)} }
	const summary1 = "**Checking the weather**\n\nThe user wants the weather in Paris. I should call get_weather with city Paris."
	const summary2 = "**Planning the answer**\n\nOnce I have the result I'll report temperature and sky."
	tests := []struct {
		name     string
		response string
		model    string
		want     toolloop.Response
	}{{
		name:     "plain answer",
		response: "text.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text("Hello! How can I help you today?")},
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 36, OutputTokens: 9},
		},
	}, {
		name:     "cached prompt tokens",
		response: "cached_usage.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text("Still here.")},
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 2048, OutputTokens: 4, CacheReadTokens: 1920, CacheWriteTokens: 128},
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
		name:     "reasoning with encrypted content, then a call",
		response: "reasoning_tool_call.json",
		model:    "gpt-5-mini-2025-08-07",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant,
				Content: []toolloop.Content{toolloop.ReasoningContent(summary1+"\n\n"+summary2, toolloop.Reasoning{
					Provider: ResponsesProvider, ID: "rs_68a1c1e1a2b38190e5f60718293a4b5c", Encrypted: encrypted1, Summary: true,
					CallID: "call_Wq4Ht7Ln2Pb9Xs1Kd6Vr3Zm0",
					Extra: mustRaw(t, map[string]any{"summary": []map[string]string{
						{"type": "summary_text", "text": summary1}, {"type": "summary_text", "text": summary2}}}),
				})},
				ToolCalls: []toolloop.ToolCall{{ID: "call_Wq4Ht7Ln2Pb9Xs1Kd6Vr3Zm0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 120, OutputTokens: 212, CacheReadTokens: 64, ReasoningTokens: 192},
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
		name:     "incomplete: max output tokens",
		response: "incomplete_max_tokens.json",
		want: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: text("The history of Paris begins with the Parisii, a Celtic tribe who settled on the")},
			StopReason: toolloop.StopLength,
			Usage:      toolloop.Usage{InputTokens: 14, OutputTokens: 16},
		},
	}, {
		name:     "incomplete: content filter",
		response: "incomplete_content_filter.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
				toolloop.TextContent("Here is how the"), toolloop.TextContent(filteredNote)}},
			StopReason: toolloop.StopRefusal,
			Usage:      toolloop.Usage{InputTokens: 25, OutputTokens: 4},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: "responses_generate", Response: rapi(tt.response)})
			got, err := responsesFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
			require.NoError(t, err)
			tt.want.Model = "gpt-4.1-2025-04-14"
			if tt.model != "" {
				tt.want.Model = tt.model
			}
			assert.JSONEq(t, mustJSON(t, tt.want), mustJSON(t, got))
		})
	}
}

func TestResponsesGenerateSendsKeyAndPath(t *testing.T) {
	srv := serve(t, replay.Step{Response: rapi("text.json")})
	_, err := responsesFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/responses", reqs[0].URL.Path)
	assert.Equal(t, "Bearer test-key", reqs[0].Header.Get("Authorization"))
}

func TestResponsesFailed(t *testing.T) {
	srv := serve(t, replay.Step{Response: rapi("failed.json")})
	_, err := responsesFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "server_error", pe.Type)
	assert.Equal(t, http.StatusOK, pe.StatusCode)
	assert.NotEmpty(t, pe.Message)
}

func TestResponsesAPIErrors(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		response string
		retries  int
		kind     error
		typ      string
		requests int
	}{
		{"context length", http.StatusBadRequest, "error_context_length.json", 0, providers.ErrContextLength, "context_length_exceeded", 1},
		{"rate limit after retries", http.StatusTooManyRequests, "error_429.json", 1, providers.ErrRateLimit, "rate_limit_exceeded", 2},
		{"bad key", http.StatusUnauthorized, "error_auth.json", 0, providers.ErrAuth, "invalid_api_key", 1},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				steps := make([]replay.Step, tt.requests)
				for i := range steps {
					steps[i] = replay.Step{Status: tt.status, Response: rapi(tt.response), Header: map[string]string{"Retry-After-Ms": "1"}}
				}
				srv := serve(t, steps...)
				m := responsesFor(t, srv, Config{MaxRetries: tt.retries})
				var err error
				if stream {
					_, _, err = collectResponses(m, weatherRequest())
				} else {
					_, err = m.Generate(context.Background(), weatherRequest())
				}
				require.ErrorIs(t, err, tt.kind)
				var pe *providers.Error
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, tt.typ, pe.Type)
				assert.Equal(t, tt.status, pe.StatusCode)
				var ae *oai.Error
				assert.True(t, errors.As(err, &ae), "unwraps to the SDK's error")
			})
		}
	}
}

// TestResponsesWithoutEncryptedReasoning: a model that cannot return
// encrypted reasoning says so about the include parameter; the request is
// sent again without it, and so are the next ones.
func TestResponsesWithoutEncryptedReasoning(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "responses_generate", Status: http.StatusBadRequest, Response: rapi("error_include.json")},
		replay.Step{Golden: "responses_no_include", Response: rapi("text.json")},
		replay.Step{Golden: "responses_no_include_stream", Response: rapi("stream_text.sse")},
	)
	m := responsesFor(t, srv, Config{})
	resp, err := m.Generate(context.Background(), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, "Hello! How can I help you today?", resp.Message.Text())
	resp, _, err = collectResponses(m, weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
}

func TestResponsesStreamWithoutEncryptedReasoning(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "responses_stream", Status: http.StatusBadRequest, Response: rapi("error_include.json")},
		replay.Step{Golden: "responses_no_include_stream", Response: rapi("stream_text.sse")},
	)
	resp, _, err := collectResponses(responsesFor(t, srv, Config{}), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
}

func mustRaw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	return json.RawMessage(mustJSON(t, v))
}
