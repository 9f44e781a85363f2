package temporal

import (
	"errors"
	"fmt"
	"slices"

	tsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
)

// Input is the workflow's argument. Start builds it; in JSON it is
// {"messages": [...]}, for starting a run from another SDK or the CLI.
type Input struct {
	// Messages is the transcript to continue, as for AgentLoop.Run.
	Messages []toolloop.Message `json:"messages"`
}

// The Temporal names of the workflow's query and signal.
const (
	// StatusQuery answers a [Status]: the turn and the state of each of
	// its calls. Describe adds the progress the calls reported.
	StatusQuery = "toolloop.status"
	// DecisionSignal carries a [Decision] for a call that waits for
	// approval. Decide sends it.
	DecisionSignal = "toolloop.decision"
)

// The types of the application errors a run fails with; the failure's
// details hold the *toolloop.RunResult so far. Wait turns them back into
// the errors AgentLoop.Run returns.
const (
	errTypeMaxIterations = "toolloop.MaxIterations"
	errTypeLength        = "toolloop.Length"
	errTypeModel         = "toolloop.Model"
	// errTypeModelFailed and errTypeToolFailed are activity failures.
	errTypeModelFailed = "toolloop.ModelFailed"
	errTypeToolFailed  = "toolloop.ToolFailed"
	errTypeInterrupted = "toolloop.Interrupted"
)

// run is one workflow execution in progress. It is workflow code: every
// step is deterministic.
type run struct {
	ag    *agent
	ctx   workflow.Context
	res   *toolloop.RunResult
	turn  int
	calls []*slot // the current turn's calls, for StatusQuery
	// decisions receives DecisionSignal.
	decisions workflow.ReceiveChannel
}

// workflow is the agent loop as a workflow: the same steps as
// AgentLoop.Run, with each model turn and each tool call an activity.
func (ag *agent) workflow(ctx workflow.Context, in Input) (*toolloop.RunResult, error) {
	rn := &run{
		ag: ag, ctx: ctx,
		res:       &toolloop.RunResult{RunID: workflow.GetInfo(ctx).WorkflowExecution.ID, Messages: slices.Clone(in.Messages)},
		decisions: workflow.GetSignalChannel(ctx, DecisionSignal),
	}
	if err := workflow.SetQueryHandler(ctx, StatusQuery, rn.status); err != nil {
		return nil, err
	}
	if fixed, notes := toolloop.RepairTranscript(rn.res.Messages); len(notes) > 0 {
		rn.res.Messages = fixed
		workflow.GetLogger(ctx).Info("toolloop: repaired the input transcript", "repairs", notes)
	}
	res, err := rn.loop()
	rn.drainDecisions()
	return res, err
}

// loop takes model turns until the run ends, as AgentLoop.Run does.
func (rn *run) loop() (*toolloop.RunResult, error) {
	ctx, res := rn.ctx, rn.res
	for {
		if rn.turn >= rn.ag.maxIterations() {
			res.StopReason = toolloop.StopToolUse
			return rn.fail(errTypeMaxIterations, toolloop.ErrMaxIterations.Error())
		}
		if ctx.Err() != nil {
			return rn.canceled()
		}
		rn.turn++
		rn.calls = nil
		res.Turns = rn.turn
		out, err := rn.generate()
		if err != nil {
			if ctx.Err() != nil {
				return rn.canceled()
			}
			res.StopReason = toolloop.StopError
			return rn.fail(errTypeModel, failureMessage(err))
		}
		msg := toolloop.AssistantMessage(rn.turn, out.Response)
		res.Usage.Add(out.Response.Usage)
		res.Messages = append(res.Messages, msg)
		res.FinalText = msg.Text()
		res.StopReason = msg.StopReason
		if len(msg.ToolCalls) == 0 {
			if msg.StopReason == toolloop.StopLength {
				return rn.fail(errTypeLength, toolloop.ErrLength.Error())
			}
			return res, nil
		}
		switch msg.StopReason {
		case toolloop.StopLength:
			// The last call's arguments may be cut off: run none of them.
			rn.notRun(msg.ToolCalls, "not run: the model's output hit its token limit, so this call may be incomplete")
			return rn.fail(errTypeLength, toolloop.ErrLength.Error())
		case toolloop.StopRefusal:
			rn.notRun(msg.ToolCalls, "not run: the provider refused or filtered this turn")
			return res, nil
		}
		for _, r := range rn.runTurn(msg.ToolCalls, out.Calls) {
			res.Messages = append(res.Messages, toolloop.ToolMessage(r))
			res.Executions = append(res.Executions, execution(rn.turn, r))
		}
		if ctx.Err() != nil {
			return rn.canceled()
		}
	}
}

// generate runs one model turn as an activity.
func (rn *run) generate() (*turnOutput, error) {
	ag := rn.ag
	actx := workflow.WithActivityOptions(rn.ctx, workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("turn-%d", rn.turn),
		StartToCloseTimeout: ag.ModelTimeout,
		HeartbeatTimeout:    ag.HeartbeatTimeout,
		RetryPolicy:         ag.ModelRetry,
		Summary:             fmt.Sprintf("model turn %d", rn.turn),
	})
	var out turnOutput
	err := workflow.ExecuteActivity(actx, ag.modelActivity, turnInput{
		RunID: rn.res.RunID, Turn: rn.turn, Messages: rn.res.Messages,
	}).Get(actx, &out)
	if err == nil && out.Response == nil {
		err = errors.New("model returned no response")
	}
	if err == nil && len(out.Calls) != len(out.Response.Message.ToolCalls) {
		err = errors.New("model turn described the wrong number of calls")
	}
	return &out, err
}

// notRun answers calls the loop will not run with canceled results, as
// AgentLoop.Run does.
func (rn *run) notRun(calls []toolloop.ToolCall, why string) {
	for _, tc := range calls {
		r := errorResult(tc, toolloop.KindCanceled, why)
		rn.res.Messages = append(rn.res.Messages, toolloop.ToolMessage(r))
		rn.res.Executions = append(rn.res.Executions, execution(rn.turn, r))
	}
}

// fail ends the run with an application error of the given type whose
// details hold the result so far.
func (rn *run) fail(errType, msg string) (*toolloop.RunResult, error) {
	return nil, tsdk.NewApplicationErrorWithOptions(msg, errType, tsdk.ApplicationErrorOptions{
		NonRetryable: true, Details: []any{rn.res},
	})
}

// canceled ends a cancelled run; the cancellation's details hold the
// result so far.
func (rn *run) canceled() (*toolloop.RunResult, error) {
	rn.res.StopReason = toolloop.StopAborted
	return nil, tsdk.NewCanceledError(rn.res)
}

// drainDecisions logs decisions that came for calls no longer waiting.
func (rn *run) drainDecisions() {
	var d Decision
	for rn.decisions.ReceiveAsync(&d) {
		workflow.GetLogger(rn.ctx).Warn("toolloop: ignored a decision for a call that is not waiting", "call_id", d.CallID)
	}
}

// failureMessage is the innermost message of an activity failure: the
// model's own error, not Temporal's wrapping.
func failureMessage(err error) string {
	var app *tsdk.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var act *tsdk.ActivityError
	if errors.As(err, &act) && errors.Unwrap(act) != nil {
		return errors.Unwrap(act).Error()
	}
	return err.Error()
}

// errorResult is a failed result built outside the pipeline.
func errorResult(tc toolloop.ToolCall, kind toolloop.ErrorKind, msg string) *toolloop.ToolResult {
	r := &toolloop.ToolResult{
		CallID: tc.ID, Name: tc.Name, Status: toolloop.StatusError,
		Error: &toolloop.ToolError{Kind: kind, Message: msg}, Content: []toolloop.Content{toolloop.TextContent(msg)},
	}
	r.Meta.Bytes = len(msg)
	return r
}

// execution records a call as AgentLoop.Run does.
func execution(turn int, r *toolloop.ToolResult) toolloop.ToolExecution {
	return toolloop.ToolExecution{
		Name: r.Name, CallID: r.CallID, Turn: turn,
		Success: r.Status == toolloop.StatusOK, Output: r.Text(), Error: r.Error, Latency: r.Meta.Duration,
	}
}
