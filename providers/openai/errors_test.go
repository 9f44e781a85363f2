package openai

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

func TestRateLimitIsRetried(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "generate", Status: http.StatusTooManyRequests, Response: "error_429.json",
			Header: map[string]string{"Retry-After-Ms": "10", "Retry-After": "1"}},
		replay.Step{Golden: "generate", Response: "plain.json"},
	)
	resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, "Hello! How can I help you today?", resp.Message.Text())
	assert.Len(t, srv.Requests(), 2)
}

func TestStreamRateLimitIsRetried(t *testing.T) {
	srv := serve(t,
		replay.Step{Status: http.StatusTooManyRequests, Response: "error_429.json", Header: map[string]string{"Retry-After-Ms": "10"}},
		replay.Step{Response: "stream_text.sse"},
	)
	resp, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
	assert.Len(t, srv.Requests(), 2)
}

func TestAPIErrors(t *testing.T) {
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
		{"context length from vLLM", http.StatusBadRequest, "error_context_length_vllm.json", 0, providers.ErrContextLength, "BadRequestError", 1},
		{"context length in vLLM's older envelope", http.StatusBadRequest, "error_context_length_vllm_legacy.json", 0, providers.ErrContextLength, "BadRequestError", 1},
		{"request over the rate limit, not retried", http.StatusTooManyRequests, "error_429_too_large.json", 2, providers.ErrContextLength, "rate_limit_exceeded", 1},
		{"rate limit after retries", http.StatusTooManyRequests, "error_429.json", 1, providers.ErrRateLimit, "rate_limit_exceeded", 2},
		{"overloaded, no retries", http.StatusServiceUnavailable, "error_503.json", -1, providers.ErrOverloaded, "", 1},
		{"bad key", http.StatusUnauthorized, "error_auth.json", 0, providers.ErrAuth, "invalid_api_key", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := make([]replay.Step, tt.requests)
			for i := range steps {
				steps[i] = replay.Step{Status: tt.status, Response: tt.response, Header: map[string]string{"Retry-After-Ms": "1"}}
			}
			srv := serve(t, steps...)
			_, err := modelFor(t, srv, Config{MaxRetries: tt.retries}).Generate(context.Background(), weatherRequest())
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.kind)
			var pe *providers.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.status, pe.StatusCode)
			assert.Equal(t, "openai", pe.Provider)
			assert.Equal(t, tt.typ, pe.Type)
			assert.NotEmpty(t, pe.Message)
			var sdkErr *oai.Error
			require.ErrorAs(t, err, &sdkErr)
			assert.Equal(t, tt.status, sdkErr.StatusCode)
			for _, other := range []error{providers.ErrContextLength, providers.ErrRateLimit, providers.ErrOverloaded, providers.ErrAuth} {
				if other != tt.kind {
					assert.NotErrorIs(t, err, other)
				}
			}
			assert.Len(t, srv.Requests(), tt.requests)
			var he *wire.HTTPError
			require.ErrorAs(t, err, &he, "the error names the request")
			assert.Equal(t, http.MethodPost, he.Method)
			assert.Equal(t, srv.URL+"/chat/completions", he.URL)
			assert.Empty(t, he.Hint)
		})
	}
}

func TestContextLengthThroughTheLoop(t *testing.T) {
	srv := serve(t, replay.Step{Status: http.StatusBadRequest, Response: "error_context_length.json"})
	loop := &toolloop.AgentLoop{Model: modelFor(t, srv, Config{})}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("a very long transcript")})
	require.ErrorIs(t, err, providers.ErrContextLength)
	assert.Equal(t, toolloop.StopError, res.StopReason)
}

func TestOtherErrorsPassThrough(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv := serve(t)
	_, err := modelFor(t, srv, Config{}).Generate(ctx, weatherRequest())
	require.ErrorIs(t, err, context.Canceled)
	var pe *providers.Error
	assert.False(t, errors.As(err, &pe))
}

// TestRequestOverRateLimit checks that a 429 saying the request alone is
// over the limit reaches the caller at once, streaming or not: the server
// sees one request, whatever the retries allowed.
func TestRequestOverRateLimit(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := serve(t, replay.Step{Status: http.StatusTooManyRequests, Response: "error_429_too_large.json",
			Header: map[string]string{"Retry-After-Ms": "1"}})
		m := modelFor(t, srv, Config{MaxRetries: 3})
		var err error
		if stream {
			_, _, err = collect(m, weatherRequest())
		} else {
			_, err = m.Generate(context.Background(), weatherRequest())
		}
		require.ErrorIs(t, err, providers.ErrContextLength)
		assert.NotErrorIs(t, err, providers.ErrRateLimit)
		assert.Len(t, srv.Requests(), 1, "stream=%v", stream)
	}
	// The Responses API's model shares the client, and so the rule.
	for _, stream := range []bool{false, true} {
		srv := serve(t, replay.Step{Status: http.StatusTooManyRequests, Response: "error_429_too_large.json",
			Header: map[string]string{"Retry-After-Ms": "1"}})
		m := responsesFor(t, srv, Config{MaxRetries: 3})
		var err error
		if stream {
			_, _, err = collectResponses(m, weatherRequest())
		} else {
			_, err = m.Generate(context.Background(), weatherRequest())
		}
		require.ErrorIs(t, err, providers.ErrContextLength, "responses, stream=%v", stream)
		assert.Len(t, srv.Requests(), 1, "responses, stream=%v", stream)
	}
}

func TestOverLimit(t *testing.T) {
	tests := map[string]bool{
		"Request too large for gpt-4o in organization org-test on tokens per min (TPM): Limit 30000, Requested 45000.":             true,
		"Rate limit reached for gpt-4.1 in organization org-test on tokens per min (TPM): Limit 30000, Used 29876, Requested 512.": false,
		"Rate limit reached for o3 in organization org-test on tokens per min (TPM): Limit 30000, Used 100, Requested 31000.":      true,
		"Rate limit reached for requests": false,
		"":                                false,
	}
	for msg, want := range tests {
		assert.Equal(t, want, overLimit(msg), msg)
	}
}

// TestErrorInAnotherEnvelope checks that an error body the SDK cannot
// decode on its own (Ollama's {"error": "..."}) still arrives as an API
// error with its status and message.
func TestErrorInAnotherEnvelope(t *testing.T) {
	srv := serve(t, replay.Step{Status: http.StatusNotFound, Response: "error_ollama.json"})
	_, err := modelFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, http.StatusNotFound, pe.StatusCode)
	assert.Equal(t, `model "llama3.9" not found, try pulling it first`, pe.Message)
	assert.Nil(t, pe.Kind)
	var sdkErr *oai.Error
	require.ErrorAs(t, err, &sdkErr)
	assert.Equal(t, pe.Message, sdkErr.Message)
}

// TestRetryAfterReachesTheError checks that the wait a rate-limited
// response asks for is on the error, where toolloop.Retry finds it.
func TestRetryAfterReachesTheError(t *testing.T) {
	for _, h := range []map[string]string{{"Retry-After-Ms": "1500"}, {"Retry-After": "1.5"}} {
		srv := serve(t, replay.Step{Status: http.StatusTooManyRequests, Response: "error_429.json", Header: h})
		_, err := modelFor(t, srv, Config{MaxRetries: -1}).Generate(context.Background(), weatherRequest())
		var ra interface{ RetryAfter() time.Duration }
		require.ErrorAs(t, err, &ra)
		assert.Equal(t, 1500*time.Millisecond, ra.RetryAfter(), "%v", h)
	}
}
