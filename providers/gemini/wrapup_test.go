package gemini

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestWrapUpOverflow: the wrap-up turn after Budget.MaxTurns is answered,
// the first time, with Gemini's context-length error (400
// INVALID_ARGUMENT "The input token count ... exceeds the maximum"); the
// loop leaves the tool turn out, asks again, and the run ends with
// the turn limit and the final answer.
func TestWrapUpOverflow(t *testing.T) {
	wrapUp := []string{"reached its limit", `"functionCallingConfig":{"mode":"NONE"}`}
	srv := serve(t,
		replay.Step{Response: "loop_turn1.sse"},
		replay.Step{Want: wrapUp, Status: http.StatusBadRequest, Response: "error_context_length.json"},
		replay.Step{Want: append(wrapUp, toolloop.WrapUpOmitted), Response: "loop_turn2.sse"},
	)
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{Model: modelFor(t, srv, Config{MaxRetries: -1}), Tools: replay.WeatherTools(), Budget: toolloop.Budget{WrapUp: true, MaxTurns: 1}, OnEvent: rec.Record}
	res, err := loop.Run(context.Background(), []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant. Use the tools."),
		toolloop.UserMessage("What's the weather in Paris?"),
	})
	require.ErrorIs(t, err, toolloop.ErrBudget)
	assert.NotErrorIs(t, err, providers.ErrContextLength, "the overflow was recovered from")
	assert.Equal(t, "In Paris it is 18 °C with light rain.", res.FinalText)
	assert.Equal(t, toolloop.StopEnd, res.StopReason)
	assert.Equal(t, 2, res.Turns)
	looptest.AssertValid(t, res.Messages)
	assertTrimmedOnce(t, res.Messages, &rec)
	for _, m := range res.Messages {
		assert.Empty(t, m.ToolCalls, "the only tool turn was left out")
	}
}

// assertTrimmedOnce checks that the wrap-up left the oldest turns out
// once, in place of which msgs hold toolloop.WrapUpOmitted, and that the
// wrap-up message is the last before the answer.
func assertTrimmedOnce(t *testing.T, msgs []toolloop.Message, rec *looptest.Recorder) {
	t.Helper()
	omitted := 0
	for _, m := range msgs {
		if m.Role == toolloop.RoleUser && m.Text() == toolloop.WrapUpOmitted {
			omitted++
		}
	}
	assert.Equal(t, 1, omitted)
	assert.Contains(t, msgs[len(msgs)-2].Text(), "reached its limit")
	edits := 0
	for _, e := range rec.Of(toolloop.EventTranscriptEdited) {
		if e.Edit != nil && e.Edit.Strategy == "wrap_up_trim" {
			edits++
		}
	}
	assert.Equal(t, 1, edits)
}
