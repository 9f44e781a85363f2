package anthropic

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
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

func TestOverloadIsRetriedWhileStreaming(t *testing.T) {
	srv := serve(t,
		replay.Step{Status: 529, Response: "error_529.json", Header: map[string]string{"Retry-After-Ms": "10"}},
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
		{"prompt too long", http.StatusBadRequest, "error_context_length.json", 0, providers.ErrContextLength, "invalid_request_error", 1},
		{"context limit with max_tokens", http.StatusBadRequest, "error_context_limit.json", 0, providers.ErrContextLength, "invalid_request_error", 1},
		{"request too large", http.StatusRequestEntityTooLarge, "error_413.json", 0, providers.ErrContextLength, "request_too_large", 1},
		{"rate limit after retries", http.StatusTooManyRequests, "error_429.json", 1, providers.ErrRateLimit, "rate_limit_error", 2},
		{"overloaded, no retries", 529, "error_529.json", -1, providers.ErrOverloaded, "overloaded_error", 1},
		{"bad key", http.StatusUnauthorized, "error_auth.json", 0, providers.ErrAuth, "authentication_error", 1},
		{"other bad request", http.StatusBadRequest, "error_bad_request.json", 0, nil, "invalid_request_error", 1},
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
			var pe *providers.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.status, pe.StatusCode)
			assert.Equal(t, "anthropic", pe.Provider)
			assert.Equal(t, tt.typ, pe.Type)
			assert.NotEmpty(t, pe.Message)
			var sdkErr *sdk.Error
			require.ErrorAs(t, err, &sdkErr)
			assert.Equal(t, tt.status, sdkErr.StatusCode)
			for _, kind := range []error{providers.ErrContextLength, providers.ErrRateLimit, providers.ErrOverloaded, providers.ErrAuth} {
				if kind == tt.kind {
					assert.ErrorIs(t, err, kind)
				} else {
					assert.NotErrorIs(t, err, kind)
				}
			}
			assert.Len(t, srv.Requests(), tt.requests)
			var he *wire.HTTPError
			require.ErrorAs(t, err, &he, "the error names the request")
			assert.Equal(t, http.MethodPost, he.Method)
			assert.Equal(t, srv.URL+"/v1/messages", he.URL)
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
