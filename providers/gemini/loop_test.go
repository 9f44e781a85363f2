package gemini

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestAgentLoop runs a conversation with thinking and one tool turn
// through the provider, streaming. The second request must send the
// thought summary back and the thought signature on the functionCall part
// (testdata/requests/loop_turn2.json), as Gemini 3 requires.
func TestAgentLoop(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "loop_turn1", Response: "loop_turn1.sse"},
		replay.Step{Golden: "loop_turn2", Response: "loop_turn2.sse"},
	)
	var rec looptest.Recorder
	m := modelFor(t, srv, Config{Model: "gemini-3-pro-preview", ThinkingLevel: "low", IncludeThoughts: true})
	loop := &toolloop.AgentLoop{Model: m, Tools: replay.WeatherTools(), OnEvent: rec.Record}
	input := []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant. Use the tools."),
		toolloop.UserMessage("What's the weather in Paris?"),
	}
	res, err := loop.Run(context.Background(), input)
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, 2, res.Turns)
	assert.Equal(t, toolloop.StopEnd, res.StopReason)
	assert.Equal(t, "In Paris it is 18 °C with light rain.", res.FinalText)
	assert.Equal(t, toolloop.Usage{InputTokens: 98 + 175, OutputTokens: 16 + 131 + 12 + 64, ReasoningTokens: 131 + 64}, res.Usage)
	assert.NotEmpty(t, rec.Of(toolloop.EventModelDelta), "text deltas become model.delta events")
	assert.NotEmpty(t, rec.Of(toolloop.EventModelReasoningDelta), "thought deltas become model.reasoning_delta events")
	replay.AssertGoldenTranscript(t, filepath.Join("testdata", "transcripts", "agent_loop.json"), res.Messages, *update)

	// The signature went back on the call's part, and nowhere else.
	var body struct {
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	require.NoError(t, json.Unmarshal(srv.Bodies()[1], &body))
	require.Len(t, body.Contents, 3)
	model := body.Contents[1]
	assert.Equal(t, "model", model.Role)
	require.Len(t, model.Parts, 2)
	assert.JSONEq(t, `{"text":"**Checking the weather**\n\nI need the current weather in Paris before I can answer.","thought":true}`, string(model.Parts[0]))
	assert.JSONEq(t, `{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CiYB0e2KS1ES8bnHGPAukYuCwnO2Kvti8Mq3UrJTTTetvB+JOzmKAf9HG4ODqoxpYBjvCb9BwqMAsVe5PNL9W6Rl"}`, string(model.Parts[1]))
}
