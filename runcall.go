package toolloop

import "context"

// RunCall runs one tool call through the whole pipeline outside Run, for
// drivers that schedule calls themselves, such as a durable workflow
// engine that runs each call as a separately retried activity. The call
// gets exactly what it would get inside Run on the given run ID and turn:
// the same stages, events, hang protection, truncation and result.
//
// decision settles an Ask verdict that the call meets: an approved call
// goes on to the pre-hooks and the tool, a denied one gets the same denied
// result an Approver's denial gives. With decision nil an ask goes to the
// Approver, or, with PauseForApproval set, RunCall returns the pending call
// (and no result) so the driver can wait for a human and call again with
// the decision; otherwise it is denied. A call to an agent used as a tool
// (see [AgentTool]) whose run pauses returns its pending call too, with
// the child's state in Child: finish it with [AgentLoop.ResumeCall].
// RunCall does not check the loop's set-up: a driver calls
// [AgentLoop.Validate] once, before it starts.
func (l *AgentLoop) RunCall(ctx context.Context, runID string, turn int, tc ToolCall, decision *Approval) (*ToolResult, *PendingCall) {
	rn := l.newRun(runID, nil)
	rn.turn, rn.decision = turn, decision
	if l.Deferred != nil || l.Output != nil {
		// The loop's own tools (tool search, final answer) resolve here
		// too. A bad output format fails Run at once; here its tool just
		// does not resolve.
		if err := rn.setup(nil); err != nil {
			rn.logger().Error("toolloop: RunCall: turn controls", "error", err)
		}
	}
	results, pending := rn.runTurn(ctx, []ToolCall{tc}, nil, nil)
	if len(pending) > 0 {
		return nil, &pending[0]
	}
	return results[0], nil
}

// ResumeCall finishes a call that RunCall left pending, for drivers that
// schedule calls themselves: p is what RunCall (or ResumeCall) returned
// for tc, and decisions holds a decision for each call of p.Waiting(), by
// CallID. A call that waited for its guard's ask goes on as Resume takes
// it: approved, through the pre-hooks, the tool and the post-hooks;
// denied, with a denied result. A call to an agent whose run paused (see
// [AgentTool]) resumes that run, once, with the decisions for the calls
// it waits on; it may pause again, and then ResumeCall returns the new
// pending call. If a decision is missing, ResumeCall runs nothing and
// returns p.
func (l *AgentLoop) ResumeCall(ctx context.Context, runID string, turn int, tc ToolCall, p *PendingCall, decisions map[string]Approval) (*ToolResult, *PendingCall) {
	for _, w := range p.Waiting() {
		if _, ok := decisions[w.CallID]; !ok {
			return nil, p
		}
	}
	rn := l.newRun(runID, nil)
	rn.turn = turn
	exec := func(ctx context.Context, cr *callRun) (*ToolResult, *PendingCall) {
		if p.Child != nil {
			return rn.resumeAgent(ctx, cr, *p, decisions)
		}
		if p.Program != nil {
			return rn.resumeProgram(ctx, cr, *p, decisions)
		}
		return rn.resumeCall(ctx, cr, *p, decisions[p.CallID])
	}
	results, pending := rn.runTurn(ctx, []ToolCall{tc}, nil, exec)
	if len(pending) > 0 {
		return nil, &pending[0]
	}
	return results[0], nil
}
