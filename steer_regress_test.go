package toolloop_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// assertRequestsEndWithUser fails for each request that ends with an
// assistant message: Claude 4.6 and later refuse such a request ("This
// model does not support assistant message prefill. The conversation must
// end with a user message"), and earlier models take the message as a
// prefill to continue.
func assertRequestsEndWithUser(t *testing.T, reqs [][]toolloop.Message) {
	t.Helper()
	for i, req := range reqs {
		last := req[len(req)-1]
		assert.NotEqual(t, toolloop.RoleAssistant, last.Role, "request %d ends with the assistant's %q (%s)", i+1, last.Text(), last.StopReason)
	}
}

// TestSteerContinueAfterFinalAnswer: an interrupt with Continue, and
// nothing queued, that the run takes after the model's final answer asks
// the model again with the transcript ending in that answer. The doc of
// Inbox.Interrupt says such an interrupt does not undo the answer, and
// the run goes on "with the queued messages": with none, it should end
// as it would have.
func TestSteerContinueAfterFinalAnswer(t *testing.T) {
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		return looptest.Text("answer " + string(rune('0'+turn)))
	}}
	m.streamed = func(turn int) {
		if turn == 1 {
			in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterModel, Continue: true})
		}
	}
	l := &toolloop.AgentLoop{Model: m}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.NoError(t, err)
	assertRequestsEndWithUser(t, m.requests())
	assert.Len(t, m.requests(), 1, "nothing new to say: the model is not asked again")
	assert.Equal(t, "answer 1", res.FinalText)
	looptest.AssertValid(t, res.Messages)
}

// TestSteerContinueAfterCutText: an interrupt now with Continue, and
// nothing queued, cuts the model's turn short; the text it had streamed is
// kept as an interrupted assistant message, and the model is asked again
// with the transcript ending in it.
func TestSteerContinueAfterCutText(t *testing.T) {
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return nil // streams "partial " and waits
		}
		return looptest.Text("again")
	}}
	m.streamed = func(turn int) {
		if turn == 1 {
			in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow, Continue: true})
		}
	}
	l := &toolloop.AgentLoop{Model: m}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.NoError(t, err)
	assertRequestsEndWithUser(t, m.requests())
	looptest.AssertValid(t, res.Messages)
}

// TestSteerInterruptBeforePauseIsKept: an interrupt arrives while a turn
// runs one call and holds another for approval (PauseForApproval). The
// run pauses anyway, and the interrupt is dropped when the run detaches
// from its inbox: no run.interrupted event records it, and resuming with
// an approval goes on as if nothing had been asked, running the held call
// of a turn that an interrupt now or after the model stopped (whose other
// call was canceled, or answered "not run: the run was interrupted"), and
// asking the model again after an interrupt after the tools.
func TestSteerInterruptBeforePauseIsKept(t *testing.T) {
	for _, mode := range []toolloop.InterruptMode{toolloop.InterruptNow, toolloop.InterruptAfterModel, toolloop.InterruptAfterTools} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHold()
			in := &toolloop.Inbox{}
			var rmRan atomic.Bool
			rm := toolloop.NewTool("rm", "removes", func(context.Context, struct{}) (any, error) {
				rmRan.Store(true)
				return "gone", nil
			})
			m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
				if turn == 1 {
					return looptest.Calls(looptest.Call("c1", "hold", `{"id":"c1"}`), looptest.Call("c2", "rm", `{}`))
				}
				return looptest.Text("done")
			}}
			rec := &looptest.Recorder{}
			l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool(), rm), PauseForApproval: true, OnEvent: rec.Record,
				Guard: &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "confirm-rm", Tools: []string{"rm"}, Decision: toolloop.Ask}}}}
			go func() {
				<-h.started // c1 runs; c2 waits for its approval
				in.Interrupt(toolloop.Interrupt{Mode: mode})
				close(h.release)
			}()
			ctx := toolloop.WithInbox(context.Background(), in)
			res, err := l.Run(ctx, user("clean up"))
			if errors.Is(err, toolloop.ErrPaused) { // the program approves the held call
				res, err = l.Resume(ctx, res.Paused, map[string]toolloop.Approval{"c2": {Approved: true}})
			}
			require.ErrorIs(t, err, toolloop.ErrInterrupted)
			if mode != toolloop.InterruptAfterTools {
				assert.False(t, rmRan.Load(), "a call of the interrupted turn ran")
			}
			assert.Len(t, rec.Of(toolloop.EventRunInterrupted), 1)
			assert.Len(t, m.requests(), 1, "the model was asked again")
			looptest.AssertValid(t, res.Messages)
		})
	}
}

// TestSteerIdleInboxAllocsPerTurn: a run with an inbox that nothing is
// sent to (and every RunStream, which always has one) should allocate
// nothing more per turn than a run without, with a streaming model too:
// the buffer that keeps a turn's streamed text (for an interrupt to keep)
// serves every turn.
func TestSteerIdleInboxAllocsPerTurn(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("counts allocations of whole runs; the race detector's sync.Pool drops at random")
	}
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("read", "reads", func(_ context.Context, in pathCount) (any, error) { return in.Path, nil }))
	allocs := func(inbox bool, n int) float64 {
		return testing.AllocsPerRun(20, func() {
			ctx := context.Background()
			if inbox {
				ctx = toolloop.WithInbox(ctx, &toolloop.Inbox{})
			}
			l := &toolloop.AgentLoop{Model: &streamSteps{steps{n: n}}, Tools: &reg, Budget: toolloop.Budget{MaxTurns: n + 1}}
			if _, err := l.Run(ctx, user("go")); err != nil {
				t.Fatal(err)
			}
		})
	}
	const few, many = 10, 50
	without := (allocs(false, many) - allocs(false, few)) / (many - few)
	with := (allocs(true, many) - allocs(true, few)) / (many - few)
	assert.InDelta(t, without, with, 0.2, "allocations per turn without an inbox %.2f, with an idle one %.2f", without, with)
}
