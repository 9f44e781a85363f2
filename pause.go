package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
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

	// ParentCallID is set on a call of a child run (an agent used as a
	// tool, see [AgentTool]) as its parent lists it: the parent's call
	// that started the child. CallID is then qualified, the parent's call
	// ID, "/" and the child's own (one step more for each level of
	// nesting), so that it is unique among the parent's; Index is the
	// position of the parent's call. Decide it like any other pending
	// call, by its CallID.
	ParentCallID string `json:"parent_call_id,omitempty"`
	// Child is set on a call to an agent used as a tool whose run paused
	// (as [AgentLoop.RunCall] returns it, and in PauseState.Agents): the
	// child's paused state. [PendingCall.Waiting] lists the calls it waits
	// on.
	Child *PauseState `json:"child,omitempty"`
	// Program is set on a call whose tool's inner calls (see [Inner], as
	// code mode makes them) wait for a decision: the inner calls that
	// finished before the pause, served again when the tool runs again
	// on resume, and those that wait. [PendingCall.Waiting] lists the
	// latter.
	Program *ProgramState `json:"program,omitempty"`
}

// Waiting returns the calls that wait for a decision before p can go on:
// p itself, or, for a call to an agent whose run paused, the calls its
// child run waits on, qualified as a parent lists them (see
// ParentCallID). The slice is the caller's.
func (p *PendingCall) Waiting() []PendingCall {
	switch {
	case p.Child != nil:
		out := make([]PendingCall, len(p.Child.Pending))
		for i, c := range p.Child.Pending {
			c.CallID = childCallID(p.CallID, c.CallID)
			c.ParentCallID, c.Index, c.Child = p.CallID, p.Index, nil
			out[i] = c
		}
		return out
	case p.Program != nil:
		// An inner call's ID names the call already (see Inner); one to an
		// agent whose run paused lists what that agent waits on.
		var out []PendingCall
		for _, c := range p.Program.Pending {
			for _, w := range c.Waiting() {
				w.ParentCallID, w.Index, w.Child, w.Program = p.CallID, p.Index, nil, nil
				out = append(out, w)
			}
		}
		return out
	}
	return []PendingCall{*p}
}

// nests reports whether p waits on calls of its own: a child run's, or
// its program's inner calls.
func (p *PendingCall) nests() bool { return p.Child != nil || p.Program != nil }

// childCallID is the ID under which a parent lists a call of the child
// run its call parent started.
func childCallID(parent, child string) string { return parent + "/" + child }

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
	// Pending lists the calls that wait for a decision: every call of
	// the paused turn that waits, and every call that the paused child
	// run of an agent used as a tool waits on (see
	// PendingCall.ParentCallID). Resume needs a decision for each, by
	// CallID.
	Pending []PendingCall `json:"pending"`
	// Agents lists the calls of the paused turn that wait on calls of
	// their own: calls to agents used as tools (see [AgentTool]) whose
	// runs paused, each with its child's state in Child, and calls whose
	// tool's inner calls wait (see [Inner]), with the program's journal
	// in Program. Resume resumes each child once, with the decisions for
	// the calls it waits on, and runs each program again.
	Agents     []PendingCall   `json:"agents,omitempty"`
	Executions []ToolExecution `json:"executions,omitempty"`
	// Accounting is what the run had spent when it paused.
	Accounting
	// Output is the run's output format, if it was given one other than
	// the loop's (by RunTyped); Resume goes on asking for it.
	Output *OutputFormat `json:"output,omitempty"`
	// InvalidOutputs counts the invalid final answers the run has had.
	InvalidOutputs int `json:"invalid_outputs,omitempty"`
	// Queued holds the messages sent into the run (see [Inbox]) that it
	// had not delivered when it paused, in the order sent. A program may
	// add to it while the run is paused (and seal the state again, if it
	// is sealed). Resume delivers them as the run would have: steering
	// messages at its first safe point, follow-ups when it would
	// otherwise end.
	Queued []QueuedMessage `json:"queued,omitempty"`
	// Interrupt is the interrupt (see [Inbox.Interrupt]) the run had not
	// acted on when it paused; Resume acts on it as the run would have:
	// calls of the paused turn it keeps from starting are answered as
	// not run, and the run stops where its mode says.
	Interrupt *Interrupt `json:"interrupt,omitempty"`

	// MAC is the state's seal, set by [PauseState.Seal] (by the run that
	// paused, if its loop has a [Sealing] key): Resume on a loop with the
	// key refuses the state unless it matches.
	MAC string `json:"mac,omitempty"`
}

func (rn *runState) pause(res *RunResult, results []*ToolResult, pending []PendingCall) (*RunResult, error) {
	var agents []PendingCall
	if slices.ContainsFunc(pending, func(p PendingCall) bool { return p.nests() }) {
		// List the calls the paused agents wait on, and keep the agents.
		var flat []PendingCall
		for i := range pending {
			if pending[i].nests() {
				agents = append(agents, pending[i])
			}
			flat = append(flat, pending[i].Waiting()...)
		}
		pending = flat
	}
	st := &PauseState{
		RunID: rn.id, Turn: rn.turn, Messages: slices.Clone(res.Messages), Results: results,
		Pending: pending, Agents: agents, Executions: slices.Clone(res.Executions), Accounting: res.Accounting,
	}
	if c := rn.ctl; c != nil && c.out != nil {
		st.InvalidOutputs = c.out.invalid
		if rn.output != nil {
			st.Output = c.out.format
		}
	}
	res.Paused = st
	res.StopReason = StopToolUse
	if js := rn.jobsNow(); js != nil {
		// Jobs end at a pause: the process may not be there to resume.
		js.endAll(res, true)
		if rn.steer == nil { // not yet delivered through an inbox
			st.Queued = append(st.Queued, js.inbox.takeQueue()...)
		}
	}
	if rn.steer != nil {
		rn.undelivered(res)
	}
	for i := range st.Queued {
		st.Queued[i].job = nil // the state is data: the job ends with this run
	}
	if key := rn.l.Sealing.Key; len(key) > 0 {
		if err := st.Seal(key); err != nil {
			return rn.end(res, errors.Join(ErrPaused, err))
		}
	}
	acc := res.Accounting
	rn.emit(&Event{Type: EventRunPaused, Pending: pending, Agents: agents, Queued: st.Queued, Interrupt: st.Interrupt, Accounting: &acc})
	return rn.end(res, ErrPaused)
}

// Resume continues a paused run with a decision for each pending call,
// keyed by call ID. Approved calls run (once, through the pre-hooks, the
// tool and the post-hooks: the guard already spoke); denied calls get a
// denied result with the decision's reason; calls of the same turn that
// already finished are not run again. The call of an agent whose run
// paused (see [AgentTool] and PauseState.Agents) resumes the child's run,
// once, with the decisions for the calls it waits on; the child's result
// becomes the call's, or, if the child asks again, the run pauses again.
// The run then goes on as Run would, and its transcript ends as if an
// Approver had answered at the time.
//
// Resume consumes the state: resuming the same state twice runs the
// approved calls twice. If a pending call has no decision, Resume returns
// ErrMissingDecision and runs nothing; if a decision is for a call the
// state does not wait on, or the loop has a [Sealing] key and the state is
// not sealed with it or was changed since, ErrTampered, and runs nothing.
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
	if key := l.Sealing.Key; len(key) > 0 {
		if err := st.Verify(key); err != nil {
			return nil, err
		}
	}
	last := st.Messages[len(st.Messages)-1]
	if last.Role != RoleAssistant || len(last.ToolCalls) != len(st.Results) {
		return nil, errors.New("toolloop: Resume: pause state does not end with the paused turn")
	}
	byIndex, err := pendingByIndex(st, last, decisions)
	if err != nil {
		return nil, err
	}
	rn := l.newRun(st.RunID, stream)
	rn.turn, rn.callsAt = st.Turn, st.ToolCalls
	// The inner calls (see Inner) of the turn's calls that finished
	// before the pause, and those in the journals of the programs that
	// paused, were admitted under Budget.MaxToolCalls, but the run counts
	// them only once it appends the calls' results: they count before
	// any program's new calls ask the budget.
	for _, r := range st.Results {
		if r != nil {
			rn.callsAt += r.Meta.InnerCalls
		}
	}
	for _, a := range st.Agents {
		if a.Program != nil {
			rn.callsAt += len(a.Program.Calls)
		}
	}
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
	outer := ctx
	ctx, cancel := rn.budgetContext(ctx)
	defer cancel()
	rn.base, rn.jobBase = ctx, LastJobNumber(st.Messages, st.Results...)
	ctx, err = rn.steerSetup(ctx, st.Queued, st.Interrupt)
	if err != nil {
		return nil, err
	}
	rn.emit(&Event{Type: EventRunResumed, Approvals: decisions})
	exec := func(ctx context.Context, cr *callRun) (*ToolResult, *PendingCall) {
		p, ok := byIndex[int(cr.index)]
		switch {
		case !ok: // a null result that was not pending: run it normally
			return rn.execCall(ctx, cr)
		case p.Child != nil:
			return rn.resumeAgent(ctx, cr, p, decisions)
		case p.Program != nil:
			return rn.resumeProgram(ctx, cr, p, decisions)
		}
		return rn.resumeCall(ctx, cr, p, decisions[p.CallID])
	}
	results, pending := rn.runTurn(ctx, last.ToolCalls, st.Results, exec)
	if len(pending) > 0 && (rn.steer == nil || !rn.stopHeld(results, pending, last.ToolCalls)) {
		return rn.pause(res, results, pending)
	}
	rn.appendResults(res, results)
	if err := ctx.Err(); err != nil && (rn.steer == nil || !rn.steer.cut(ctx)) {
		return rn.aborted(outer, ctx, res, err)
	}
	if err := rn.checkFailures(res, results); err != nil {
		return rn.end(res, err)
	}
	return l.loop(outer, ctx, rn, res)
}

// pendingByIndex checks a pause state against its paused turn and the
// decisions, and returns what waits at each position of the turn: a call
// for a decision, or a call to an agent whose run paused.
func pendingByIndex(st *PauseState, last Message, decisions map[string]Approval) (map[int]PendingCall, error) {
	inTurn := func(p *PendingCall, id string) bool {
		return p.Index >= 0 && p.Index < len(last.ToolCalls) && last.ToolCalls[p.Index].ID == id
	}
	byIndex := make(map[int]PendingCall, len(st.Pending))
	for _, a := range st.Agents {
		if !a.nests() || !inTurn(&a, a.CallID) {
			return nil, fmt.Errorf("toolloop: Resume: paused agent call %s is not in the paused turn", a.CallID)
		}
		for _, w := range a.Waiting() {
			if _, ok := decisions[w.CallID]; !ok {
				return nil, fmt.Errorf("%w %s (%s)", ErrMissingDecision, w.CallID, w.Name)
			}
		}
		byIndex[a.Index] = a
	}
	for _, p := range st.Pending {
		if _, ok := decisions[p.CallID]; !ok {
			return nil, fmt.Errorf("%w %s (%s)", ErrMissingDecision, p.CallID, p.Name)
		}
		if p.ParentCallID != "" {
			if a, ok := byIndex[p.Index]; !ok || !a.nests() || a.CallID != p.ParentCallID {
				return nil, fmt.Errorf("toolloop: Resume: pending call %s belongs to no paused agent call", p.CallID)
			}
			continue
		}
		if !inTurn(&p, p.CallID) {
			return nil, fmt.Errorf("toolloop: Resume: pending call %s is not in the paused turn", p.CallID)
		}
		byIndex[p.Index] = p
	}
	// Every pending call has a decision: any other decision was never
	// asked for.
	asked := make(map[string]bool, len(st.Pending))
	for _, p := range st.Pending {
		asked[p.CallID] = true
	}
	for id := range decisions {
		if !asked[id] {
			return nil, fmt.Errorf("%w: a decision for %s, which the run does not wait on", ErrTampered, id)
		}
	}
	return byIndex, nil
}

// resumeCall finishes a call that waited for a decision. It returns a
// pending call instead when the call is to an agent whose run paused.
func (rn *runState) resumeCall(ctx context.Context, cr *callRun, p PendingCall, a Approval) (*ToolResult, *PendingCall) {
	if res := cr.restore(ctx, p, &a); res != nil {
		return cr.finish(ctx, res), nil
	}
	cr.tm.lap(stageChecks)
	if !a.Approved {
		return cr.finish(ctx, notApproved(a)), nil
	}
	if res := cr.approvedWith(a.Arguments); res != nil {
		return cr.finish(ctx, res), nil
	}
	res := cr.proceed(ctx)
	if res == nil {
		return cr.pausedCall()
	}
	return cr.finish(ctx, res), nil
}

// resumeAgent finishes a call to an agent used as a tool whose run
// paused: the tool runs again, with the child's state and the decisions
// for the calls it waits on, and resumes the child's run, once. The
// guard and the pre-hooks do not run again: they spoke before the child
// started. The child may pause again.
func (rn *runState) resumeAgent(ctx context.Context, cr *callRun, p PendingCall, decisions map[string]Approval) (*ToolResult, *PendingCall) {
	if err := ctx.Err(); err != nil {
		cr.tc.Arguments, cr.kind, cr.source = p.Arguments, p.Meta.Source, p.Meta.SourceName
		return cr.finish(ctx, errorResult(KindCanceled, "the run was canceled before the paused run of the agent %s resumed: "+
			"the calls it had made stand, and none of those it waited on ran (%v)", cr.tc.Name, context.Cause(ctx))), nil
	}
	if res := cr.restore(ctx, p, nil); res != nil {
		return cr.finish(ctx, res), nil
	}
	if _, ok := cr.e.tool.(*AgentTool); !ok {
		return cr.finish(ctx, errorResult(KindExecutionFailed,
			"not run: %s was an agent whose run paused, and is no longer one, so its run cannot be resumed", cr.tc.Name)), nil
	}
	child := make(map[string]Approval, len(p.Child.Pending))
	for _, c := range p.Child.Pending {
		if a, ok := decisions[childCallID(p.CallID, c.CallID)]; ok {
			child[c.CallID] = a
		}
	}
	ctx = context.WithValue(ctx, agentResumeKey{}, &agentResume{runID: rn.id, callID: cr.tc.ID, state: p.Child, decisions: child})
	res := cr.runTool(ctx)
	if res == nil {
		return cr.pausedCall()
	}
	return cr.finish(ctx, res), nil
}

// restore puts back what the pipeline recorded of a pending call before
// it paused, reports it (and its decision a, if any) to this process's
// observers, and resolves and validates it again. It returns a result if
// the call cannot go on.
func (cr *callRun) restore(ctx context.Context, p PendingCall, a *Approval) *ToolResult {
	cr.tc.Arguments = p.Arguments
	x := cr.extra()
	x.repairs, x.modified, x.notes = p.Meta.Repairs, p.Meta.Modified, p.Notes
	cr.kind, cr.source = p.Meta.Source, p.Meta.SourceName
	if cr.rn.observed {
		// This process has not seen the call start: say so, then settle it.
		cr.emit(&Event{Type: EventStart, Arguments: eventArgs(p.Arguments)})
		cr.tm = &callMarks{mark: time.Now()}
		if a != nil {
			cr.emit(&Event{Type: EventPermissionCompleted, Approval: a})
		}
	}
	if err := ctx.Err(); err != nil {
		return errorResult(KindCanceled, "not run: the run was canceled before this call started (%v)", context.Cause(ctx))
	}
	if res := cr.resolve(ctx); res != nil {
		return res
	}
	if te := cr.e.validate(p.Arguments); te != nil {
		return ErrorResult(te)
	}
	cr.setCall(p.Arguments)
	return nil
}
