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
// the decision; otherwise it is denied. RunCall does not check the loop's
// set-up: a driver calls [AgentLoop.Validate] once, before it starts.
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
