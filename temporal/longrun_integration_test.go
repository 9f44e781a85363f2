package temporal_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/internal/golden"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// tickModel calls the tick tool once per turn, with a call ID naming the
// turn, until turns calls are answered, then answers in text. It reads
// the turn from the transcript alone, so any worker in any process gives
// the same answer to the same turn.
func tickModel(turns int) toolloop.Model {
	return toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == toolloop.RoleAssistant {
				n++
			}
		}
		if n >= turns {
			return looptest.Text("done after " + strconv.Itoa(n) + " ticks"), nil
		}
		resp := looptest.Calls(looptest.Call("c"+strconv.Itoa(n+1), "tick", `{}`))
		resp.Usage = toolloop.Usage{InputTokens: 10, OutputTokens: 2}
		return resp, nil
	})
}

// ticker is the tick tool: it counts its runs by call ID.
type ticker struct {
	mu   sync.Mutex
	runs map[string]int
}

func (tk *ticker) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "tick", Description: "Tick.", Annotations: toolloop.Annotations{Destructive: true}}
}

func (tk *ticker) Run(_ context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if tk.runs == nil {
		tk.runs = map[string]int{}
	}
	tk.runs[call.ID]++
	return toolloop.TextResult("ok"), nil
}

// tickRun runs tickModel(turns) with the ticker on a real server, on a
// new task queue, and returns the run's first execution, once started,
// and a function that waits for its result.
func tickRun(ctx context.Context, tb testing.TB, c client.Client, turns, perExec int) (client.WorkflowRun, *ticker, func() (*toolloop.RunResult, error)) {
	tb.Helper()
	tk := &ticker{}
	var reg toolloop.ToolRegistry
	reg.MustRegister(tk)
	queue := "ticks-" + fmt.Sprint(time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	temporal.Register(w, temporal.Agent{
		Loop:                 &toolloop.AgentLoop{Model: tickModel(turns), Tools: &reg, Budget: toolloop.Budget{MaxTurns: turns + 1}},
		MaxTurnsPerExecution: perExec,
	})
	require.NoError(tb, w.Start())
	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		[]toolloop.Message{toolloop.UserMessage("Tick.")})
	if err != nil {
		w.Stop()
		require.NoError(tb, err)
	}
	return run, tk, func() (*toolloop.RunResult, error) {
		defer w.Stop()
		return temporal.Wait(ctx, run)
	}
}

// storeConverter is a data converter with a StoreCodec on a new
// in-memory store.
func storeConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), &temporal.StoreCodec{Store: &memStore{}})
}

// TestIntegrationThousandTurns runs 1,000 model turns, each with one
// tool call, on a real server, with the transcripts in a store (a
// StoreCodec): each model turn sends the whole transcript. With no turn
// limit of its own, the run continues as new whenever the server suggests
// it, as its history nears Temporal's limit on events, carrying its
// transcript and accounting.
// Describe and Wait follow it to its last execution; every call ran
// exactly once. (BenchmarkIntegrationTurns measures the same runs.)
func TestIntegrationThousandTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 turns take half a minute (two with -race)")
	}
	c, err := dialWith(serverAddress(t), storeConverter())
	require.NoError(t, err)
	defer c.Close()
	const turns = 1000
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	start := time.Now()
	run, tk, wait := tickRun(ctx, t, c, turns, -1)
	firstRunID := run.GetRunID()
	// The status query reaches the latest execution, past the first ones.
	require.Eventually(t, func() bool {
		st, err := temporal.Describe(ctx, c, run.GetID(), "")
		return err == nil && st.Turn > 400
	}, 4*time.Minute, 500*time.Millisecond)
	res, err := wait()
	require.NoError(t, err)
	t.Logf("%d turns in %s", res.Turns, time.Since(start).Round(time.Millisecond))

	assert.Equal(t, turns+1, res.Turns)
	assert.Equal(t, "done after 1000 ticks", res.FinalText)
	assert.Equal(t, turns, res.ToolCalls)
	assert.Equal(t, toolloop.Usage{InputTokens: 10 * turns, OutputTokens: 2 * turns}, res.Usage)
	assert.Len(t, res.Executions, turns)
	looptest.AssertValid(t, res.Messages)
	assert.Len(t, res.Messages, 1+2*turns+1)
	tk.mu.Lock()
	assert.Len(t, tk.runs, turns)
	for id, n := range tk.runs {
		assert.Equal(t, 1, n, "call %s ran once", id)
	}
	tk.mu.Unlock()
	for id, r := range looptest.Results(res.Messages) {
		assert.False(t, r.IsError(), "%s: %s", id, r.Text())
	}

	// The first execution continued as new, and so did the next.
	desc, err := c.DescribeWorkflowExecution(ctx, run.GetID(), firstRunID)
	require.NoError(t, err)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, desc.GetWorkflowExecutionInfo().GetStatus())
	execs := countExecutions(ctx, t, c, run.GetID())
	assert.GreaterOrEqual(t, execs, 3)
	t.Logf("%d workflow executions", execs)
}

// BenchmarkIntegrationTurns measures runs of 1,000 turns (one tool call
// each) on a real server: with the default data converter, and with the
// transcripts in a store; continued as new every 100 turns (the default)
// or only when the server suggests it. Each op is a whole run; turns/s is
// the rate.
func BenchmarkIntegrationTurns(b *testing.B) {
	const turns = 1000
	for _, bc := range []struct {
		name    string
		dc      func() converter.DataConverter
		perExec int
	}{
		{"plain", func() converter.DataConverter { return nil }, 0},
		{"plain_server_suggests", func() converter.DataConverter { return nil }, -1},
		{"store", storeConverter, 0},
		{"store_server_suggests", storeConverter, -1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := dialWith(serverAddress(b), bc.dc())
			require.NoError(b, err)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			start := time.Now()
			for b.Loop() {
				_, _, wait := tickRun(ctx, b, c, turns, bc.perExec)
				res, err := wait()
				require.NoError(b, err)
				require.Equal(b, turns+1, res.Turns)
			}
			b.ReportMetric(float64(b.N*(turns+1))/time.Since(start).Seconds(), "turns/s")
		})
	}
}

// countExecutions counts the executions of a workflow ID by following
// the continue-as-new chain from the latest one back to the first.
func countExecutions(ctx context.Context, t testing.TB, c client.Client, id string) int {
	t.Helper()
	n := 0
	runID := ""
	for {
		it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		require.True(t, it.HasNext())
		first, err := it.Next()
		require.NoError(t, err)
		n++
		prev := first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if prev == "" {
			return n
		}
		runID = prev
		require.Less(t, n, 10_000)
	}
}

// gateTool is a destructive tool that marks its runs, as markerTool
// does; the call named block waits, started, until its worker is killed.
type gateTool struct {
	dir   string
	block string
}

func (g *gateTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "gate", Description: "Pass a gate.", Annotations: toolloop.Annotations{Destructive: true}}
}

func (g *gateTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	mark(g.dir, "started-"+call.ID)
	if call.ID == g.block {
		select {
		case <-time.After(time.Minute):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	mark(g.dir, "completed-"+call.ID)
	return toolloop.TextResult("passed " + call.ID), nil
}

// longCrashTurns is how many gates the long crash test's model passes;
// the call of turn 7 blocks.
const (
	longCrashTurns = 12
	longCrashBlock = "g7"
)

// longCrashAgent passes a gate per turn and continues as new every three
// turns: the worker is killed in the third execution.
func longCrashAgent(dir string) temporal.Agent {
	var reg toolloop.ToolRegistry
	reg.MustRegister(&gateTool{dir: dir, block: longCrashBlock})
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == toolloop.RoleAssistant {
				n++
			}
		}
		if n >= longCrashTurns {
			return looptest.Text("all gates passed"), nil
		}
		return looptest.Calls(looptest.Call("g"+strconv.Itoa(n+1), "gate", `{}`)), nil
	})
	return temporal.Agent{
		Name:                 "long",
		Loop:                 &toolloop.AgentLoop{Model: model, Tools: &reg},
		HeartbeatTimeout:     2 * time.Second,
		MaxTurnsPerExecution: 3,
	}
}

// TestIntegrationWorkerKilledLongRun kills a worker with SIGKILL while a
// destructive tool runs, in the third execution of a run that continues
// as new every three turns; a second worker replays that execution from
// its carried state and finishes the run. No completed call ran twice,
// and the interrupted one was never run again: it has an interrupted
// result.
func TestIntegrationWorkerKilledLongRun(t *testing.T) {
	addr := serverAddress(t)
	c, err := dial(addr)
	require.NoError(t, err)
	defer c.Close()
	dir := t.TempDir()
	queue := "longcrash-" + fmt.Sprint(time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	first := startWorker(t, addr, queue, dir)
	opts := temporal.RunOptions{Agent: "long", StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}}
	run, err := temporal.Start(ctx, c, opts, []toolloop.Message{toolloop.UserMessage("Pass the gates.")})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return marks(t, dir, "started-"+longCrashBlock) == 1 },
		time.Minute, 20*time.Millisecond)
	require.NoError(t, first.Process.Kill()) // SIGKILL
	_, _ = first.Process.Wait()
	startWorker(t, addr, queue, dir)

	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "all gates passed", res.FinalText)
	assert.Equal(t, longCrashTurns+1, res.Turns)
	assert.Equal(t, longCrashTurns, res.ToolCalls)
	results := looptest.Results(res.Messages)
	require.Len(t, results, longCrashTurns)
	for i := 1; i <= longCrashTurns; i++ {
		id := "g" + strconv.Itoa(i)
		assert.Equal(t, 1, marks(t, dir, "started-"+id), "%s started once", id)
		r := results[id]
		require.NotNil(t, r, id)
		if id == longCrashBlock {
			assert.Equal(t, 0, marks(t, dir, "completed-"+id), "the interrupted call never ran again")
			require.NotNil(t, r.Error)
			assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
			assert.Equal(t, toolloop.InterruptedMessage, r.Text())
			continue
		}
		assert.Equal(t, 1, marks(t, dir, "completed-"+id), "%s completed once", id)
		assert.Equal(t, "passed "+id, r.Text())
	}
	assert.Equal(t, 5, countExecutions(ctx, t, c, run.GetID()), "a new execution every three turns")
}

// TestIntegrationApprovalAfterContinueAsNew: a write that waits for
// approval in the third execution of a run is seen by Describe and
// decided by Decide, both aimed at the workflow ID alone, which reach the
// latest execution.
func TestIntegrationApprovalAfterContinueAsNew(t *testing.T) {
	c, err := dial(serverAddress(t))
	require.NoError(t, err)
	defer c.Close()
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "add", `{"a":1,"b":2}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_2", "add", `{"a":3,"b":4}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_3", "write_file", `{"path":"sums.txt","content":"3 7"}`))},
		looptest.Turn{Reply: looptest.Text("Wrote the sums.")})
	queue := "approval-can-" + fmt.Sprint(time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	temporal.Register(w, temporal.Agent{
		Loop:                 &toolloop.AgentLoop{Model: model, Tools: goldenTools(), Guard: destructiveAsks, PauseForApproval: true},
		MaxTurnsPerExecution: 1,
	})
	require.NoError(t, w.Start())
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		[]toolloop.Message{toolloop.UserMessage("Add, then write the sums.")})
	require.NoError(t, err)
	var st *temporal.Status
	require.Eventually(t, func() bool {
		st, err = temporal.Describe(ctx, c, run.GetID(), "")
		return err == nil && len(st.Awaiting()) == 1
	}, 30*time.Second, 100*time.Millisecond)
	assert.Equal(t, 3, st.Turn)
	require.NoError(t, temporal.Decide(ctx, c, run.GetID(), "", temporal.Decision{CallID: "call_3", Approval: toolloop.Approval{Approved: true}}))
	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	assert.Equal(t, "Wrote the sums.", res.FinalText)
	assert.Equal(t, "wrote sums.txt", looptest.Results(res.Messages)["call_3"].Text())
	assert.Equal(t, 4, countExecutions(ctx, t, c, run.GetID()))
}

// replayedLongRuns are the long-run golden scenarios run on a real server,
// continued as new every two turns; with -record their histories, one
// file per execution, go to testdata/history for TestReplay.
var replayedLongRuns = []string{"compact_overflow", "compact_threshold", "budget_tool_calls_wrap_up", "stop_when", "failures_consecutive"}

// longRunAgent is the agent of a replayed long-run scenario; model may be
// nil for the replayer.
func longRunAgent(name string, model toolloop.Model) temporal.Agent {
	l := &toolloop.AgentLoop{Model: model, Tools: goldenTools()}
	golden.Setups[name](l)
	return temporal.Agent{Loop: l, MaxTurnsPerExecution: 2}
}

// TestIntegrationLongRunGoldens runs long-run golden scenarios on a real
// server, continued as new every two turns: the transcripts are the core's.
func TestIntegrationLongRunGoldens(t *testing.T) {
	c, err := dial(serverAddress(t))
	require.NoError(t, err)
	defer c.Close()
	for _, name := range replayedLongRuns {
		t.Run(name, func(t *testing.T) {
			var tt golden.Scenario
			for _, s := range golden.LongRun {
				if s.Name == name {
					tt = s
				}
			}
			g := readGolden(t, name)
			queue := "longrun-" + name + "-" + fmt.Sprint(time.Now().UnixNano())
			w := worker.New(c, queue, worker.Options{})
			temporal.Register(w, longRunAgent(name, looptest.NewModel(t, g.longRunTurns()...)))
			require.NoError(t, w.Start())
			defer w.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}}, g.Input)
			require.NoError(t, err)
			res, err := temporal.Wait(ctx, run)
			if tt.Err != nil {
				require.ErrorIs(t, err, tt.Err)
			} else {
				require.NoError(t, err)
			}
			require.NotNil(t, res)
			looptest.AssertTranscript(t, g.Transcript, res.Messages)
			if *record {
				recordChain(t, c, run.GetID(), "longrun-"+name)
			}
		})
	}
}

// recordChain writes the history of every execution of a workflow to
// testdata/history, as prefix-1.json, prefix-2.json and so on.
func recordChain(t *testing.T, c client.Client, id, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	runIDs := []string{desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()}
	for {
		it := c.GetWorkflowHistory(ctx, id, runIDs[0], false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		require.True(t, it.HasNext())
		e, err := it.Next()
		require.NoError(t, err)
		prev := e.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if prev == "" {
			break
		}
		runIDs = append([]string{prev}, runIDs...)
	}
	for i, r := range runIDs {
		recordHistory(t, c, id, r, fmt.Sprintf("%s-%d.json", prefix, i+1))
	}
}

// durationAgent is the agent of TestIntegrationMaxDuration; model may be
// nil for the replayer.
func durationAgent(model toolloop.Model) temporal.Agent {
	return temporal.Agent{Loop: &toolloop.AgentLoop{
		Model: model, Tools: goldenTools(),
		ContextManagers: []toolloop.ContextManager{&toolloop.ClearToolResults{}},
		Budget:          toolloop.Budget{MaxDuration: 2 * time.Second, WrapUp: true},
	}, HeartbeatTimeout: time.Second}
}

// TestIntegrationMaxDuration: on a real server, Budget.MaxDuration's
// timer cancels the call in progress; the context managers run again and
// the run wraps up with tools disabled, then ends with the duration limit.
// With -record its history joins the replay test.
func TestIntegrationMaxDuration(t *testing.T) {
	c, err := dial(serverAddress(t))
	require.NoError(t, err)
	defer c.Close()
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "add", `{"a":1,"b":2}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_2", "hang", `{}`))},
		looptest.Turn{Reply: looptest.Text("1+2=3; the second step hung."), Check: func(req *toolloop.Request) string {
			if req.ToolChoice.Mode != toolloop.ToolChoiceNone {
				return "the wrap-up turn must set tool choice none"
			}
			return ""
		}})
	queue := "duration-" + fmt.Sprint(time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	temporal.Register(w, durationAgent(model))
	require.NoError(t, w.Start())
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		[]toolloop.Message{toolloop.UserMessage("Add, then wait.")})
	require.NoError(t, err)
	res, err := temporal.Wait(ctx, run)
	var be *toolloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, toolloop.BudgetError{Limit: toolloop.LimitDuration, Used: 2, Max: 2}, *be)
	require.NotNil(t, res)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "1+2=3; the second step hung.", res.FinalText)
	assert.Equal(t, 3, res.Turns)
	r := looptest.Results(res.Messages)["call_2"]
	require.NotNil(t, r.Error)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	if *record {
		recordHistory(t, c, run.GetID(), run.GetRunID(), "longrun-duration-1.json")
	}
}
