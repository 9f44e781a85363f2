package toolloop_test

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

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// program is a tool that makes the inner calls its arguments list, one
// after another or all at once, as a code-mode program would, and
// answers with one line per call.
type program struct {
	runs atomic.Int32
	// path, if set, picks the calls of each run instead of the arguments
	// (a program that takes another path when it runs again).
	path func(run int) []innerStep
}

type innerStep struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

func (p *program) tool() toolloop.Tool {
	t, err := toolloop.NewSchemaTool("prog", "Runs a program.",
		json.RawMessage(`{"type":"object","properties":{"calls":{"type":"array"},"parallel":{"type":"boolean"}}}`),
		func(ctx context.Context, call *toolloop.Call) (any, error) {
			run := int(p.runs.Add(1))
			var in struct {
				Calls    []innerStep
				Parallel bool
			}
			if err := call.Bind(&in); err != nil {
				return nil, err
			}
			if p.path != nil {
				in.Calls = p.path(run)
			}
			inner := call.Inner()
			if inner == nil {
				return nil, errors.New("no inner calls")
			}
			ics := make([]*toolloop.InnerCall, len(in.Calls))
			for i, c := range in.Calls {
				ics[i] = inner.Prepare(c.Name, c.Args)
			}
			lines := make([]string, len(ics))
			errs := make([]error, len(ics))
			do := func(i int) {
				r, err := ics[i].Run(ctx)
				errs[i] = err
				switch {
				case err != nil:
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
				return nil, err
			}
			return strings.Join(lines, "\n"), nil
		})
	if err != nil {
		panic(err)
	}
	return t
}

// progCall is a model's call to the program tool.
func progCall(id string, parallel bool, steps ...string) toolloop.ToolCall {
	calls := []innerStep{}
	for _, s := range steps {
		name, arg, _ := strings.Cut(s, " ")
		calls = append(calls, innerStep{Name: name, Args: json.RawMessage(fmt.Sprintf(`{"path":%q}`, arg))})
	}
	b, _ := json.Marshal(map[string]any{"calls": calls, "parallel": parallel})
	return looptest.Call(id, "prog", string(b))
}

func innerFixture(t *testing.T, p *program, c *counter, turns ...looptest.Turn) *toolloop.AgentLoop {
	t.Helper()
	var reg toolloop.ToolRegistry
	reg.MustRegister(p.tool(), c.tool("read", false), c.tool("write", true))
	return &toolloop.AgentLoop{Model: looptest.NewModel(t, turns...), Tools: &reg}
}

func TestInnerCallsGoThroughThePipeline(t *testing.T) {
	var p program
	var c counter
	var mu sync.Mutex
	var events []toolloop.Event
	var guarded []string
	l := innerFixture(t, &p, &c,
		looptest.Turn{Reply: looptest.Calls(progCall("c1", false, "read a", "write b", "nope x", "read c"))},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	l.Guard = toolloop.GuardFunc(func(_ context.Context, call *toolloop.Call) toolloop.Verdict {
		mu.Lock()
		guarded = append(guarded, call.ID)
		mu.Unlock()
		if call.Name == "write" {
			return toolloop.Verdict{Decision: toolloop.Deny, Reason: "read only"}
		}
		if call.Name == "read" && strings.Contains(string(call.Arguments), `"c"`) {
			return toolloop.Verdict{Decision: toolloop.Modify, Arguments: json.RawMessage(`{"path":"d"}`), Reason: "c is d"}
		}
		return toolloop.Verdict{Decision: toolloop.Allow}
	})
	var hooked atomic.Int32
	l.Hooks.PreToolUse = append(l.Hooks.PreToolUse, func(_ context.Context, call *toolloop.Call) (toolloop.PreToolUse, error) {
		hooked.Add(1)
		return toolloop.PreToolUse{}, nil
	})
	l.OnEvent = func(e toolloop.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	res, err := l.Run(context.Background(), user("go"))
	require.NoError(t, err)
	r := looptest.Results(res.Messages)["c1"]
	require.NotNil(t, r)
	assert.Equal(t, toolloop.StatusOK, r.Status)
	assert.Contains(t, r.Text(), "c1/1 read: read a done\n"+
		"c1/2 write: error denied\n"+
		"c1/3 nope: error not_found\n"+
		"c1/4 read: read d done", "each inner call was resolved, guarded (denied, rewritten) and run")
	assert.Equal(t, 4, r.Meta.InnerCalls)
	assert.Equal(t, 5, res.ToolCalls, "the program's call and its four inner calls")
	assert.Equal(t, []string{"c1", "c1/1", "c1/2", "c1/4"}, guarded, "the unknown tool never reached the guard")
	assert.Equal(t, int32(3), hooked.Load(), "the pre-hooks ran for the program and the two reads")
	assert.Len(t, looptest.Results(res.Messages), 1, "inner results are not in the transcript")

	// Each inner call is a call of its own in the events, under the program's.
	completes := map[string]string{}
	for _, e := range events {
		if e.Type == toolloop.EventComplete {
			completes[e.CallID] = e.ParentCallID
		}
		if strings.HasPrefix(e.CallID, "c1/") {
			assert.Equal(t, "c1", e.ParentCallID, "%s of %s", e.Type, e.CallID)
			assert.Empty(t, e.ParentRunID)
		}
	}
	assert.Equal(t, map[string]string{"c1": "", "c1/1": "c1", "c1/2": "c1", "c1/3": "c1", "c1/4": "c1"}, completes)
}

func TestInnerCallsAreBounded(t *testing.T) {
	t.Run("per call", func(t *testing.T) {
		var p program
		var c counter
		var mu sync.Mutex
		var denied []string
		l := innerFixture(t, &p, &c,
			looptest.Turn{Reply: looptest.Calls(progCall("c1", false, "read a", "read b", "read c", "read d"))},
			looptest.Turn{Reply: looptest.Text("done")},
		)
		l.Limits.MaxCallsPerTurn = 2
		l.OnEvent = func(e toolloop.Event) {
			if e.Type == toolloop.EventComplete && e.Result.IsError() {
				mu.Lock()
				denied = append(denied, e.CallID)
				mu.Unlock()
			}
		}
		res, err := l.Run(context.Background(), user("go"))
		require.NoError(t, err)
		r := looptest.Results(res.Messages)["c1"]
		require.Equal(t, toolloop.StatusError, r.Status)
		assert.Equal(t, toolloop.KindDenied, r.Error.Kind)
		assert.Contains(t, r.Text(), "the program was stopped at its call c1/3: it made more than 2 tool calls")
		assert.Equal(t, 0, c.byCall("c1/3")+c.byCall("c1/4"))
		assert.Equal(t, []string{"c1/3", "c1"}, denied, "the call over the limit is answered, and the program stops there")
		assert.Equal(t, 2, r.Meta.InnerCalls)
		assert.Equal(t, 3, res.ToolCalls)
	})
	t.Run("budget", func(t *testing.T) {
		var p program
		var c counter
		l := innerFixture(t, &p, &c,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("r1", "read", `{"path":"x"}`))},
			looptest.Turn{Reply: looptest.Calls(progCall("c1", true, "read a", "read b", "read c", "read d"))},
		)
		l.Budget.MaxToolCalls = 4 // r1, c1 and two inner calls
		res, err := l.Run(context.Background(), user("go"))
		require.Error(t, err)
		require.ErrorIs(t, err, toolloop.ErrBudget)
		r := looptest.Results(res.Messages)["c1"]
		require.NotNil(t, r)
		assert.Equal(t, toolloop.KindDenied, r.Error.Kind)
		assert.Contains(t, r.Text(), "the run's budget allows 4 tool calls, and they are spent")
		assert.Equal(t, 2, c.byCall("c1/1")+c.byCall("c1/2")+c.byCall("c1/3")+c.byCall("c1/4"), "two inner calls ran")
		assert.Equal(t, 4, res.ToolCalls)
	})
	t.Run("concurrency", func(t *testing.T) {
		var reg toolloop.ToolRegistry
		var p program
		var now, most atomic.Int32
		reg.MustRegister(p.tool(), toolloop.NewTool("read", "Reads.", func(context.Context, struct {
			Path string `json:"path"`
		}) (any, error) {
			n := now.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			now.Add(-1)
			return "ok", nil
		}))
		l := &toolloop.AgentLoop{Tools: &reg, Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(progCall("c1", true, "read a", "read b", "read c", "read d", "read e", "read f"))},
			looptest.Turn{Reply: looptest.Text("done")},
		)}
		l.Limits.MaxConcurrency = 2
		_, err := l.Run(context.Background(), user("go"))
		require.NoError(t, err)
		assert.LessOrEqual(t, most.Load(), int32(2))
		assert.Equal(t, int32(2), most.Load(), "the calls did run two at a time")
	})
}

// askWrites asks a human about every write.
var askWrites = toolloop.GuardFunc(func(_ context.Context, call *toolloop.Call) toolloop.Verdict {
	if call.Name == "write" {
		return toolloop.Verdict{Decision: toolloop.Ask, Reason: "writes need a human"}
	}
	return toolloop.Verdict{Decision: toolloop.Allow}
})

func TestInnerCallPausesTheRun(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprint("approve=", approve), func(t *testing.T) {
			var p program
			var c counter
			l := innerFixture(t, &p, &c,
				looptest.Turn{Reply: looptest.Calls(progCall("c1", true, "read a", "write b", "read c"), looptest.Call("r1", "read", `{"path":"z"}`))},
				looptest.Turn{Reply: looptest.Text("done")},
			)
			l.Guard, l.PauseForApproval = askWrites, true
			l.Sealing.Key = []byte("0123456789abcdef0123456789abcdef")
			res, err := l.Run(context.Background(), user("go"))
			require.ErrorIs(t, err, toolloop.ErrPaused)
			st := res.Paused
			require.NotNil(t, st)
			require.Len(t, st.Pending, 1)
			assert.Equal(t, "c1/2", st.Pending[0].CallID)
			assert.Equal(t, "c1", st.Pending[0].ParentCallID)
			assert.Equal(t, "write", st.Pending[0].Name)
			require.Len(t, st.Agents, 1)
			prog := st.Agents[0].Program
			require.NotNil(t, prog)
			// The calls that ran beside the ask finished first; one that had
			// not started by then did not start.
			require.GreaterOrEqual(t, len(prog.Calls), 1)
			for _, rec := range prog.Calls {
				if rec.ID == "c1/2" {
					assert.Nil(t, rec.Result, "the write waits")
				} else {
					require.NotNil(t, rec.Result)
					assert.Equal(t, 1, c.byCall(rec.ID))
				}
			}
			assert.LessOrEqual(t, c.byCall("c1/3"), 1)
			assert.Equal(t, 0, c.byCall("c1/2"))
			assert.Equal(t, 1, c.byCall("r1"))

			// Through JSON, sealed; a changed journal is refused.
			b, err := json.Marshal(st)
			require.NoError(t, err)
			var saved toolloop.PauseState
			require.NoError(t, json.Unmarshal(b, &saved))
			decisions := map[string]toolloop.Approval{"c1/2": {Approved: approve, Reason: "said so"}}
			var forged toolloop.PauseState
			require.NoError(t, json.Unmarshal(b, &forged))
			// (The first record may be the write that waits: the read, run
			// beside it, may not have started when it asked.)
			forged.Agents[0].Program.Calls[0].Arguments = json.RawMessage(`{"path":"forged"}`)
			_, err = l.Resume(context.Background(), &forged, decisions)
			require.ErrorIs(t, err, toolloop.ErrTampered)
			_, err = l.Resume(context.Background(), &saved, map[string]toolloop.Approval{})
			require.ErrorIs(t, err, toolloop.ErrMissingDecision)

			res, err = l.Resume(context.Background(), &saved, decisions)
			require.NoError(t, err)
			looptest.AssertValid(t, res.Messages)
			r := looptest.Results(res.Messages)["c1"]
			require.NotNil(t, r)
			want := "c1/2 write: write b done"
			if !approve {
				want = "c1/2 write: error denied"
			}
			assert.Equal(t, "c1/1 read: read a done\n"+want+"\nc1/3 read: read c done", r.Text())
			assert.Equal(t, 1, c.byCall("c1/1"), "served from the journal, not run again")
			assert.Equal(t, 1, c.byCall("c1/3"))
			assert.Equal(t, map[bool]int{true: 1, false: 0}[approve], c.byCall("c1/2"))
			assert.Equal(t, 1, c.byCall("r1"))
			assert.Equal(t, 3, r.Meta.InnerCalls)
			assert.Equal(t, 5, res.ToolCalls)
			assert.Equal(t, int32(2), p.runs.Load(), "the program ran again from the start")
		})
	}
}

func TestInnerCallPausesAgainAndDiverges(t *testing.T) {
	t.Run("again", func(t *testing.T) {
		var p program
		var c counter
		l := innerFixture(t, &p, &c,
			looptest.Turn{Reply: looptest.Calls(progCall("c1", false, "write a", "write b"))},
			looptest.Turn{Reply: looptest.Text("done")},
		)
		l.Guard, l.PauseForApproval = askWrites, true
		res, err := l.Run(context.Background(), user("go"))
		require.ErrorIs(t, err, toolloop.ErrPaused)
		require.Len(t, res.Paused.Pending, 1)
		assert.Equal(t, "c1/1", res.Paused.Pending[0].CallID)
		res, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c1/1": {Approved: true}})
		require.ErrorIs(t, err, toolloop.ErrPaused, "the second write asks in turn")
		require.Len(t, res.Paused.Pending, 1)
		assert.Equal(t, "c1/2", res.Paused.Pending[0].CallID)
		prog := res.Paused.Agents[0].Program
		require.Len(t, prog.Calls, 2)
		require.NotNil(t, prog.Calls[0].Result)
		assert.Equal(t, "write a done", prog.Calls[0].Result.Text())
		res, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c1/2": {Approved: true}})
		require.NoError(t, err)
		assert.Equal(t, "c1/1 write: write a done\nc1/2 write: write b done", looptest.Results(res.Messages)["c1"].Text())
		assert.Equal(t, 1, c.byCall("c1/1"))
		assert.Equal(t, 1, c.byCall("c1/2"))
		assert.Equal(t, 3, res.ToolCalls)
	})
	t.Run("diverged", func(t *testing.T) {
		p := program{path: func(run int) []innerStep {
			if run == 1 {
				return []innerStep{{"read", json.RawMessage(`{"path":"a"}`)}, {"write", json.RawMessage(`{"path":"b"}`)}}
			}
			return []innerStep{{"read", json.RawMessage(`{"path":"x"}`)}, {"write", json.RawMessage(`{"path":"b"}`)}}
		}}
		var c counter
		l := innerFixture(t, &p, &c,
			looptest.Turn{Reply: looptest.Calls(progCall("c1", false))},
			looptest.Turn{Reply: looptest.Text("done")},
		)
		l.Guard, l.PauseForApproval = askWrites, true
		res, err := l.Run(context.Background(), user("go"))
		require.ErrorIs(t, err, toolloop.ErrPaused)
		res, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c1/2": {Approved: true}})
		require.NoError(t, err)
		r := looptest.Results(res.Messages)["c1"]
		require.Equal(t, toolloop.StatusError, r.Status)
		assert.Equal(t, toolloop.KindExecutionFailed, r.Error.Kind)
		assert.Contains(t, r.Text(), "another path")
		assert.Equal(t, 0, c.byCall("c1/1")+c.byCall("c1/2")-1, "the first read ran once, the x read and the write never")
		assert.Equal(t, 1, c.byCall("c1/1"))
		assert.Equal(t, 0, c.byCall("c1/2"))
	})
}

func TestInnerCallHangsAndEnds(t *testing.T) {
	release := make(chan struct{})
	var reg toolloop.ToolRegistry
	var p program
	hang := toolloop.NewTool("hang", "Hangs.", func(context.Context, struct {
		Path string `json:"path"`
	}) (any, error) {
		<-release // ignores its context
		return "late", nil
	})
	hang.Timeout = 20 * time.Millisecond
	var c counter
	reg.MustRegister(p.tool(), hang, c.tool("read", false))
	l := &toolloop.AgentLoop{Tools: &reg, Model: looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(progCall("c1", false, "hang a", "read b"))},
		looptest.Turn{Reply: looptest.Text("done")},
	)}
	defer close(release)
	res, err := l.Run(context.Background(), user("go"))
	require.NoError(t, err)
	assert.Equal(t, "c1/1 hang: error timeout\nc1/2 read: read b done", looptest.Results(res.Messages)["c1"].Text(),
		"the hung call was answered for, and the program went on")
}

func TestInnerCallAfterTheCallEnded(t *testing.T) {
	var kept *toolloop.Inner
	var reg toolloop.ToolRegistry
	var c counter
	reg.MustRegister(c.tool("read", false), toolloop.NewTool("leak", "Keeps its inner calls.", func(ctx context.Context, _ struct{}) (any, error) {
		return "ok", nil
	}))
	keep, err := toolloop.NewSchemaTool("keep", "Keeps Inner.", json.RawMessage(`{"type":"object"}`),
		func(_ context.Context, call *toolloop.Call) (any, error) {
			kept = call.Inner()
			assert.Same(t, kept, call.Inner())
			return "kept", nil
		})
	require.NoError(t, err)
	reg.MustRegister(keep)
	l := &toolloop.AgentLoop{Tools: &reg, Model: looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("k1", "keep", `{}`))},
		looptest.Turn{Reply: looptest.Text("done")},
	)}
	_, err = l.Run(context.Background(), user("go"))
	require.NoError(t, err)
	require.NotNil(t, kept)
	r, err := kept.Prepare("read", json.RawMessage(`{"path":"a"}`)).Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	assert.Equal(t, 0, c.byCall("k1/1"), "nothing of a call runs after it ended")

	var hand toolloop.Call
	assert.Nil(t, hand.Inner(), "a call made by hand has no inner calls")
}

func TestInnerCallPauseThroughRunCall(t *testing.T) {
	var p program
	var c counter
	l := innerFixture(t, &p, &c)
	l.Guard, l.PauseForApproval = askWrites, true
	tc := progCall("c1", false, "read a", "write b")
	res, pend := l.RunCall(context.Background(), "run1", 1, tc, nil)
	require.Nil(t, res)
	require.NotNil(t, pend)
	require.NotNil(t, pend.Program)
	w := pend.Waiting()
	require.Len(t, w, 1)
	assert.Equal(t, "c1/2", w[0].CallID)
	assert.Equal(t, "c1", w[0].ParentCallID)

	// A driver keeps the pending call as JSON between activities.
	b, err := json.Marshal(pend)
	require.NoError(t, err)
	var saved toolloop.PendingCall
	require.NoError(t, json.Unmarshal(b, &saved))
	res, pend = l.ResumeCall(context.Background(), "run1", 1, tc, &saved, map[string]toolloop.Approval{"c1/2": {Approved: true}})
	require.Nil(t, pend)
	require.NotNil(t, res)
	assert.Equal(t, "c1/1 read: read a done\nc1/2 write: write b done", res.Text())
	assert.Equal(t, 1, c.byCall("c1/1"))
	assert.Equal(t, 1, c.byCall("c1/2"))
}

// TestInterruptWhileProgramWaits: an interrupt that comes while a
// program's inner call waits for approval answers the program's call as
// canceled, saying its inner calls stand; nothing it waited on runs.
func TestInterruptWhileProgramWaits(t *testing.T) {
	var p program
	var c counter
	var in toolloop.Inbox
	l := innerFixture(t, &p, &c,
		looptest.Turn{Reply: looptest.Calls(progCall("c1", false, "read a", "write b", "read c"))},
	)
	l.PauseForApproval = true
	l.Guard = toolloop.GuardFunc(func(ctx context.Context, call *toolloop.Call) toolloop.Verdict {
		if call.Name == "write" {
			in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterModel})
			return toolloop.Verdict{Decision: toolloop.Ask, Reason: "writes need a human"}
		}
		return toolloop.Verdict{Decision: toolloop.Allow}
	})
	res, err := l.Run(toolloop.WithInbox(context.Background(), &in), user("go"))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	assert.Nil(t, res.Paused)
	r := looptest.Results(res.Messages)["c1"]
	require.NotNil(t, r)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	assert.Contains(t, r.Text(), "the program's inner calls waited for approval; the inner calls it had made stand")
	assert.Equal(t, 1, c.byCall("c1/1"))
	assert.Equal(t, 0, c.byCall("c1/2")+c.byCall("c1/3"))
	looptest.AssertValid(t, res.Messages)
}
