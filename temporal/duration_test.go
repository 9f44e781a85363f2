package temporal_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tsdk "go.temporal.io/sdk/temporal"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// TestMaxDurationStopsTheTurn: when Budget.MaxDuration runs out while a
// call runs, the call is cancelled, and the run wraps up with tools
// disabled and ends with the duration limit, as in process.
func TestMaxDurationStopsTheTurn(t *testing.T) {
	var stopped sync.WaitGroup
	newLoop := func() *toolloop.AgentLoop {
		model := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "hang", `{}`))},
			looptest.Turn{Reply: looptest.Text("I ran out of time waiting for hang."), Check: func(req *toolloop.Request) string {
				if req.ToolChoice.Mode != toolloop.ToolChoiceNone {
					return "the wrap-up turn must set tool choice none"
				}
				return ""
			}})
		var reg toolloop.ToolRegistry
		reg.MustRegister(toolloop.NewTool("hang", "Wait for ever.", func(ctx context.Context, _ struct{}) (any, error) {
			stopped.Add(1)
			defer stopped.Done()
			<-ctx.Done()
			return nil, ctx.Err()
		}))
		return &toolloop.AgentLoop{Model: model, Tools: &reg,
			Budget: toolloop.Budget{MaxDuration: 300 * time.Millisecond, WrapUp: true}}
	}
	input := []toolloop.Message{toolloop.UserMessage("wait for it")}
	want, wantErr := newLoop().Run(context.Background(), input)
	got, err := run(t, newEnv(t, temporal.Agent{Loop: newLoop(), HeartbeatTimeout: 200 * time.Millisecond}), "", input)
	stopped.Wait() // the cancelled activity stops its tool
	for _, e := range []error{wantErr, err} {
		var be *toolloop.BudgetError
		require.ErrorAs(t, e, &be)
		assert.Equal(t, toolloop.BudgetError{Limit: toolloop.LimitDuration, Used: 0.3, Max: 0.3}, *be)
	}
	require.NotNil(t, got)
	// The test environment settles a cancelled activity without its
	// result, so the workflow writes the same canceled result itself,
	// without the tool's source.
	for _, msgs := range [][]toolloop.Message{want.Messages, got.Messages} {
		require.Len(t, msgs, 5)
		msgs[2].Result.Meta.Source, msgs[2].Result.Meta.SourceName = "", ""
	}
	looptest.AssertTranscript(t, want.Messages, got.Messages)
	assert.Equal(t, want.StopReason, got.StopReason)
	assert.Equal(t, "I ran out of time waiting for hang.", got.FinalText)
	assert.Equal(t, want.Turns, got.Turns)
}

// TestMaxDurationLeavesOutApproval: the time a run waits for decisions
// only does not count, as the time between a pause and Resume does not:
// a decision two days late does not end a run with an hour's budget.
func TestMaxDurationLeavesOutApproval(t *testing.T) {
	g := readGolden(t, "pause_resume_approve")
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{
		Model: looptest.NewModel(t, g.turns()...), Tools: goldenTools(), Guard: destructiveAsks, PauseForApproval: true,
		Budget: toolloop.Budget{MaxDuration: time.Hour},
	}})
	env.RegisterDelayedCallback(func() {
		for id, a := range g.Decisions {
			env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: id, Approval: a})
		}
	}, 48*time.Hour)
	res, err := run(t, env, "", g.Input)
	require.NoError(t, err)
	looptest.AssertTranscript(t, g.Transcript, res.Messages)
}

// TestMaxDurationAcrossContinueAsNew: the time a run has spent goes with
// it when it continues as new. Each model turn fails once and is retried
// 40 minutes later (of workflow time); with an hour's budget the limit
// cancels the second turn's retry, although, continued as new after
// every turn, no one execution spent an hour.
func TestMaxDurationAcrossContinueAsNew(t *testing.T) {
	down := errors.New("503 from the provider")
	for _, perExec := range []int{0, 1} {
		model := looptest.NewModel(t,
			looptest.Turn{Err: down}, looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "add", `{"a":1,"b":2}`))},
			looptest.Turn{Err: down}) // its retry, 40 minutes later, never comes
		a := temporal.Agent{
			Loop: &toolloop.AgentLoop{Model: model, Tools: goldenTools(),
				Budget: toolloop.Budget{MaxDuration: time.Hour}},
			ModelRetry:           &tsdk.RetryPolicy{InitialInterval: 40 * time.Minute, BackoffCoefficient: 1, MaximumAttempts: 3},
			MaxTurnsPerExecution: perExec,
		}
		res, execs, err := runChain(t, a, temporal.Input{Messages: []toolloop.Message{toolloop.UserMessage("add")}})
		var be *toolloop.BudgetError
		require.ErrorAs(t, err, &be, "executions: %d", execs)
		assert.Equal(t, toolloop.LimitDuration, be.Limit)
		assert.Equal(t, 3600.0, be.Max)
		require.NotNil(t, res)
		assert.Equal(t, toolloop.StopAborted, res.StopReason)
		assert.Equal(t, 2, res.Turns)
		assert.Equal(t, perExec+1, execs)
	}
}
