package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// program is a tool that makes the inner calls its arguments list (see
// toolloop.Inner), one after another or all at once, as a code-mode
// program would, and answers with one line per inner call. runs counts
// its runs: it runs again from the start when its call resumes.
type program struct {
	runs atomic.Int32
}

type programIn struct {
	Calls    []programStep `json:"calls"`
	Parallel bool          `json:"parallel,omitempty"`
}

// programStep is one inner call: a tool and the path it gets.
type programStep struct {
	Tool string `json:"tool"`
	Path string `json:"path"`
}

func (p *program) tool() toolloop.Tool {
	t, err := toolloop.NewSchemaTool("program", "Runs a program of tool calls.",
		json.RawMessage(`{"type":"object","properties":{"calls":{"type":"array"},"parallel":{"type":"boolean"}}}`),
		func(ctx context.Context, call *toolloop.Call) (any, error) {
			p.runs.Add(1)
			var in programIn
			if err := call.Bind(&in); err != nil {
				return nil, err
			}
			inner := call.Inner()
			if inner == nil {
				return nil, errors.New("no inner calls")
			}
			ics := make([]*toolloop.InnerCall, len(in.Calls))
			for i, s := range in.Calls {
				args, err := json.Marshal(pathIn{Path: s.Path})
				if err != nil {
					return nil, err
				}
				ics[i] = inner.Prepare(s.Tool, args)
			}
			lines := make([]string, len(ics))
			errs := make([]error, len(ics))
			do := func(i int) {
				r, err := ics[i].Run(ctx)
				switch {
				case err != nil:
					errs[i] = err
				case r.Status == toolloop.StatusError:
					lines[i] = fmt.Sprintf("%s %s: error %s", ics[i].ID(), r.Name, r.Error.Kind)
				default:
					lines[i] = fmt.Sprintf("%s %s: %s", ics[i].ID(), r.Name, r.Text())
				}
			}
			if in.Parallel {
				var wg sync.WaitGroup
				for i := range ics {
					wg.Go(func() { do(i) })
				}
				wg.Wait()
			} else {
				for i := range ics {
					if do(i); errs[i] != nil {
						break
					}
				}
			}
			if err := errors.Join(errs...); err != nil {
				return nil, err // paused: the tool must return the error
			}
			return strings.Join(lines, "\n"), nil
		})
	if err != nil {
		panic(err)
	}
	return t
}

// programLead is an agent whose first turn runs a program (call_1) of the
// given steps ("read_file a", "delete_file b"); deletes ask (guard, nil
// for destructiveAsks). Its model answers from the transcript alone, so
// that a worker that never saw the run's start gives the same answer,
// and calls the program only while no call has its result.
func programLead(c *runCounter, p *program, guard toolloop.Guard, parallel bool, steps ...string) *toolloop.AgentLoop {
	in := programIn{Calls: []programStep{}, Parallel: parallel}
	for _, s := range steps {
		name, path, _ := strings.Cut(s, " ")
		in.Calls = append(in.Calls, programStep{Tool: name, Path: path})
	}
	args, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	if guard == nil {
		guard = destructiveAsks
	}
	var tools toolloop.ToolRegistry
	tools.MustRegister(p.tool(), c.tool("read_file", false), c.tool("delete_file", true))
	return &toolloop.AgentLoop{
		Model: toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			for _, m := range req.Messages {
				if m.Role == toolloop.RoleTool { // the program ran, or was stopped
					return looptest.Text("the program ran"), nil
				}
			}
			return looptest.Calls(looptest.Call("call_1", "program", string(args))), nil
		}),
		Tools: &tools, Guard: guard, PauseForApproval: true,
	}
}

// awaitingNow queries the workflow's status and returns its calls that
// wait for a decision.
func awaitingNow(t *testing.T, env *testsuite.TestWorkflowEnvironment) []temporal.CallStatus {
	t.Helper()
	v, err := env.QueryWorkflow(temporal.StatusQuery)
	require.NoError(t, err)
	var st temporal.Status
	require.NoError(t, v.Get(&st))
	return st.Awaiting()
}

// TestProgramApprovalBySignal: a program's second inner call asks; the
// workflow waits, its status lists the inner call under its qualified ID;
// a decision makes the program run again, with the first inner call
// served from its journal, not run again, and the asked one run (or
// denied) once.
func TestProgramApprovalBySignal(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprint("approve=", approve), func(t *testing.T) {
			c := &runCounter{}
			var p program
			env := newEnv(t, temporal.Agent{Loop: programLead(c, &p, nil, false, "read_file a", "delete_file b", "read_file c")})
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(temporal.StatusQuery)
				require.NoError(t, err)
				var st temporal.Status
				require.NoError(t, v.Get(&st))
				require.Len(t, st.Calls, 1)
				assert.Equal(t, "call_1", st.Calls[0].CallID)
				assert.Equal(t, temporal.CallAwaiting, st.Calls[0].State)
				require.NotNil(t, st.Calls[0].Pending)
				require.NotNil(t, st.Calls[0].Pending.Program, "the program's journal")

				awaiting := st.Awaiting()
				require.Len(t, awaiting, 1)
				w := awaiting[0]
				assert.Equal(t, "call_1/2", w.CallID)
				assert.Equal(t, "delete_file", w.Name)
				assert.Equal(t, temporal.CallAwaiting, w.State)
				require.NotNil(t, w.Pending)
				assert.Equal(t, "call_1", w.Pending.ParentCallID)
				assert.Equal(t, "writes need a human", w.Pending.Reason)
				assert.JSONEq(t, `{"path":"b"}`, string(w.Pending.Arguments))

				assert.Equal(t, 1, c.get("read_file a"))
				assert.Equal(t, 0, c.get("delete_file b"))
				assert.Equal(t, 0, c.get("read_file c"), "the program stopped at the ask")
				assert.Equal(t, int32(1), p.runs.Load())
				env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1/2", Approval: toolloop.Approval{Approved: approve, Reason: "said so"}})
			}, time.Hour)
			res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("run it")})
			require.NoError(t, err)
			looptest.AssertValid(t, res.Messages)
			assert.Equal(t, "the program ran", res.FinalText)
			results := looptest.Results(res.Messages)
			assert.Len(t, results, 1, "inner results are not in the transcript")
			r := results["call_1"]
			require.NotNil(t, r)
			assert.Equal(t, toolloop.StatusOK, r.Status)
			second := "call_1/2 delete_file: delete_file b done"
			if !approve {
				second = "call_1/2 delete_file: error denied"
			}
			assert.Equal(t, "call_1/1 read_file: read_file a done\n"+second+"\ncall_1/3 read_file: read_file c done", r.Text())
			assert.Equal(t, 3, r.Meta.InnerCalls)
			assert.Equal(t, 4, res.ToolCalls, "the program's call and its three inner calls, as Run counts them")
			assert.Equal(t, 1, c.get("read_file a"), "served from the journal, not run again")
			assert.Equal(t, map[bool]int{true: 1, false: 0}[approve], c.get("delete_file b"))
			assert.Equal(t, 1, c.get("read_file c"))
			assert.Equal(t, int32(2), p.runs.Load(), "the program ran again from the start, once")
		})
	}
}

// askInPairs asks as destructiveAsks does, and holds each of the first
// two asks until both have come, so that two inner calls run at once
// both wait when the program pauses (without it, the second might not
// have started when the first paused the program).
type askInPairs struct {
	mu   sync.Mutex
	n    int
	both chan struct{}
}

func (g *askInPairs) MayAsk() bool { return true }

func (g *askInPairs) Check(ctx context.Context, call *toolloop.Call) toolloop.Verdict {
	v := destructiveAsks.Check(ctx, call)
	if v.Decision != toolloop.Ask {
		return v
	}
	g.mu.Lock()
	if g.n++; g.n == 2 {
		close(g.both)
	}
	g.mu.Unlock()
	select {
	case <-g.both:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	return v
}

// TestProgramParallelAsks: two inner calls wait at once; the call runs
// again only once both have their decisions. Decisions for no waiting
// call (an unknown ID, the program's own call) and a second decision for
// the same inner call change nothing.
func TestProgramParallelAsks(t *testing.T) {
	c := &runCounter{}
	var p program
	guard := &askInPairs{both: make(chan struct{})}
	env := newEnv(t, temporal.Agent{Loop: programLead(c, &p, guard, true, "delete_file a", "delete_file b", "read_file c")})
	env.RegisterDelayedCallback(func() {
		awaiting := awaitingNow(t, env)
		ids := make([]string, len(awaiting))
		for i, w := range awaiting {
			ids[i] = w.CallID
			require.NotNil(t, w.Pending)
			assert.Equal(t, "call_1", w.Pending.ParentCallID)
			assert.Equal(t, "delete_file", w.Name)
		}
		assert.ElementsMatch(t, []string{"call_1/1", "call_1/2"}, ids)
		assert.LessOrEqual(t, c.get("read_file c"), 1)
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1/9", Approval: toolloop.Approval{Approved: true}})
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1", Approval: toolloop.Approval{Approved: true}})
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1/1", Approval: toolloop.Approval{Approved: true}})
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1/1", Approval: toolloop.Approval{Approved: false, Reason: "changed my mind"}})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		awaiting := awaitingNow(t, env)
		require.Len(t, awaiting, 1, "one decision to go")
		assert.Equal(t, "call_1/2", awaiting[0].CallID)
		assert.Equal(t, 0, c.get("delete_file a"), "nothing runs before every decision is in")
		assert.Equal(t, int32(1), p.runs.Load())
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1/2", Approval: toolloop.Approval{Approved: false, Reason: "keep b"}})
	}, 2*time.Hour)
	res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("run it")})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	assert.Equal(t, "call_1/1 delete_file: delete_file a done\n"+
		"call_1/2 delete_file: error denied\n"+
		"call_1/3 read_file: read_file c done", r.Text())
	assert.Equal(t, 1, c.get("delete_file a"), "approved, run once")
	assert.Equal(t, 0, c.get("delete_file b"), "denied, never run")
	assert.Equal(t, 1, c.get("read_file c"), "run once, before the pause or after it")
	assert.Equal(t, int32(2), p.runs.Load(), "the program ran again once, after both decisions")
}

// TestStopWhileProgramAwaits: cancelling or interrupting the run while a
// program's inner call waits answers the program's call as canceled, in
// words about a program (not an agent); the inner call it waited on never
// runs, the program does not run again, and what it did before stands.
func TestStopWhileProgramAwaits(t *testing.T) {
	for _, tt := range []struct {
		name string
		stop func(env *testsuite.TestWorkflowEnvironment)
		want string
	}{
		{"cancel", func(env *testsuite.TestWorkflowEnvironment) { env.CancelWorkflow() },
			"the run was canceled while the program of program waited for approval of its inner calls"},
		{"interrupt", func(env *testsuite.TestWorkflowEnvironment) {
			steer(env, toolloop.OriginSteer, "never mind")
			env.SignalWorkflow(temporal.InterruptSignal, toolloop.Interrupt{Mode: toolloop.InterruptAfterModel, Continue: true})
		}, "the run was interrupted while the program of program waited for approval of its inner calls"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &runCounter{}
			var p program
			env := newEnv(t, temporal.Agent{Loop: programLead(c, &p, nil, false, "read_file a", "delete_file b", "read_file c")})
			env.RegisterDelayedCallback(func() { tt.stop(env) }, time.Hour)
			res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("run it")})
			if tt.name == "cancel" {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.NoError(t, err)
				assert.Equal(t, "the program ran", res.FinalText)
			}
			require.NotNil(t, res)
			looptest.AssertValid(t, res.Messages)
			r := looptest.Results(res.Messages)["call_1"]
			require.NotNil(t, r)
			require.NotNil(t, r.Error)
			assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
			assert.Contains(t, r.Text(), tt.want)
			assert.Contains(t, r.Text(), "the inner calls it had made stand")
			assert.NotContains(t, r.Text(), "agent")
			assert.Equal(t, 1, c.get("read_file a"), "what it did before stands")
			assert.Equal(t, 0, c.get("delete_file b"))
			assert.Equal(t, 0, c.get("read_file c"))
			assert.Equal(t, int32(1), p.runs.Load(), "the program did not run again")
		})
	}
}

// TestIntegrationProgramWorkerRestart: on a real server, a program's
// inner call asks and the run waits; the worker stops; a new worker, with
// a loop and tools of its own, takes over; the decision comes; the
// program runs again from its journal and the run completes, every inner
// call run once.
func TestIntegrationProgramWorkerRestart(t *testing.T) {
	addr := serverAddress(t)
	cl, err := dial(addr)
	require.NoError(t, err)
	defer cl.Close()
	queue := "program-" + fmt.Sprint(time.Now().UnixNano())
	c := &runCounter{}
	var p1, p2 program
	steps := []string{"read_file a", "delete_file b", "read_file c"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	first := worker.New(cl, queue, worker.Options{})
	temporal.Register(first, temporal.Agent{Loop: programLead(c, &p1, nil, false, steps...)})
	require.NoError(t, first.Start())
	run, err := temporal.Start(ctx, cl, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		[]toolloop.Message{toolloop.UserMessage("run it")})
	require.NoError(t, err)
	var st *temporal.Status
	require.Eventually(t, func() bool {
		st, err = temporal.Describe(ctx, cl, run.GetID(), "")
		return err == nil && len(st.Awaiting()) == 1
	}, 30*time.Second, 100*time.Millisecond)
	first.Stop()
	w := st.Awaiting()[0]
	assert.Equal(t, "call_1/2", w.CallID)
	require.NotNil(t, w.Pending)
	assert.Equal(t, "call_1", w.Pending.ParentCallID)
	assert.Equal(t, 1, c.get("read_file a"))
	assert.Equal(t, 0, c.get("delete_file b"))

	d := temporal.Decision{CallID: w.CallID, Approval: toolloop.Approval{Approved: true}}
	require.NoError(t, temporal.Decide(ctx, cl, run.GetID(), "", d))
	require.NoError(t, temporal.Decide(ctx, cl, run.GetID(), "", d), "a second decision is ignored")
	second := worker.New(cl, queue, worker.Options{})
	temporal.Register(second, temporal.Agent{Loop: programLead(c, &p2, nil, false, steps...)})
	require.NoError(t, second.Start())
	defer second.Stop()
	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	assert.Equal(t, "call_1/1 read_file: read_file a done\n"+
		"call_1/2 delete_file: delete_file b done\n"+
		"call_1/3 read_file: read_file c done", r.Text())
	assert.Equal(t, "the program ran", res.FinalText)
	assert.Equal(t, 1, c.get("read_file a"), "served from the journal on the new worker")
	assert.Equal(t, 1, c.get("delete_file b"))
	assert.Equal(t, 1, c.get("read_file c"))
	assert.Equal(t, int32(1), p1.runs.Load())
	assert.Equal(t, int32(1), p2.runs.Load(), "the new worker ran the program again, once")
}
