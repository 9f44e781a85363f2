package temporal

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tsdk "go.temporal.io/sdk/temporal"

	"github.com/toolloop/toolloop"
)

// ErrModel: the model failed on every attempt of a turn (or with an error
// no retry can cure). The run ended with StopError; Wait returns its
// result so far with it, as AgentLoop.Run returns its model errors. The
// error's text is the model's; its Go type stayed on the worker, except
// that an error matching providers.ErrContextLength there matches it
// here too.
var ErrModel = errors.New("toolloop/temporal: the model failed")

// RunOptions say how to start a run.
type RunOptions struct {
	// StartWorkflowOptions are Temporal's: TaskQueue, the queue the
	// agent's workers poll, is required; ID names the run (and makes
	// starting it idempotent), or is chosen by Temporal when empty.
	client.StartWorkflowOptions
	// Agent is the Name of the Agent to run; empty means DefaultName.
	Agent string
}

// Start starts a run of an agent on msgs and returns at once. Wait for
// its result with Wait; follow it with Describe; answer its asks with
// Decide; steer it with Steer, FollowUp and Interrupt; stop it with the
// client's CancelWorkflow.
func Start(ctx context.Context, c client.Client, opts RunOptions, msgs []toolloop.Message) (client.WorkflowRun, error) {
	name := opts.Agent
	if name == "" {
		name = DefaultName
	}
	return c.ExecuteWorkflow(ctx, opts.StartWorkflowOptions, name, Input{Messages: msgs})
}

// Wait waits for a run to end and returns its result the way
// AgentLoop.Run does: the result so far with every error, and
// toolloop.ErrLength, toolloop.ErrInterrupted (an [Interrupt] without
// Continue stopped it), a *toolloop.BudgetError (toolloop.ErrBudget) naming
// the limit, with a *toolloop.FailureError as its cause when failed calls
// stopped the run, an error matching toolloop.ErrUnknownPrice,
// ErrModel (and providers.ErrContextLength when the model refused the
// request as too long), or an error that matches context.Canceled (and
// *temporal.CanceledError) for a cancelled run. A limit reached with
// Budget.WrapUp whose wrap-up turn failed gives both errors, joined. Any
// other failure of the workflow (it timed out, was terminated) comes back
// as Temporal reports it, with no result.
//
// Wait follows the run across continue-as-new to its last execution. To
// wait for a run started elsewhere, pass client.GetWorkflow's run.
func Wait(ctx context.Context, run client.WorkflowRun) (*toolloop.RunResult, error) {
	var res *toolloop.RunResult
	err := run.Get(ctx, &res)
	if err == nil {
		return res, nil
	}
	// Details are decoded into a pointer: that is what the workflow put
	// there, and what a test environment hands back undecoded.
	var canceled *tsdk.CanceledError
	if errors.As(err, &canceled) {
		res = nil
		if canceled.HasDetails() && canceled.Details(&res) != nil {
			res = nil
		}
		return res, fmt.Errorf("%w: %w", context.Canceled, err)
	}
	var app *tsdk.ApplicationError
	if !errors.As(err, &app) || !app.HasDetails() {
		return nil, err
	}
	res = nil
	f := &failure{}
	if app.Details(&res, &f) != nil {
		// Runs before long-run support gave the result alone.
		res, f = nil, &failure{}
		if app.Details(&res) != nil {
			return nil, err
		}
	}
	if res == nil || f == nil {
		return nil, err
	}
	if werr := f.err(app.Type(), app.Message()); werr != nil {
		return res, werr
	}
	return nil, err
}

// Run starts a run and waits for its result: Start, then Wait.
func Run(ctx context.Context, c client.Client, opts RunOptions, msgs []toolloop.Message) (*toolloop.RunResult, error) {
	run, err := Start(ctx, c, opts, msgs)
	if err != nil {
		return nil, err
	}
	return Wait(ctx, run)
}

// Decide sends a decision for a call that waits for approval (see
// Status.Awaiting). The run applies it once, to the call if it is still
// waiting, and ignores it otherwise (a second decision for the same call,
// say). The decision is durable as soon as Decide returns, whether or not
// a worker is running. runID may be empty for the latest run of
// workflowID.
func Decide(ctx context.Context, c client.Client, workflowID, runID string, d Decision) error {
	return c.SignalWorkflow(ctx, workflowID, runID, DecisionSignal, d)
}

// Steer sends messages into a running run, as toolloop.Inbox.Send does:
// the run delivers them at its next safe point, before its next model
// turn (never between a call and its result), each as a user message of
// the transcript, in the order sent, exactly once. A run that ends first
// returns them in RunResult.Undelivered; a run that continues as new
// takes them along. A message with no content is ignored.
//
// The messages are durable as soon as Steer returns, whether or not a
// worker is running. runID may be empty for the latest run of workflowID:
// pass it empty to follow a run that continues as new. Steer fails (with
// a *serviceerror.NotFound) when the run has ended.
func Steer(ctx context.Context, c client.Client, workflowID, runID string, msgs ...toolloop.Message) error {
	return send(ctx, c, workflowID, runID, toolloop.OriginSteer, msgs)
}

// FollowUp sends messages to be delivered when the run would otherwise
// end, after the model's final answer, as toolloop.Inbox.FollowUp does:
// the run goes on with them instead. A run that ends for another reason
// (an error, a limit, an interrupt) returns them in
// RunResult.Undelivered. Otherwise as Steer.
func FollowUp(ctx context.Context, c client.Client, workflowID, runID string, msgs ...toolloop.Message) error {
	return send(ctx, c, workflowID, runID, toolloop.OriginFollowUp, msgs)
}

// send signals SteerSignal with the messages that have content.
func send(ctx context.Context, c client.Client, workflowID, runID string, origin toolloop.Origin, msgs []toolloop.Message) error {
	q := make([]toolloop.QueuedMessage, 0, len(msgs))
	for _, m := range msgs {
		if len(m.Content) > 0 {
			q = append(q, toolloop.QueuedMessage{Origin: origin, Message: m})
		}
	}
	if len(q) == 0 {
		return nil
	}
	return c.SignalWorkflow(ctx, workflowID, runID, SteerSignal, q)
}

// Interrupt asks a running run to stop where i.Mode says, and then to end
// or go on as i.Continue says, as toolloop.Inbox.Interrupt does:
//
//   - InterruptNow (the zero Mode) cancels the model turn or the calls
//     in progress: the text the model had streamed is kept as an
//     assistant message with StopReason toolloop.StopInterrupted, and
//     every call that did not finish gets a canceled result.
//   - InterruptAfterModel lets the model turn finish and runs none of
//     its calls that have not started: each is answered as not run.
//   - InterruptAfterTools lets the turn's calls finish and stops before
//     the next model turn.
//
// Then, without Continue, the run ends: Wait returns its result with
// toolloop.ErrInterrupted, StopReason toolloop.StopInterrupted, and the
// messages not delivered in RunResult.Undelivered. With Continue, the
// queued messages are delivered and the model is asked again.
// Interrupts add up as the core's do. The transcript stays valid: every
// call has exactly one result.
//
// An interrupt now reaches a running activity at its next heartbeat
// (see Agent.HeartbeatTimeout). runID is as for Steer; Interrupt fails
// (with a *serviceerror.NotFound) when the run has ended.
func Interrupt(ctx context.Context, c client.Client, workflowID, runID string, i toolloop.Interrupt) error {
	return c.SignalWorkflow(ctx, workflowID, runID, InterruptSignal, i)
}

// Describe reports what a run is doing: its StatusQuery answer, with the
// attempt, the latest progress and the latest output of each running
// call, read from its activity's heartbeat details. The query needs a
// running worker. runID may be empty for the latest run of workflowID:
// pass it empty to follow a run that continues as new. Heartbeat details are decoded with the default data
// converter; with a custom one, progress is left out.
func Describe(ctx context.Context, c client.Client, workflowID, runID string) (*Status, error) {
	v, err := c.QueryWorkflow(ctx, workflowID, runID, StatusQuery)
	if err != nil {
		return nil, err
	}
	var st Status
	if err := v.Get(&st); err != nil {
		return nil, err
	}
	desc, err := c.DescribeWorkflowExecution(ctx, workflowID, runID)
	if err != nil {
		return nil, err
	}
	dc := converter.GetDefaultDataConverter()
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetHeartbeatDetails() == nil {
			continue
		}
		var hb heartbeat
		if dc.FromPayloads(pa.GetHeartbeatDetails(), &hb) != nil || hb.CallID == "" {
			continue
		}
		if hb.Job != "" {
			for i := range st.Jobs {
				if j := &st.Jobs[i]; j.ID == hb.Job && j.Status == toolloop.JobRunning {
					j.OutputBytes = hb.OutputBytes
				}
			}
			continue
		}
		if hb.Turn != st.Turn {
			continue
		}
		for i := range st.Calls {
			if cs := &st.Calls[i]; cs.CallID == hb.CallID && cs.State == CallRunning {
				cs.Attempt, cs.Progress, cs.Partial = pa.GetAttempt(), hb.Progress, hb.Partial
			}
		}
	}
	return &st, nil
}
