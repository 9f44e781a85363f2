package anthropic

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestAgentLoop runs a whole conversation with two tool turns through the
// provider, streaming, and compares the transcript with its golden file.
func TestAgentLoop(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "loop_turn1", Response: "loop_turn1.sse"},
		replay.Step{Golden: "loop_turn2", Response: "loop_turn2.sse"},
		replay.Step{Golden: "loop_turn3", Response: "loop_turn3.sse"},
	)
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{Model: modelFor(t, srv, Config{}), Tools: replay.WeatherTools(), OnEvent: rec.Record}
	input := []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant. Use the tools."),
		toolloop.UserMessage("Compare the weather in Paris and Tokyo, with Paris in Fahrenheit too."),
	}
	res, err := loop.Run(context.Background(), input)
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, 3, res.Turns)
	assert.Equal(t, toolloop.StopEnd, res.StopReason)
	assert.Equal(t, toolloop.Usage{InputTokens: 520 + 1212 + 1302, OutputTokens: 96 + 40 + 24, CacheReadTokens: 1024}, res.Usage)
	assert.NotEmpty(t, rec.Of(toolloop.EventModelDelta), "text deltas become model.delta events")
	replay.AssertGoldenTranscript(t, filepath.Join("testdata", "transcripts", "agent_loop.json"), res.Messages, *update)
}
