package openai

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// wrapUpInput is the task of the wrap-up tests: the conversation of
// TestAgentLoop, cut short by a limit.
var wrapUpInput = []toolloop.Message{
	toolloop.SystemMessage("You are a weather assistant. Use the tools."),
	toolloop.UserMessage("Compare the weather in Paris and Tokyo, with Paris in Fahrenheit too."),
}

// wrapUpAnswer is the final text of loop_turn3.sse, in both APIs.
const wrapUpAnswer = "Paris is 18°C (64.4°F) with light rain; Tokyo is 24°C and clear."

// assertWrappedUp checks the end of a run whose wrap-up request was
// refused once as too long: the limit's error alone, the final answer,
// a valid transcript whose oldest turns were left out, and the wrap-up
// request asked twice.
func assertWrappedUp(t *testing.T, res *toolloop.RunResult, err error, rec *looptest.Recorder) {
	t.Helper()
	assert.NotErrorIs(t, err, providers.ErrContextLength, "the overflow was recovered from")
	require.NotNil(t, res)
	assert.Equal(t, wrapUpAnswer, res.FinalText)
	assert.Equal(t, toolloop.StopEnd, res.StopReason)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "Compare the weather in Paris and Tokyo, with Paris in Fahrenheit too.", res.Messages[1].Text(), "the task is kept")
	omitted := 0
	for _, m := range res.Messages {
		if m.Role == toolloop.RoleUser && m.Text() == toolloop.WrapUpOmitted {
			omitted++
		}
	}
	assert.Equal(t, 1, omitted, "old turns were left out, once")
	assert.Contains(t, res.Messages[len(res.Messages)-2].Text(), "reached its limit")
	edits := 0
	for _, e := range rec.Of(toolloop.EventTranscriptEdited) {
		if e.Edit != nil && e.Edit.Strategy == "wrap_up_trim" {
			edits++
		}
	}
	assert.Equal(t, 1, edits)
}

// TestWrapUpOverflow: the wrap-up turn after Budget.MaxTurns is answered,
// the first time, with OpenAI's context-length error (400
// context_length_exceeded); the loop leaves the oldest turn out, asks
// again, and the run ends with the turn limit and the final answer.
func TestWrapUpOverflow(t *testing.T) {
	wrapUp := []string{"reached its limit", `"tool_choice":"none"`}
	srv := serve(t,
		replay.Step{Response: "loop_turn1.sse"},
		replay.Step{Response: "loop_turn2.sse"},
		replay.Step{Want: wrapUp, Status: http.StatusBadRequest, Response: "error_context_length.json"},
		replay.Step{Want: append(wrapUp, toolloop.WrapUpOmitted), Response: "loop_turn3.sse"},
	)
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{Model: modelFor(t, srv, Config{MaxRetries: -1}), Tools: replay.WeatherTools(), Budget: toolloop.Budget{WrapUp: true, MaxTurns: 2}, OnEvent: rec.Record}
	res, err := loop.Run(context.Background(), wrapUpInput)
	require.ErrorIs(t, err, toolloop.ErrBudget)
	assertWrappedUp(t, res, err, &rec)
	assert.Equal(t, 3, res.Turns)
	// The latest tool turn was kept: the Fahrenheit call and its result.
	assert.Equal(t, []string{"to_fahrenheit"}, calledTools(res.Messages))
}

// TestResponsesWrapUpOverflow: the same through the Responses API, with
// its context-length error (400 context_length_exceeded on input), the
// wrap-up forced by a tool-call budget.
func TestResponsesWrapUpOverflow(t *testing.T) {
	wrapUp := []string{"reached its limit", `"tool_choice":"none"`}
	srv := serve(t,
		replay.Step{Response: rapi("loop_turn1.sse")},
		replay.Step{Want: wrapUp, Status: http.StatusBadRequest, Response: rapi("error_context_length.json")},
		replay.Step{Want: append(wrapUp, toolloop.WrapUpOmitted), Response: rapi("loop_turn3.sse")},
	)
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{Model: responsesFor(t, srv, Config{MaxRetries: -1}), Tools: replay.WeatherTools(),
		Budget: toolloop.Budget{MaxToolCalls: 2, WrapUp: true}, OnEvent: rec.Record}
	res, err := loop.Run(context.Background(), wrapUpInput)
	var be *toolloop.BudgetError
	require.True(t, errors.As(err, &be), "err = %v", err)
	assert.Equal(t, toolloop.LimitToolCalls, be.Limit)
	assertWrappedUp(t, res, err, &rec)
	assert.Equal(t, 2, res.Turns)
	assert.Empty(t, calledTools(res.Messages), "the only tool turn was left out")
}

// calledTools lists the tools called in msgs, in order.
func calledTools(msgs []toolloop.Message) []string {
	var out []string
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			out = append(out, tc.Name)
		}
	}
	return out
}

// TestWrapUpOverflowNothingFits: when OpenAI refuses every wrap-up
// request as too long, down to the task alone, the run ends with
// the turn limit (a *BudgetError) joined to an error matching providers.ErrContextLength,
// and the transcript stays valid.
func TestWrapUpOverflowNothingFits(t *testing.T) {
	tooLong := replay.Step{Want: []string{"reached its limit"}, Status: http.StatusBadRequest, Response: "error_context_length.json"}
	srv := serve(t,
		replay.Step{Response: "loop_turn1.sse"},
		replay.Step{Response: "loop_turn2.sse"},
		tooLong, // as it is
		tooLong, // without the older tool turn
		tooLong, // without either
	)
	loop := &toolloop.AgentLoop{Model: modelFor(t, srv, Config{MaxRetries: -1}), Tools: replay.WeatherTools(), Budget: toolloop.Budget{WrapUp: true, MaxTurns: 2}}
	res, err := loop.Run(context.Background(), wrapUpInput)
	require.ErrorIs(t, err, toolloop.ErrBudget)
	require.ErrorIs(t, err, providers.ErrContextLength)
	require.NotNil(t, res)
	assert.Empty(t, res.FinalText)
	looptest.AssertValid(t, res.Messages)
	assert.Len(t, srv.Requests(), 5)
}
