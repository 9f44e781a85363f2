package toolloop_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// Regression tests for what TestInnerRandomSchedules found, each cut
// down to the few calls that show it.

// orderedProgram is a program tool that prepares the given calls in
// order and, on its run-th run, runs them one after another in the order
// order(run) gives (indexes into calls), stopping at the first error, as
// a program whose parallel calls start in another order each time.
func orderedProgram(t *testing.T, calls []innerStep, order func(run int) []int) *toolloop.SchemaTool {
	t.Helper()
	return namedProgram(t, "prog", calls, order)
}

// namedProgram is orderedProgram under another name.
func namedProgram(t *testing.T, name string, calls []innerStep, order func(run int) []int) *toolloop.SchemaTool {
	t.Helper()
	var runs atomic.Int32
	tool, err := toolloop.NewSchemaTool(name, "Runs a program.", json.RawMessage(`{"type":"object"}`),
		func(ctx context.Context, call *toolloop.Call) (any, error) {
			run := int(runs.Add(1))
			in := call.Inner()
			ics := make([]*toolloop.InnerCall, len(calls))
			for i, c := range calls {
				ics[i] = in.Prepare(c.Name, c.Args)
			}
			for _, i := range order(run) {
				if _, err := ics[i].Run(ctx); err != nil {
					return nil, err
				}
			}
			return "done", nil
		})
	require.NoError(t, err)
	return tool
}

func pathArgs(p string) json.RawMessage { return json.RawMessage(`{"path":"` + p + `"}`) }

// A call served from the journal that a program run again did not reach
// (it stopped at a new ask first) stays in the journal: it used to be
// dropped, and ran again on the next resume.
func TestInnerJournalKeepsCallsNotReachedAgain(t *testing.T) {
	var c counter
	prog := orderedProgram(t, []innerStep{{"read", pathArgs("b")}, {"write", pathArgs("a")}, {"write", pathArgs("c")}},
		func(run int) []int {
			if run == 1 {
				return []int{0, 1} // read b runs; write a asks
			}
			return []int{1, 2, 0} // write a runs; write c asks before read b is reached
		})
	l := &toolloop.AgentLoop{Tools: registry(t, prog, c.tool("read", false), c.tool("write", true)),
		Guard: askWrites, PauseForApproval: true, Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "prog", `{}`))},
			looptest.Turn{Reply: looptest.Text("done")},
		)}
	res, err := l.Run(context.Background(), user("go"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	res, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c1/2": {Approved: true}})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.Len(t, res.Paused.Pending, 1)
	assert.Equal(t, "c1/3", res.Paused.Pending[0].CallID)
	res, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c1/3": {Approved: true}})
	require.NoError(t, err)
	assert.Equal(t, "done", looptest.Results(res.Messages)["c1"].Text())
	assert.Equal(t, 1, c.byCall("c1/1"), "the read ran once, though the second run did not reach it")
	assert.Equal(t, 1, c.byCall("c1/2"))
	assert.Equal(t, 1, c.byCall("c1/3"))
	assert.Equal(t, 4, res.ToolCalls)
}

// A program run again on resume that returns before it makes again the
// calls it had made (it does not wait for them) counts them all the same:
// they ran. It used to count none, and RunResult.ToolCalls missed them.
func TestInnerCallsNotMadeAgainCount(t *testing.T) {
	var c counter
	prog := orderedProgram(t, []innerStep{{"read", pathArgs("a")}, {"write", pathArgs("b")}}, func(run int) []int {
		if run == 1 {
			return []int{0, 1}
		}
		return nil // its calls would come after it returned
	})
	l := &toolloop.AgentLoop{Tools: registry(t, prog, c.tool("read", false), c.tool("write", true)),
		Guard: askWrites, PauseForApproval: true, Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "prog", `{}`))},
			looptest.Turn{Reply: looptest.Text("done")},
		)}
	res, err := l.Run(context.Background(), user("go"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	res, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c1/2": {Approved: true}})
	require.NoError(t, err)
	r := looptest.Results(res.Messages)["c1"]
	require.NotNil(t, r)
	assert.Equal(t, 1, c.byCall("c1/1"))
	assert.Equal(t, 0, c.byCall("c1/2"), "the program did not make it again")
	assert.Equal(t, 2, r.Meta.InnerCalls, "the read ran, and the write was made")
	assert.Equal(t, 3, res.ToolCalls)
}

// Budget.MaxToolCalls holds across a pause: the inner calls a paused
// program made, and those of the turn's programs that finished before
// the pause, count on resume before any new inner call. They used to be
// forgotten, and the resumed run spent the budget again.
func TestInnerBudgetHoldsAcrossPause(t *testing.T) {
	t.Run("journal", func(t *testing.T) {
		var c counter
		prog := orderedProgram(t, []innerStep{{"read", pathArgs("a")}, {"write", pathArgs("b")}, {"read", pathArgs("c")}},
			func(int) []int { return []int{0, 1, 2} })
		l := &toolloop.AgentLoop{Tools: registry(t, prog, c.tool("read", false), c.tool("write", true)),
			Guard: askWrites, PauseForApproval: true, Model: looptest.NewModel(t,
				looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "prog", `{}`))},
			)}
		l.Budget.MaxToolCalls = 3 // the program, its read and its write
		res, err := l.Run(context.Background(), user("go"))
		require.ErrorIs(t, err, toolloop.ErrPaused)
		res, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c1/2": {Approved: true}})
		require.ErrorIs(t, err, toolloop.ErrBudget)
		assert.Equal(t, 3, res.ToolCalls, "the call past the budget does not count")
		assert.Equal(t, 1, c.byCall("c1/1"))
		assert.Equal(t, 1, c.byCall("c1/2"))
		assert.Equal(t, 0, c.byCall("c1/3"), "the budget was spent")
	})
	t.Run("finished calls of the turn", func(t *testing.T) {
		var c counter
		reads := orderedProgram(t, []innerStep{{"read", pathArgs("a")}, {"read", pathArgs("b")}}, func(int) []int { return []int{0, 1} })
		writes := namedProgram(t, "writes", []innerStep{{"write", pathArgs("x")}, {"read", pathArgs("y")}}, func(int) []int { return []int{0, 1} })
		l := &toolloop.AgentLoop{Tools: registry(t, reads, writes, c.tool("read", false), c.tool("write", true)),
			Guard: askWrites, PauseForApproval: true, Model: looptest.NewModel(t,
				looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "prog", `{}`), looptest.Call("c2", "writes", `{}`))},
			)}
		l.Budget.MaxToolCalls = 5 // the programs, c1's two reads and c2's write
		res, err := l.Run(context.Background(), user("go"))
		require.ErrorIs(t, err, toolloop.ErrPaused)
		_, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c2/1": {Approved: true}})
		require.ErrorIs(t, err, toolloop.ErrBudget)
		assert.Equal(t, 1, c.byCall("c1/1"))
		assert.Equal(t, 1, c.byCall("c1/2"))
		assert.Equal(t, 1, c.byCall("c2/1"))
		assert.Equal(t, 0, c.byCall("c2/2"), "the budget was spent")
	})
}

// A program's call that paused on an inner call's ask, and that an
// interrupt then ended, says that its inner calls stand and counts them;
// it used to say it had not run.
func TestInnerInterruptedPausedProgramSaysWhatRan(t *testing.T) {
	var c counter
	in := &toolloop.Inbox{}
	prog := orderedProgram(t, []innerStep{{"read", pathArgs("a")}, {"write", pathArgs("b")}}, func(int) []int { return []int{0, 1} })
	l := &toolloop.AgentLoop{Tools: registry(t, prog, c.tool("read", false), c.tool("write", true)),
		Guard: toolloop.GuardFunc(func(ctx context.Context, call *toolloop.Call) toolloop.Verdict {
			if call.Name == "write" { // the person interrupts as the write asks
				in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow})
			}
			return askWrites(ctx, call)
		}), PauseForApproval: true, Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "prog", `{}`))},
		)}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("go"))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	r := looptest.Results(res.Messages)["c1"]
	require.NotNil(t, r)
	assert.False(t, steerSaysNotRun(r), "the program ran: %s", r.Text())
	assert.Equal(t, 2, r.Meta.InnerCalls)
	assert.Equal(t, 1, c.byCall("c1/1"))
	assert.Equal(t, 3, res.ToolCalls)

	// The same when the caller cancels the resume before the program ran again.
	var c2 counter
	prog = orderedProgram(t, []innerStep{{"read", pathArgs("a")}, {"write", pathArgs("b")}}, func(int) []int { return []int{0, 1} })
	l = &toolloop.AgentLoop{Tools: registry(t, prog, c2.tool("read", false), c2.tool("write", true)),
		Guard: askWrites, PauseForApproval: true, Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "prog", `{}`))},
		)}
	res, err = l.Run(context.Background(), user("go"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, _ = l.Resume(ctx, res.Paused, map[string]toolloop.Approval{"c1/2": {Approved: true}})
	require.NotNil(t, res)
	r = looptest.Results(res.Messages)["c1"]
	require.NotNil(t, r)
	assert.Equal(t, 2, r.Meta.InnerCalls)
	assert.Equal(t, 3, res.ToolCalls)
}

// An inner call made through an Inner kept after its call ended is
// answered as not run, and emits nothing once the run has ended:
// run.end is a run's last event.
func TestInnerCallAfterTheRunEndedEmitsNothing(t *testing.T) {
	var kept *toolloop.Inner
	var c counter
	keep, err := toolloop.NewSchemaTool("keep", "Keeps Inner.", json.RawMessage(`{"type":"object"}`),
		func(_ context.Context, call *toolloop.Call) (any, error) {
			kept = call.Inner()
			return "kept", nil
		})
	require.NoError(t, err)
	var mu sync.Mutex
	var events []toolloop.Event
	l := &toolloop.AgentLoop{Tools: registry(t, keep, c.tool("read", false)), Model: looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("k1", "keep", `{}`))},
		looptest.Turn{Reply: looptest.Text("done")},
	), OnEvent: func(e toolloop.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}}
	_, err = l.Run(context.Background(), user("go"))
	require.NoError(t, err)
	r, err := kept.Prepare("read", pathArgs("a")).Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	assert.Equal(t, 0, c.byCall("k1/1"))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, events)
	assert.Equal(t, toolloop.EventRunEnd, events[len(events)-1].Type, "nothing after run.end")
}

// The inner calls of a program whose call was answered for (it timed out
// and did not stop) emit nothing more, and read nothing of the run that
// went on without it: an inner call's give-up used to read the run's
// turn as the loop moved on (a data race), and emit after run.end.
func TestInnerCallsOfAnAbandonedProgram(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		hang := toolloop.NewTool("hang", "Hangs.", func(context.Context, struct{}) (any, error) {
			<-release // ignores its context
			return "late", nil
		})
		hang.Timeout = 10 * time.Second
		// The program runs its inner call under a context of its own, so
		// that it outlives the program's call, which times out first.
		prog, err := toolloop.NewSchemaTool("prog", "Runs a program.", json.RawMessage(`{"type":"object"}`),
			func(ctx context.Context, call *toolloop.Call) (any, error) {
				return call.Inner().Prepare("hang", nil).Run(context.WithoutCancel(ctx))
			})
		require.NoError(t, err)
		prog.Timeout = time.Second
		var mu sync.Mutex
		var events []toolloop.Event
		l := &toolloop.AgentLoop{Tools: registry(t, prog, hang), Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "prog", `{}`))},
			looptest.Turn{Reply: looptest.Text("done")},
		), OnEvent: func(e toolloop.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}}
		res, err := l.Run(context.Background(), user("go"))
		require.NoError(t, err)
		r := looptest.Results(res.Messages)["c1"]
		require.NotNil(t, r)
		assert.Equal(t, toolloop.KindTimeout, r.Error.Kind)
		time.Sleep(time.Minute) // the inner call gives up on its tool
		close(release)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, toolloop.EventRunEnd, events[len(events)-1].Type, "nothing after run.end")
	})
}
