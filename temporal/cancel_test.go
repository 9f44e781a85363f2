package temporal_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	tsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// TestCancelRunningCalls cancels the workflow while two calls run: the
// activities are cancelled, both calls get canceled results, and the run
// ends aborted with a valid transcript (the core cancel_mid_turn scenario).
func TestCancelRunningCalls(t *testing.T) {
	g := readGolden(t, "cancel_mid_turn")
	var env *testsuite.TestWorkflowEnvironment
	var running sync.WaitGroup
	running.Add(2)
	var stopped atomic.Int32
	reg := goldenTools()
	reg.MustRegister(toolloop.NewTool("block", "Wait until the run is cancelled.", func(ctx context.Context, _ struct{}) (any, error) {
		running.Done()
		<-ctx.Done()
		stopped.Add(1)
		return nil, ctx.Err()
	}))
	env = newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: looptest.NewModel(t, g.turns()...), Tools: reg},
		HeartbeatTimeout: 200 * time.Millisecond})
	go func() {
		running.Wait() // both calls are inside their tool
		env.CancelWorkflow()
	}()
	res, err := run(t, env, "", g.Input)
	require.ErrorIs(t, err, context.Canceled)
	var canceled *tsdk.CanceledError
	require.ErrorAs(t, err, &canceled)
	require.NotNil(t, res)
	assert.Equal(t, toolloop.StopAborted, res.StopReason)
	looptest.AssertValid(t, res.Messages)
	results := looptest.Results(res.Messages)
	require.Len(t, results, 2)
	for id, r := range results {
		require.NotNil(t, r.Error, id)
		assert.Equal(t, toolloop.KindCanceled, r.Error.Kind, id)
		assert.Equal(t, "tool block was canceled: the run was stopped while it ran", r.Text())
	}
	assert.Eventually(t, func() bool { return stopped.Load() == 2 }, 5*time.Second, 10*time.Millisecond,
		"the cancelled activities stop their tools")
}

// TestCancelWhileAwaiting cancels a run whose write waits for approval:
// the read of the same turn keeps its result, the write is not run.
func TestCancelWhileAwaiting(t *testing.T) {
	g := readGolden(t, "pause_resume_approve")
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{
		Model: looptest.NewModel(t, looptest.Turn{Reply: g.Replies[0]}), Tools: goldenTools(), Guard: destructiveAsks, PauseForApproval: true,
	}})
	env.RegisterDelayedCallback(env.CancelWorkflow, 24*time.Hour)
	res, err := run(t, env, "", g.Input)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	looptest.AssertValid(t, res.Messages)
	results := looptest.Results(res.Messages)
	assert.False(t, results["call_1"].IsError(), "the read finished before the cancellation")
	for _, id := range []string{"call_2", "call_3"} {
		require.NotNil(t, results[id].Error)
		assert.Equal(t, toolloop.KindCanceled, results[id].Error.Kind)
	}
	assert.Equal(t, toolloop.StopAborted, res.StopReason)
}

// TestProgressHeartbeats: a tool's progress and output go out as the
// heartbeat details of its activity.
func TestProgressHeartbeats(t *testing.T) {
	tool := newProgressTool()
	var reg toolloop.ToolRegistry
	reg.MustRegister(tool)
	var events sync.Map // event types seen by the user's OnEvent
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "build", `{}`))},
		looptest.Turn{Reply: looptest.Text("Built.")})
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: model, Tools: &reg,
		OnEvent: func(e toolloop.Event) { events.Store(e.Type, true) }},
		HeartbeatTimeout: 250 * time.Millisecond})
	type details struct {
		CallID   string             `json:"call_id"`
		Turn     int                `json:"turn"`
		Progress *toolloop.Progress `json:"progress"`
		Partial  string             `json:"partial"`
	}
	var mu sync.Mutex
	var seen []details
	env.SetOnActivityHeartbeatListener(func(info *activity.Info, v converter.EncodedValues) {
		var d details
		if info.ActivityType.Name != temporal.DefaultName+".call" || v.Get(&d) != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, d)
		if d.Progress != nil && d.Partial != "" {
			select {
			case <-tool.release:
			default:
				close(tool.release)
			}
		}
	})
	res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("build it")})
	require.NoError(t, err)
	assert.Equal(t, "Built.", res.FinalText)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	last := seen[len(seen)-1]
	assert.Equal(t, details{CallID: "call_1", Turn: 1, Progress: &toolloop.Progress{Message: "compiling", Done: 3, Total: 4}, Partial: "ok  pkg/a\n"}, last)
	for _, typ := range []toolloop.EventType{toolloop.EventModelRequest, toolloop.EventModelResponse, toolloop.EventStart,
		toolloop.EventProgress, toolloop.EventPartialResult, toolloop.EventComplete} {
		_, ok := events.Load(typ)
		assert.True(t, ok, "OnEvent got %s", typ)
	}
}

// gauge is a tool that records how many of its calls run at once, and
// whether an exclusive call ever ran alongside another.
type gauge struct {
	mu              sync.Mutex
	now, max        int
	exclusiveShared bool
}

type gaugeIn struct {
	Exclusive bool `json:"exclusive,omitempty"`
}

func (g *gauge) tools() []toolloop.Tool {
	run := func(excl bool) func(context.Context, gaugeIn) (any, error) {
		return func(context.Context, gaugeIn) (any, error) {
			g.mu.Lock()
			g.now++
			g.max = max(g.max, g.now)
			if excl && g.now > 1 {
				g.exclusiveShared = true
			}
			g.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			g.mu.Lock()
			g.now--
			g.mu.Unlock()
			return "ok", nil
		}
	}
	shared := toolloop.NewTool("work", "Work a little.", run(false))
	excl := toolloop.NewTool("migrate", "Work alone.", run(true))
	excl.Exclusive = true
	return []toolloop.Tool{shared, excl}
}

// TestConcurrencyLimits: calls of a turn run at once up to MaxConcurrency,
// an exclusive tool runs alone, and OnEvent sees one event at a time, as
// in process.
func TestConcurrencyLimits(t *testing.T) {
	g := &gauge{}
	var reg toolloop.ToolRegistry
	reg.MustRegister(g.tools()...)
	var calls []toolloop.ToolCall
	for i, name := range []string{"work", "work", "work", "migrate", "work", "work"} {
		calls = append(calls, toolloop.ToolCall{ID: "call_" + string(rune('a'+i)), Name: name, Arguments: json.RawMessage(`{}`)})
	}
	model := looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(calls...)}, looptest.Turn{Reply: looptest.Text("done")})
	var inEvent, overlapped atomic.Int32
	onEvent := func(toolloop.Event) {
		if inEvent.Add(1) > 1 {
			overlapped.Add(1)
		}
		time.Sleep(time.Millisecond)
		inEvent.Add(-1)
	}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: model, Tools: &reg, OnEvent: onEvent, Limits: toolloop.Limits{MaxConcurrency: 2}}})
	res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("work")})
	require.NoError(t, err)
	assert.Zero(t, overlapped.Load(), "OnEvent sees one event at a time")
	looptest.AssertValid(t, res.Messages)
	assert.Len(t, looptest.Results(res.Messages), 6)
	assert.Equal(t, 2, g.max)
	assert.False(t, g.exclusiveShared, "the exclusive call ran alongside another")
}
