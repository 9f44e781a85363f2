package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ErrMissingDecision: Resume was not given a decision for every pending
// call. Nothing was run.
var ErrMissingDecision = errors.New("toolloop: no decision for a pending call")

// PendingCall is a call that waits for a human decision.
type PendingCall struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Arguments are the validated arguments the call will run with.
	Arguments json.RawMessage `json:"arguments"`
	// Reason and Rule are the guard's, for the person deciding.
	Reason string `json:"reason,omitempty"`
	Rule   string `json:"rule,omitempty"`
	// Index is the call's position in its assistant message.
	Index int `json:"index"`
	// Meta and Notes carry what the pipeline recorded before the pause.
	Meta  ResultMeta `json:"meta"`
	Notes []string   `json:"notes,omitempty"`
}

// PauseState is a paused run, serializable as JSON so that it can be saved
// and resumed by another process.
type PauseState struct {
	RunID string `json:"run_id"`
	Turn  int    `json:"turn"`
	// Messages is the transcript through the assistant message whose calls
	// are pending.
	Messages []Message `json:"messages"`
	// Results holds that turn's finished results by call position; the
	// positions of pending calls are null.
	Results []*ToolResult `json:"results"`
	// Pending lists the calls that wait for a decision.
	Pending    []PendingCall   `json:"pending"`
	Executions []ToolExecution `json:"executions,omitempty"`
	// Accounting is what the run had spent when it paused.
	Accounting
	// Output is the run's output format, if it was given one other than
	// the loop's (by RunTyped); Resume goes on asking for it.
	Output *OutputFormat `json:"output,omitempty"`
	// InvalidOutputs counts the invalid final answers the run has had.
	InvalidOutputs int `json:"invalid_outputs,omitempty"`
}

func (rn *runState) pause(res *RunResult, results []*ToolResult, pending []PendingCall) (*RunResult, error) {
	st := &PauseState{
		RunID: rn.id, Turn: rn.turn, Messages: slices.Clone(res.Messages),
		Results: results, Pending: pending, Executions: slices.Clone(res.Executions), Accounting: res.Accounting,
	}
	if c := rn.ctl; c != nil && c.out != nil {
		st.InvalidOutputs = c.out.invalid
		if rn.output != nil {
			st.Output = c.out.format
		}
	}
	res.Paused = st
	res.StopReason = StopToolUse
	acc := res.Accounting
	rn.emit(&Event{Type: EventRunPaused, Pending: pending, Accounting: &acc})
	return rn.end(res, ErrPaused)
}

// Resume continues a paused run with a decision for each pending call,
// keyed by call ID. Approved calls run (once, through the pre-hooks, the
// tool and the post-hooks: the guard already spoke); denied calls get a
// denied result with the decision's reason; calls of the same turn that
// already finished are not run again. The run then goes on as Run would,
// and its transcript ends as if an Approver had answered at the time.
//
// Resume consumes the state: resuming the same state twice runs the
// approved calls twice. If a pending call has no decision, Resume returns
// ErrMissingDecision and runs nothing.
func (l *AgentLoop) Resume(ctx context.Context, st *PauseState, decisions map[string]Approval) (*RunResult, error) {
	return l.resume(ctx, st, decisions, nil)
}

// resume is Resume with an extra event sink for streaming.
func (l *AgentLoop) resume(ctx context.Context, st *PauseState, decisions map[string]Approval, stream func(Event)) (*RunResult, error) {
	return l.resumeWith(ctx, st, decisions, stream, nil)
}

// resumeWith is resume with an output format that overrides the loop's
// and the state's.
func (l *AgentLoop) resumeWith(ctx context.Context, st *PauseState, decisions map[string]Approval, stream func(Event), output *OutputFormat) (*RunResult, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if st == nil || len(st.Messages) == 0 {
		return nil, errors.New("toolloop: Resume: empty pause state")
	}
	last := st.Messages[len(st.Messages)-1]
	if last.Role != RoleAssistant || len(last.ToolCalls) != len(st.Results) {
		return nil, errors.New("toolloop: Resume: pause state does not end with the paused turn")
	}
	byIndex := make(map[int]PendingCall, len(st.Pending))
	for _, p := range st.Pending {
		if _, ok := decisions[p.CallID]; !ok {
			return nil, fmt.Errorf("%w %s (%s)", ErrMissingDecision, p.CallID, p.Name)
		}
		if p.Index < 0 || p.Index >= len(last.ToolCalls) || last.ToolCalls[p.Index].ID != p.CallID {
			return nil, fmt.Errorf("toolloop: Resume: pending call %s is not in the paused turn", p.CallID)
		}
		byIndex[p.Index] = p
	}
	rn := l.newRun(st.RunID, stream)
	rn.turn = st.Turn
	if output == nil {
		output = st.Output
	}
	if err := rn.setup(output); err != nil {
		return nil, err
	}
	if c := rn.ctl; c != nil {
		if c.out != nil {
			c.out.invalid = st.InvalidOutputs
		}
		if l.Deferred != nil {
			c.loaded, c.known = loadedTools(st.Messages), true
		}
	}
	res := &RunResult{
		RunID: rn.id, Messages: slices.Clone(st.Messages), Turns: st.Turn,
		Executions: slices.Clone(st.Executions), Accounting: st.Accounting,
	}
	rn.emit(&Event{Type: EventRunResumed, Approvals: decisions})
	outer := ctx
	ctx, cancel := rn.budgetContext(ctx)
	defer cancel()
	exec := func(ctx context.Context, cr *callRun) (*ToolResult, *PendingCall) {
		p, ok := byIndex[int(cr.index)]
		if !ok { // a null result that was not pending: run it normally
			return rn.execCall(ctx, cr)
		}
		return rn.resumeCall(ctx, cr, p, decisions[p.CallID]), nil
	}
	results, pending := rn.runTurn(ctx, last.ToolCalls, st.Results, exec)
	if len(pending) > 0 {
		return rn.pause(res, results, pending)
	}
	rn.appendResults(res, results)
	if err := ctx.Err(); err != nil {
		return rn.aborted(outer, ctx, res, err)
	}
	if err := rn.checkFailures(res, results); err != nil {
		return rn.end(res, err)
	}
	return l.loop(outer, ctx, rn, res)
}

// resumeCall finishes a call that waited for a decision.
func (rn *runState) resumeCall(ctx context.Context, cr *callRun, p PendingCall, a Approval) *ToolResult {
	cr.tc.Arguments = p.Arguments
	x := cr.extra()
	x.repairs, x.modified, x.notes = p.Meta.Repairs, p.Meta.Modified, p.Notes
	cr.kind, cr.source = p.Meta.Source, p.Meta.SourceName
	if rn.observed {
		// This process has not seen the call start: say so, then settle it.
		cr.emit(&Event{Type: EventStart, Arguments: eventArgs(p.Arguments)})
		cr.emit(&Event{Type: EventPermissionCompleted, Approval: &a})
	}
	if err := ctx.Err(); err != nil {
		return cr.finish(ctx, errorResult(KindCanceled, "not run: the run was canceled before this call started (%v)", context.Cause(ctx)))
	}
	if res := cr.resolve(ctx); res != nil {
		return cr.finish(ctx, res)
	}
	if te := cr.e.validate(p.Arguments); te != nil {
		return cr.finish(ctx, ErrorResult(te))
	}
	cr.setCall(p.Arguments)
	if !a.Approved {
		return cr.finish(ctx, notApproved(a))
	}
	return cr.finish(ctx, cr.proceed(ctx))
}
