package gemini

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

func TestDefaultRetries(t *testing.T) {
	srv := serve(t,
		replay.Step{Status: http.StatusServiceUnavailable, Response: "error_503.json"},
		replay.Step{Status: http.StatusServiceUnavailable, Response: "error_503.json"},
		replay.Step{Status: http.StatusServiceUnavailable, Response: "error_503.json"},
	)
	_, err := modelFor(t, srv, Config{}).Generate(context.Background(), replay.WeatherRequest())
	require.ErrorIs(t, err, providers.ErrOverloaded)
	assert.Len(t, srv.Requests(), 3, "two retries by default")
}

// TestStreamErrorAfterText checks that an error object the API sends as
// an event, after a chunk, ends the stream with the text before it
// yielded (the conformance kit checks the error itself).
func TestStreamErrorAfterText(t *testing.T) {
	srv := serve(t, replay.Step{Response: "stream_error.sse"})
	got := replay.Collect(modelFor(t, srv, Config{MaxRetries: -1}), replay.WeatherRequest())
	assert.Equal(t, []string{"Hello"}, got.Text)
	assert.ErrorIs(t, got.Err, providers.ErrOverloaded)
}
