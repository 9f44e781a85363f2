package temporal

import (
	"errors"
	"fmt"

	tsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
)

// slot is one call of a turn in the workflow.
type slot struct {
	tc     toolloop.ToolCall
	policy callPolicy
	state  CallState
	// decision settles the call's ask when it runs again.
	decision *toolloop.Approval
	pending  *toolloop.PendingCall
	// decisions collects the decisions for the calls an agent whose run
	// paused waits on (pending.Child), by their qualified call IDs; once
	// every one has its decision, resume holds the pending call, and the
	// call runs again to resume the agent. resumes counts those runs.
	decisions map[string]toolloop.Approval
	resume    *toolloop.PendingCall
	resumes   int
	future    workflow.Future
	result    *toolloop.ToolResult
	// job is the ID of the background job the call asked to run as,
	// once given.
	job string
}

// runTurn runs the calls of one assistant turn, each as an activity, and
// returns their results in call order. It keeps AgentLoop.Run's rules:
// at most MaxConcurrency calls at once, calls start in order, an exclusive
// tool waits for the calls before it and holds back the calls after it.
// done holds results given before the turn (calls over the budget), by
// call position, or is nil: those calls do not run.
//
// A call that must wait for approval waits here, for a Decision, without
// holding a worker: then it runs again with the decision. While the turn
// waits for decisions only, Budget.MaxDuration's clock stops. A cancelled
// run cancels the running activities and waits for them to stop, and
// answers every other call with a canceled result. So does an interrupt
// now; an interrupt after the model turn lets the running calls finish
// and answers the others as not run.
func (rn *run) runTurn(calls []toolloop.ToolCall, policies []callPolicy, done []*toolloop.ToolResult) []*toolloop.ToolResult {
	ctx := rn.ctx
	slots := make([]*slot, len(calls))
	remaining := len(slots)
	for i, tc := range calls {
		slots[i] = &slot{tc: tc, policy: policies[i], state: CallQueued}
		if done != nil && done[i] != nil {
			slots[i].state, slots[i].result = CallDone, done[i]
			remaining--
		}
	}
	rn.calls = slots
	limit := rn.ag.limits().MaxConcurrency
	running := 0
	exclusive, canceled := false, ctx.Err() != nil
	finish := func(s *slot, r *toolloop.ToolResult) {
		s.state, s.result, s.pending = CallDone, r, nil
		remaining--
	}
	if rn.longRun {
		defer rn.clock.resume(rn.outer)
	}
	for remaining > 0 {
		// An interrupt now cancels ctx as the run's cancellation does.
		canceled = canceled || ctx.Err() != nil
		if canceled {
			why := "not run: the run was canceled before this call started (context canceled)"
			if rn.cut() {
				why = notStartedInterrupted
			}
			for _, s := range slots {
				switch s.state {
				case CallQueued:
					finish(s, errorResult(s.tc, toolloop.KindCanceled, why))
				case CallAwaiting:
					finish(s, rn.awaitingCanceled(s))
				}
			}
		} else if rn.holding() {
			// An interrupt after the model turn: what has not started
			// does not.
			for _, s := range slots {
				switch s.state {
				case CallQueued:
					finish(s, errorResult(s.tc, toolloop.KindCanceled, notRunInterrupted))
				case CallAwaiting:
					finish(s, rn.awaitingCanceled(s))
				}
			}
		} else {
			// Start what may start, in call order.
			for _, s := range slots {
				if s.state != CallQueued {
					continue
				}
				if running >= limit || exclusive || (s.policy.Exclusive && running > 0) {
					break
				}
				rn.start(s)
				running++
				exclusive = s.policy.Exclusive
			}
		}
		if remaining == 0 {
			break
		}
		if rn.longRun {
			// Nothing runs: every call left waits for a decision.
			if running == 0 {
				rn.clock.pause(rn.outer)
			} else {
				rn.clock.resume(rn.outer)
			}
		}
		sel := workflow.NewSelector(ctx)
		for _, s := range slots {
			if s.state != CallRunning {
				continue
			}
			sel.AddFuture(s.future, func(f workflow.Future) {
				running--
				if running == 0 {
					exclusive = false
				}
				r, p := rn.outcome(s, f)
				if p != nil && !canceled && !rn.holding() {
					s.state, s.pending, s.future = CallAwaiting, p, nil
					return
				}
				if p != nil {
					s.pending = p
					r = rn.awaitingCanceled(s)
				}
				finish(s, r)
			})
		}
		sel.AddReceive(rn.decisions, func(c workflow.ReceiveChannel, _ bool) {
			var d Decision
			c.Receive(ctx, &d)
			rn.decide(slots, d)
		})
		if !canceled {
			sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { canceled = true })
		}
		if rn.steer != nil {
			sel.AddReceive(rn.steer.interrupts, func(workflow.ReceiveChannel, bool) { rn.receiveInterrupts() })
		}
		sel.Select(ctx)
	}
	results := make([]*toolloop.ToolResult, len(slots))
	for i, s := range slots {
		results[i] = s.result
	}
	return results
}

// start schedules the call's activity, or runs a call to a job tool in
// the workflow.
func (rn *run) start(s *slot) {
	ag := rn.ag
	if rn.jobTool(s) {
		rn.startJobTool(s)
		return
	}
	policy, attempts := &noRetry, int32(1)
	if s.policy.Retry {
		policy, attempts = ag.ToolRetry, ag.ToolRetry.MaximumAttempts
	}
	id := fmt.Sprintf("turn-%d/%s", rn.turn, s.tc.ID)
	if s.decision != nil {
		id += "/decided"
	}
	in := callInput{RunID: rn.res.RunID, Turn: rn.turn, Call: s.tc, Decision: s.decision}
	if s.resume != nil {
		s.resumes++
		id += fmt.Sprintf("/resumed-%d", s.resumes)
		in.Resume, in.Decisions = s.resume, s.decisions
		s.resume, s.decisions = nil, nil
	}
	timeout := s.policy.Timeout
	if timeout <= 0 {
		timeout = ag.limits().ToolTimeout
	}
	actx := workflow.WithActivityOptions(rn.ctx, workflow.ActivityOptions{
		ActivityID:          id,
		StartToCloseTimeout: timeout + callOverhead,
		HeartbeatTimeout:    ag.HeartbeatTimeout,
		RetryPolicy:         policy,
		WaitForCancellation: true,
		Summary:             s.tc.Name + " " + s.tc.ID,
	})
	in.Attempts = attempts
	if s.job == "" && rn.background(s) {
		s.job = rn.jobs.reserve()
	}
	in.Job = s.job
	s.future = workflow.ExecuteActivity(actx, ag.callActivity, in)
	s.state = CallRunning
}

// outcome turns a finished call activity into a result or a pending call.
// A failure of the activity itself becomes a result too: the last
// attempt's own result when the tool failed, a canceled result when the
// run was cancelled, and otherwise an interrupted one (the worker was lost
// and the call may not run again), so the transcript stays valid.
func (rn *run) outcome(s *slot, f workflow.Future) (*toolloop.ToolResult, *toolloop.PendingCall) {
	var out callOutput
	err := f.Get(rn.ctx, &out)
	if err == nil && out.Result != nil {
		if out.Start != nil {
			return rn.jobStarted(s, out.Result, out.Start), nil
		}
		return out.Result, nil
	}
	if err == nil && out.Pending != nil {
		return nil, out.Pending
	}
	var app *tsdk.ApplicationError
	if errors.As(err, &app) && app.Type() == errTypeToolFailed && app.HasDetails() {
		var r toolloop.ToolResult
		if app.Details(&r) == nil && r.CallID == s.tc.ID {
			return &r, nil
		}
	}
	if rn.cut() {
		return errorResult(s.tc, toolloop.KindCanceled,
			fmt.Sprintf("tool %s was canceled: the run was interrupted while it ran", s.tc.Name)), nil
	}
	if rn.ctx.Err() != nil {
		return errorResult(s.tc, toolloop.KindCanceled,
			fmt.Sprintf("tool %s was canceled: the run was stopped while it ran", s.tc.Name)), nil
	}
	workflow.GetLogger(rn.ctx).Warn("toolloop: a call was lost", "call_id", s.tc.ID, "tool", s.tc.Name, "error", err)
	return errorResult(s.tc, toolloop.KindCanceled, toolloop.InterruptedMessage), nil
}

// decide applies a decision to the call it names, if that call waits
// for one: exactly once, since the call then runs and waits no more. A
// call of a paused agent (see toolloop.AgentTool) takes one decision for
// each call its child run waits on; the agent resumes once all have come.
func (rn *run) decide(slots []*slot, d Decision) {
	for _, s := range slots {
		if s.state != CallAwaiting || s.pending == nil {
			continue
		}
		if !nests(s.pending) {
			if s.tc.ID == d.CallID {
				a := d.Approval
				s.decision, s.pending, s.state = &a, nil, CallQueued
				return
			}
			continue
		}
		if _, done := s.decisions[d.CallID]; done || !waitsOn(s.pending, d.CallID) {
			continue
		}
		if s.decisions == nil {
			s.decisions = make(map[string]toolloop.Approval)
		}
		s.decisions[d.CallID] = d.Approval
		if len(s.decisions) == len(s.pending.Waiting()) {
			s.resume, s.pending, s.state = s.pending, nil, CallQueued
		}
		return
	}
	workflow.GetLogger(rn.ctx).Warn("toolloop: ignored a decision for a call that is not waiting", "call_id", d.CallID)
}

// nests reports whether the pending call p waits on calls of its own: a
// paused agent's (Child), or its program's inner calls (Program, see
// toolloop.Inner), which take a decision each, under the IDs
// p.Waiting lists.
func nests(p *toolloop.PendingCall) bool { return p.Child != nil || p.Program != nil }

// waitsOn reports whether the paused agent's call p waits on the call of
// the given (qualified) ID.
func waitsOn(p *toolloop.PendingCall, id string) bool {
	for _, w := range p.Waiting() {
		if w.CallID == id {
			return true
		}
	}
	return false
}

// awaitingCanceled is the result of a call that waited for approval when
// the run was cancelled or interrupted. A call that waited on calls of
// its own (a paused agent's, or its program's inner calls) had done
// something: that stands.
func (rn *run) awaitingCanceled(s *slot) *toolloop.ToolResult {
	how := "canceled"
	if rn.cut() || rn.holding() {
		how = "interrupted"
	}
	var why string
	switch {
	case s.pending != nil && s.pending.Program != nil:
		why = fmt.Sprintf("the run was %s while the program of %s waited for approval of its inner calls: "+
			"the inner calls it had made stand, and none of those it waited on ran", how, s.tc.Name)
	case s.pending != nil && s.pending.Child != nil:
		why = fmt.Sprintf("the run was %s while the agent %s waited for approval: "+
			"the calls it had made stand, and none of those it waited on ran", how, s.tc.Name)
	case how == "interrupted":
		why = awaitingInterrupted
	default:
		why = "not run: the run was canceled while this call waited for approval"
	}
	return errorResult(s.tc, toolloop.KindCanceled, why)
}
