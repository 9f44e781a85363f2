package toolloop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/internal/golden"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
)

// overflowErr is what a provider returns for a request too long for the
// model's window.
var overflowErr = &providers.Error{Provider: "scripted", StatusCode: 400, Type: "invalid_request_error",
	Message: "prompt is too long", Kind: providers.ErrContextLength}

// TestGoldenLongRun runs the context-management, budget and failure-policy
// scenarios. Each transcript must stay valid, and the run's events must
// replay, through the event log, to the transcript the run returned.
func TestGoldenLongRun(t *testing.T) {
	for _, tt := range golden.LongRun {
		t.Run(tt.Name, func(t *testing.T) {
			g, path := readGolden(t, tt.Name)
			rec := &looptest.Recorder{}
			turns := make([]looptest.Turn, len(g.Replies))
			for i, r := range g.Replies {
				turns[i] = looptest.Turn{Reply: r}
				if r == nil {
					turns[i] = looptest.Turn{Err: overflowErr}
				}
			}
			model := looptest.NewModel(t, turns...)
			loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), OnEvent: rec.Record}
			golden.Setups[tt.Name](loop)
			res, err := loop.Run(context.Background(), g.Input)
			if tt.Err != nil {
				require.ErrorIs(t, err, tt.Err)
			} else {
				require.NoError(t, err)
			}
			if tt.Limit != "" {
				var be *toolloop.BudgetError
				require.ErrorAs(t, err, &be)
				assert.Equal(t, tt.Limit, be.Limit)
			}
			assert.Zero(t, model.Remaining(), "every scripted reply is used")
			checkGolden(t, g, path, res.Messages, rec.Events())

			rp := new(eventlog.Replay)
			for _, e := range rec.Events() {
				rp.Add(e)
			}
			assert.Zero(t, rp.EditErrors)
			looptest.AssertTranscript(t, res.Messages, rp.Transcript())
			assert.Equal(t, res.Usage, rp.Usage)
		})
	}
}

func TestGoldenLongRunRequests(t *testing.T) {
	t.Run("wrap-up turn disables tools", func(t *testing.T) {
		g, _ := readGolden(t, "budget_output_tokens_wrap_up")
		model := looptest.NewModel(t, looptest.Turn{Reply: g.Replies[0]}, looptest.Turn{Reply: g.Replies[1]},
			looptest.Turn{Reply: g.Replies[2], Check: func(req *toolloop.Request) string {
				if req.ToolChoice.Mode != toolloop.ToolChoiceNone {
					return "the wrap-up turn must set tool choice none"
				}
				if len(req.Tools) == 0 {
					return "the wrap-up turn must still send the tools"
				}
				return ""
			}})
		loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools()}
		golden.Setups["budget_output_tokens_wrap_up"](loop)
		res, err := loop.Run(context.Background(), g.Input)
		require.ErrorIs(t, err, toolloop.ErrBudget)
		assert.Equal(t, "I added 1+1=2 and 2+1=3; the rest is left to do.", res.FinalText)
		assert.Equal(t, toolloop.StopEnd, res.StopReason)
	})
	t.Run("compaction request", func(t *testing.T) {
		g, _ := readGolden(t, "compact_overflow")
		var summaryReq *toolloop.Request
		turns := []looptest.Turn{{Reply: g.Replies[0]}, {Reply: g.Replies[1]}, {Err: overflowErr},
			{Reply: g.Replies[3], Check: func(req *toolloop.Request) string { summaryReq = req; return "" }},
			{Reply: g.Replies[4]}}
		loop := &toolloop.AgentLoop{Model: looptest.NewModel(t, turns...), Tools: goldenTools()}
		golden.Setups["compact_overflow"](loop)
		_, err := loop.Run(context.Background(), g.Input)
		require.NoError(t, err)
		require.NotNil(t, summaryReq)
		assert.Empty(t, summaryReq.Tools, "the summary is written without tools")
		require.Len(t, summaryReq.Messages, 2)
		assert.Equal(t, toolloop.RoleSystem, summaryReq.Messages[0].Role)
		assert.Contains(t, summaryReq.Messages[1].Text(), "Divide", "the summarizer sees the tool output")
	})
}

// TestOverflowWithoutRoom: a context-length error that no manager can
// help ends the run with the provider's error, after one try.
func TestOverflowWithoutRoom(t *testing.T) {
	model := looptest.NewModel(t, looptest.Turn{Err: overflowErr})
	loop := &toolloop.AgentLoop{Model: model,
		ContextManagers: []toolloop.ContextManager{&toolloop.Compactor{}}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("hi")})
	require.ErrorIs(t, err, providers.ErrContextLength)
	assert.Equal(t, toolloop.StopError, res.StopReason)
	assert.Zero(t, model.Remaining())
}

// TestBadEditRefused: a manager whose edit would orphan a tool call is
// refused; the run goes on with the transcript as it was.
func TestBadEditRefused(t *testing.T) {
	g, _ := readGolden(t, "clear_old_results")
	turns := make([]looptest.Turn, len(g.Replies))
	for i, r := range g.Replies {
		turns[i] = looptest.Turn{Reply: r}
	}
	calls := 0
	bad := toolloop.ContextManagerFunc(func(_ context.Context, in *toolloop.ContextInput) (*toolloop.TranscriptEdit, error) {
		calls++
		for i, m := range in.Messages {
			if m.Role == toolloop.RoleTool { // drop a result: orphans its call
				return &toolloop.TranscriptEdit{Strategy: "bad", Splices: []toolloop.Splice{{Start: i, End: i + 1}}}, nil
			}
		}
		return nil, nil
	})
	panicky := toolloop.ContextManagerFunc(func(context.Context, *toolloop.ContextInput) (*toolloop.TranscriptEdit, error) {
		panic("manager bug")
	})
	failing := toolloop.ContextManagerFunc(func(context.Context, *toolloop.ContextInput) (*toolloop.TranscriptEdit, error) {
		return nil, errors.New("summarizer down")
	})
	rec := &looptest.Recorder{}
	loop := &toolloop.AgentLoop{Model: looptest.NewModel(t, turns...), Tools: goldenTools(), OnEvent: rec.Record,
		ContextManagers: []toolloop.ContextManager{bad, panicky, failing}}
	res, err := loop.Run(context.Background(), g.Input)
	require.NoError(t, err)
	assert.Equal(t, 4, calls)
	looptest.AssertValid(t, res.Messages)
	assert.Empty(t, rec.Of(toolloop.EventTranscriptEdited))
}

func TestTranscriptEditApply(t *testing.T) {
	msgs := []toolloop.Message{
		toolloop.UserMessage("a"),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{looptest.Call("c1", "t", `{}`)}},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c1", Name: "t", Status: toolloop.StatusOK}),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("done")}},
	}
	for _, tt := range []struct {
		name    string
		splices []toolloop.Splice
		want    int // messages after, or -1 for ErrBadEdit
	}{
		{"insert at end", []toolloop.Splice{{Start: 4, End: 4, Messages: []toolloop.Message{toolloop.UserMessage("b")}}}, 5},
		{"replace a whole turn", []toolloop.Splice{{Start: 1, End: 3, Messages: []toolloop.Message{toolloop.UserMessage("sum")}}}, 3},
		{"two splices", []toolloop.Splice{{Start: 0, End: 1}, {Start: 3, End: 4}}, 2},
		{"orphans a call", []toolloop.Splice{{Start: 2, End: 3}}, -1},
		{"orphans a result", []toolloop.Splice{{Start: 1, End: 2}}, -1},
		{"out of range", []toolloop.Splice{{Start: 3, End: 9}}, -1},
		{"out of order", []toolloop.Splice{{Start: 3, End: 4}, {Start: 0, End: 1}}, -1},
		{"end before start", []toolloop.Splice{{Start: 2, End: 1}}, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &toolloop.TranscriptEdit{Splices: tt.splices}
			out, err := e.Apply(msgs)
			if tt.want < 0 {
				require.ErrorIs(t, err, toolloop.ErrBadEdit)
				return
			}
			require.NoError(t, err)
			assert.Len(t, out, tt.want)
			assert.Len(t, msgs, 4, "the input is not changed")
		})
	}
}
