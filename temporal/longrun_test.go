package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/internal/golden"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/temporal"
)

// overflowErr is what a provider returns for a request too long for the
// model's window; null replies in the golden files stand for it.
var overflowErr = &providers.Error{Provider: "scripted", StatusCode: 400, Type: "invalid_request_error",
	Message: "prompt is too long", Kind: providers.ErrContextLength}

// longRunTurns are the golden file's replies as a script, null as a
// context-length error.
func (g *goldenFile) longRunTurns() []looptest.Turn {
	ts := g.turns()
	for i, r := range g.Replies {
		if r == nil {
			ts[i] = looptest.Turn{Err: overflowErr}
		}
	}
	return ts
}

// runChain executes the agent's workflow on in and, each time it
// continues as new, the next execution in a new test environment, as the
// server would; it returns the outcome of the last execution as
// temporal.Wait reports it, with the number of executions.
func runChain(t *testing.T, a temporal.Agent, in temporal.Input) (*toolloop.RunResult, int, error) {
	t.Helper()
	for n := 1; ; n++ {
		env := newEnv(t, a)
		env.ExecuteWorkflow(temporal.DefaultName, in)
		require.True(t, env.IsWorkflowCompleted())
		var can *workflow.ContinueAsNewError
		if err := env.GetWorkflowError(); errors.As(err, &can) {
			require.Equal(t, temporal.DefaultName, can.WorkflowType.Name)
			in = temporal.Input{}
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
			require.Less(t, n, 1000, "the run never ends")
			continue
		}
		res, err := temporal.Wait(context.Background(), envRun{env: env})
		return res, n, err
	}
}

// TestGoldenLongRun runs the core's context-management, budget and
// failure-policy scenarios in process and as a workflow, in one execution
// and continued as new after every turn: the transcripts, the errors, the
// accounting and everything else Run returns are the same.
func TestGoldenLongRun(t *testing.T) {
	for _, tt := range golden.LongRun {
		for _, perExec := range []int{0, 1} {
			name := tt.Name
			if perExec > 0 {
				name += "/continued_as_new"
			}
			t.Run(name, func(t *testing.T) {
				g := readGolden(t, tt.Name)
				newLoop := func() *toolloop.AgentLoop {
					l := &toolloop.AgentLoop{Model: looptest.NewModel(t, g.longRunTurns()...), Tools: goldenTools()}
					golden.Setups[tt.Name](l)
					return l
				}
				want, wantErr := newLoop().Run(context.Background(), g.Input)
				got, execs, err := runChain(t, temporal.Agent{Loop: newLoop(), MaxTurnsPerExecution: perExec},
					temporal.Input{Messages: g.Input})
				assertSameRun(t, tt, want, wantErr, got, err)
				looptest.AssertTranscript(t, g.Transcript, got.Messages)
				if perExec > 0 && want.Turns > 2 {
					assert.Greater(t, execs, 1, "the run continued as new")
				} else if perExec == 0 {
					assert.Equal(t, 1, execs)
				}
			})
		}
	}
}

// TestGoldenContinuedAsNew runs the plain golden scenarios continued as
// new after every turn: the same transcripts as in process.
func TestGoldenContinuedAsNew(t *testing.T) {
	for _, tt := range golden.Scenarios {
		t.Run(tt.Name, func(t *testing.T) {
			g := readGolden(t, tt.Name)
			newLoop := func() *toolloop.AgentLoop {
				l := &toolloop.AgentLoop{Model: looptest.NewModel(t, g.turns()...), Tools: goldenTools()}
				if setup := goldenSetups[tt.Name]; setup != nil {
					setup(l)
				}
				return l
			}
			want, wantErr := newLoop().Run(context.Background(), g.Input)
			got, _, err := runChain(t, temporal.Agent{Loop: newLoop(), MaxTurnsPerExecution: 1}, temporal.Input{Messages: g.Input})
			assertSameRun(t, tt, want, wantErr, got, err)
			looptest.AssertTranscript(t, g.Transcript, got.Messages)
		})
	}
}

// assertSameRun checks that a workflow run ended as the in-process run.
func assertSameRun(t *testing.T, tt golden.Scenario, want *toolloop.RunResult, wantErr error, got *toolloop.RunResult, err error) {
	t.Helper()
	if tt.Err != nil {
		require.ErrorIs(t, wantErr, tt.Err)
		require.ErrorIs(t, err, tt.Err)
	} else {
		require.NoError(t, wantErr)
		require.NoError(t, err)
	}
	if tt.Limit != "" {
		var be *toolloop.BudgetError
		require.ErrorAs(t, err, &be)
		var wantBE *toolloop.BudgetError
		require.ErrorAs(t, wantErr, &wantBE)
		assert.Equal(t, *wantBE, *be)
	}
	var fe, wantFE *toolloop.FailureError
	if errors.As(wantErr, &wantFE) {
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, *wantFE, *fe)
	}
	require.NotNil(t, got)
	looptest.AssertValid(t, got.Messages)
	looptest.AssertTranscript(t, want.Messages, got.Messages)
	assert.Equal(t, want.StopReason, got.StopReason)
	assert.Equal(t, want.FinalText, got.FinalText)
	assert.Equal(t, want.Turns, got.Turns)
	assert.Equal(t, want.Accounting, got.Accounting)
	assert.Equal(t, looptest.Canonical(noLatency(want.Executions)), looptest.Canonical(noLatency(got.Executions)))
	assert.Equal(t, "default-test-workflow-id", got.RunID)
}

// TestWrapUpTurnDisablesTools: the wrap-up turn's request sets tool
// choice none and still sends the tools, as in process.
func TestWrapUpTurnDisablesTools(t *testing.T) {
	g := readGolden(t, "budget_output_tokens_wrap_up")
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
	l := &toolloop.AgentLoop{Model: model, Tools: goldenTools()}
	golden.Setups["budget_output_tokens_wrap_up"](l)
	res, err := run(t, newEnv(t, temporal.Agent{Loop: l}), "", g.Input)
	require.ErrorIs(t, err, toolloop.ErrBudget)
	assert.Equal(t, "I added 1+1=2 and 2+1=3; the rest is left to do.", res.FinalText)
	assert.Equal(t, toolloop.StopEnd, res.StopReason)
}

// TestOverflowWithoutRoom: a context-length error that no manager can
// help ends the run with the provider's error after one try, as in
// process; without managers it is not retried either.
func TestOverflowWithoutRoom(t *testing.T) {
	for _, managers := range [][]toolloop.ContextManager{nil, {&toolloop.Compactor{}}} {
		model := looptest.NewModel(t, looptest.Turn{Err: overflowErr})
		env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: model, ContextManagers: managers}})
		res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("hi")})
		require.ErrorIs(t, err, providers.ErrContextLength)
		require.ErrorIs(t, err, temporal.ErrModel)
		require.NotNil(t, res)
		assert.Equal(t, toolloop.StopError, res.StopReason)
		assert.Zero(t, model.Remaining())
	}
}

// TestContextManagerFailures: a manager that fails, panics or makes an
// edit that would orphan a call changes nothing, and the run goes on.
func TestContextManagerFailures(t *testing.T) {
	g := readGolden(t, "clear_old_results")
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
	l := &toolloop.AgentLoop{Model: looptest.NewModel(t, g.turns()...), Tools: goldenTools(), OnEvent: rec.Record,
		ContextManagers: []toolloop.ContextManager{bad, panicky, failing}}
	res, err := run(t, newEnv(t, temporal.Agent{Loop: l}), "", g.Input)
	require.NoError(t, err)
	assert.Equal(t, 4, calls)
	looptest.AssertValid(t, res.Messages)
	assert.Empty(t, rec.Of(toolloop.EventTranscriptEdited))
}

// TestEditsReported: the context activity reports each edit it makes to
// the loop's OnEvent, as the loop does in process.
func TestEditsReported(t *testing.T) {
	g := readGolden(t, "compact_threshold")
	var want, got looptest.Recorder
	newLoop := func(rec *looptest.Recorder) *toolloop.AgentLoop {
		l := &toolloop.AgentLoop{Model: looptest.NewModel(t, g.turns()...), Tools: goldenTools(), OnEvent: rec.Record}
		golden.Setups["compact_threshold"](l)
		return l
	}
	_, err := newLoop(&want).Run(context.Background(), g.Input)
	require.NoError(t, err)
	_, err = run(t, newEnv(t, temporal.Agent{Loop: newLoop(&got)}), "", g.Input)
	require.NoError(t, err)
	wantEdits, gotEdits := want.Of(toolloop.EventTranscriptEdited), got.Of(toolloop.EventTranscriptEdited)
	require.NotEmpty(t, wantEdits)
	require.Len(t, gotEdits, len(wantEdits))
	for i := range wantEdits {
		assert.Equal(t, looptest.Canonical(wantEdits[i].Edit), looptest.Canonical(gotEdits[i].Edit))
		assert.Equal(t, wantEdits[i].Turn, gotEdits[i].Turn)
	}
}

// TestUnknownPrice: with Budget.MaxCost set, a turn whose model has no
// price ends the run before its calls run, as in process.
func TestUnknownPrice(t *testing.T) {
	newLoop := func() *toolloop.AgentLoop {
		reply := looptest.Calls(looptest.Call("call_1", "add", `{"a":1,"b":2}`))
		reply.Model, reply.Usage = "mystery-model", toolloop.Usage{InputTokens: 100, OutputTokens: 10}
		return &toolloop.AgentLoop{Model: looptest.NewModel(t, looptest.Turn{Reply: reply}), Tools: goldenTools(),
			Budget: toolloop.Budget{MaxCost: 1}}
	}
	input := []toolloop.Message{toolloop.UserMessage("add")}
	want, wantErr := newLoop().Run(context.Background(), input)
	require.ErrorIs(t, wantErr, toolloop.ErrUnknownPrice)
	got, err := run(t, newEnv(t, temporal.Agent{Loop: newLoop()}), "", input)
	require.ErrorIs(t, err, toolloop.ErrUnknownPrice)
	looptest.AssertTranscript(t, want.Messages, got.Messages)
	assert.Equal(t, want.Accounting, got.Accounting)
	assert.Equal(t, 1, got.UnpricedTurns)
}

// TestCostFromTheWorker: each turn is priced on the worker, by the model
// its response names, from Loop.Models and then the built-in table; the
// run's cost and unpriced turns add up as in process.
func TestCostFromTheWorker(t *testing.T) {
	newLoop := func() *toolloop.AgentLoop {
		r1 := looptest.Calls(looptest.Call("call_1", "add", `{"a":1,"b":2}`))
		r1.Model, r1.Usage = "gpt-4o-mini-2024-07-18", toolloop.Usage{InputTokens: 1000, OutputTokens: 100}
		r2 := looptest.Calls(looptest.Call("call_2", "add", `{"a":3,"b":4}`))
		r2.Model, r2.Usage = "house-model", toolloop.Usage{InputTokens: 2000, OutputTokens: 200}
		r3 := looptest.Text("3 and 7")
		r3.Model, r3.Usage = "mystery-model", toolloop.Usage{InputTokens: 10, OutputTokens: 5}
		return &toolloop.AgentLoop{Model: looptest.NewModel(t, looptest.Turn{Reply: r1}, looptest.Turn{Reply: r2}, looptest.Turn{Reply: r3}),
			Tools:  goldenTools(),
			Models: toolloop.Models{"house-model": {Price: &toolloop.Price{Input: 1, Output: 2}}}}
	}
	input := []toolloop.Message{toolloop.UserMessage("add")}
	want, err := newLoop().Run(context.Background(), input)
	require.NoError(t, err)
	got, _, err := runChain(t, temporal.Agent{Loop: newLoop(), MaxTurnsPerExecution: 1}, temporal.Input{Messages: input})
	require.NoError(t, err)
	assert.Equal(t, want.Accounting, got.Accounting)
	assert.Equal(t, 1, got.UnpricedTurns)
	assert.InDelta(t, 1000*0.15/1e6+100*0.6/1e6+2000*1/1e6+200*2/1e6, got.Cost, 1e-12)
}

// TestContinueAsNewWhenSuggested: with no MaxTurnsPerExecution, the run
// continues as new when Temporal suggests it, after a turn, never before
// the first; the next execution's input carries the run.
func TestContinueAsNewWhenSuggested(t *testing.T) {
	g := readGolden(t, "happy_path")
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: looptest.NewModel(t, g.turns()[:1]...), Tools: goldenTools()}})
	env.SetContinueAsNewSuggested(true)
	env.ExecuteWorkflow(temporal.DefaultName, temporal.Input{Messages: g.Input})
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var in temporal.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
	require.NotNil(t, in.Carried)
	looptest.AssertValid(t, in.Messages)
	assert.Len(t, in.Messages, len(g.Input)+1+len(g.Replies[0].Message.ToolCalls), "one turn, every call answered")
}

// TestInputJSON: a run's input is {"messages": [...]}, as before runs
// could continue as new.
func TestInputJSON(t *testing.T) {
	b, err := json.Marshal(temporal.Input{Messages: []toolloop.Message{toolloop.UserMessage("hi")}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, string(b))
	var in temporal.Input
	require.NoError(t, json.Unmarshal(b, &in))
	assert.Nil(t, in.Carried)
	assert.Equal(t, "hi", in.Messages[0].Text())
}

// TestCallsPerTurn: the calls of a turn beyond AgentLoop.MaxCallsPerTurn
// are answered as not run, as in process.
func TestCallsPerTurn(t *testing.T) {
	newLoop := func() *toolloop.AgentLoop {
		calls := make([]toolloop.ToolCall, 4)
		for i := range calls {
			calls[i] = looptest.Call(fmt.Sprintf("call_%d", i), "add", `{"a":1,"b":2}`)
		}
		return &toolloop.AgentLoop{Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(calls...)},
			looptest.Turn{Reply: looptest.Text("done")}),
			Tools: goldenTools(), MaxCallsPerTurn: 2}
	}
	input := []toolloop.Message{toolloop.UserMessage("add")}
	want, wantErr := newLoop().Run(context.Background(), input)
	require.NoError(t, wantErr)
	got, err := run(t, newEnv(t, temporal.Agent{Loop: newLoop()}), "", input)
	require.NoError(t, err)
	looptest.AssertTranscript(t, want.Messages, got.Messages)
	assert.Equal(t, want.ToolCalls, got.ToolCalls)
	var notRun int
	for _, m := range got.Messages {
		if m.Result != nil && m.Result.IsError() {
			notRun++
			assert.Contains(t, m.Result.Text(), "at most 2 run per turn")
		}
	}
	assert.Equal(t, 2, notRun)
}

// TestWrapUpOverflowTrims: a wrap-up request too long for the model
// leaves out the oldest turns until it fits, as in process, so the run
// still ends with a final answer; when nothing fits, it ends with the
// limit and the provider's error.
func TestWrapUpOverflowTrims(t *testing.T) {
	add := func(id string) looptest.Turn {
		return looptest.Turn{Reply: looptest.Calls(looptest.Call(id, "add", `{"a":1,"b":2}`))}
	}
	model := looptest.NewModel(t, add("c1"), add("c2"), add("c3"), add("c4"),
		looptest.Turn{Err: overflowErr}, looptest.Turn{Err: overflowErr}, looptest.Turn{Reply: looptest.Text("final")})
	l := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), MaxIterations: 4, Budget: toolloop.Budget{WrapUp: true}}
	res, err := run(t, newEnv(t, temporal.Agent{Loop: l}), "", []toolloop.Message{toolloop.UserMessage("add")})
	require.ErrorIs(t, err, toolloop.ErrMaxIterations)
	assert.NotErrorIs(t, err, providers.ErrContextLength)
	assert.Equal(t, "final", res.FinalText)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, toolloop.WrapUpOmitted, res.Messages[1].Text())
	assert.NotContains(t, looptest.Results(res.Messages), "c1")
	assert.Contains(t, looptest.Results(res.Messages), "c4", "the last turn is kept while it fits")

	model = looptest.NewModel(t, add("c1"), looptest.Turn{Err: overflowErr, Times: 2})
	l = &toolloop.AgentLoop{Model: model, Tools: goldenTools(), MaxIterations: 1, Budget: toolloop.Budget{WrapUp: true}}
	res, err = run(t, newEnv(t, temporal.Agent{Loop: l}), "", []toolloop.Message{toolloop.UserMessage("add")})
	require.ErrorIs(t, err, toolloop.ErrMaxIterations)
	require.ErrorIs(t, err, providers.ErrContextLength)
	looptest.AssertValid(t, res.Messages)
}
