package gemini

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

func TestRateLimitIsRetried(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "generate", Status: http.StatusTooManyRequests, Response: "error_429.json"},
		replay.Step{Golden: "generate", Response: "plain.json"},
	)
	resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, "Hello! How can I help you today?", resp.Message.Text())
	assert.Len(t, srv.Requests(), 2)
}

func TestOverloadIsRetriedWhileStreaming(t *testing.T) {
	srv := serve(t,
		replay.Step{Status: http.StatusServiceUnavailable, Response: "error_503.json"},
		replay.Step{Response: "stream_text.sse"},
	)
	resp, _, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
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
		{"input too long", http.StatusBadRequest, "error_context_length.json", 0, providers.ErrContextLength, "INVALID_ARGUMENT", 1},
		{"quota after retries", http.StatusTooManyRequests, "error_429.json", 1, providers.ErrRateLimit, "RESOURCE_EXHAUSTED", 2},
		{"overloaded, no retries", http.StatusServiceUnavailable, "error_503.json", -1, providers.ErrOverloaded, "UNAVAILABLE", 1},
		{"overloaded as an internal error", http.StatusInternalServerError, "error_500_overloaded.json", -1, providers.ErrOverloaded, "INTERNAL", 1},
		{"other internal error", http.StatusInternalServerError, "error_500.json", -1, nil, "INTERNAL", 1},
		{"bad key is a 400", http.StatusBadRequest, "error_api_key.json", 0, providers.ErrAuth, "INVALID_ARGUMENT", 1},
		{"no identity", http.StatusForbidden, "error_403.json", 0, providers.ErrAuth, "PERMISSION_DENIED", 1},
		{"other bad request", http.StatusBadRequest, "error_bad_request.json", 0, nil, "INVALID_ARGUMENT", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := make([]replay.Step, tt.requests)
			for i := range steps {
				steps[i] = replay.Step{Status: tt.status, Response: tt.response}
			}
			srv := serve(t, steps...)
			_, err := modelFor(t, srv, Config{MaxRetries: tt.retries}).Generate(context.Background(), weatherRequest())
			require.Error(t, err)
			var pe *providers.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.status, pe.StatusCode)
			assert.Equal(t, "gemini", pe.Provider)
			assert.Equal(t, tt.typ, pe.Type)
			assert.NotEmpty(t, pe.Message)
			var ae genai.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.status, ae.Code)
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
			assert.Equal(t, srv.URL+"/v1beta/models/gemini-2.5-flash:generateContent", he.URL)
			assert.Empty(t, he.Hint)
		})
	}
}

func TestDefaultRetries(t *testing.T) {
	srv := serve(t,
		replay.Step{Status: http.StatusServiceUnavailable, Response: "error_503.json"},
		replay.Step{Status: http.StatusServiceUnavailable, Response: "error_503.json"},
		replay.Step{Status: http.StatusServiceUnavailable, Response: "error_503.json"},
	)
	_, err := modelFor(t, srv, Config{}).Generate(context.Background(), weatherRequest())
	require.ErrorIs(t, err, providers.ErrOverloaded)
	assert.Len(t, srv.Requests(), 3, "two retries by default")
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
	_, err := modelFor(t, srv, Config{MaxRetries: -1}).Generate(ctx, weatherRequest())
	require.ErrorIs(t, err, context.Canceled)
	var pe *providers.Error
	assert.False(t, errors.As(err, &pe))
}

// TestRetryDelayReachesTheError checks that the retry delay of a quota
// error's RetryInfo is on the error, where toolloop.Retry finds it.
func TestRetryDelayReachesTheError(t *testing.T) {
	srv := serve(t, replay.Step{Status: http.StatusTooManyRequests, Response: "error_429.json"})
	_, err := modelFor(t, srv, Config{MaxRetries: -1}).Generate(context.Background(), weatherRequest())
	var ra interface{ RetryAfter() time.Duration }
	require.ErrorAs(t, err, &ra)
	assert.Equal(t, 37*time.Second, ra.RetryAfter())
}
