package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestMalformedArgumentsKeptVerbatim checks that arguments that are not
// JSON reach the loop as the model sent them, for its validation stage
// to answer.
func TestMalformedArgumentsKeptVerbatim(t *testing.T) {
	srv := serve(t, replay.Step{Response: "malformed_args.json"})
	resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	require.Len(t, resp.Message.ToolCalls, 1)
	assert.Equal(t, json.RawMessage(`{'city': 'Paris',`), resp.Message.ToolCalls[0].Arguments)
}
