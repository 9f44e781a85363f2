package temporal

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
)

// Input is the workflow's argument. Start builds it; in JSON it is
// {"messages": [...]}, for starting a run from another SDK or the CLI.
type Input struct {
	// Messages is the transcript to continue, as for AgentLoop.Run.
	Messages []toolloop.Message `json:"messages"`
	// Carried is what a run carries into the next workflow execution when
	// it continues as new; nil when a run starts.
	Carried *carried `json:"carried,omitempty"`
}

// The Temporal names of the workflow's query and signals.
const (
	// StatusQuery answers a [Status]: the turn and the state of each of
	// its calls. Describe adds the progress the calls reported.
	StatusQuery = "toolloop.status"
	// DecisionSignal carries a [Decision] for a call that waits for
	// approval. Decide sends it.
	DecisionSignal = "toolloop.decision"
	// SteerSignal carries messages into the running run, as a
	// []toolloop.QueuedMessage (in JSON, [{"origin": "steer", "message":
	// {...}}]): each is delivered as toolloop.Inbox.Send or FollowUp
	// delivers it, by its Origin. Steer and FollowUp send it.
	SteerSignal = "toolloop.steer"
	// InterruptSignal carries a toolloop.Interrupt (in JSON, {"mode":
	// "now", "continue": true}), acted on as toolloop.Inbox.Interrupt
	// says. Interrupt sends it.
	InterruptSignal = "toolloop.interrupt"
)

// The types of the application errors a run fails with; the failure's
// details hold the *toolloop.RunResult so far and a *failure. Wait turns
// them back into the errors AgentLoop.Run returns.
const (
	errTypeLength       = "toolloop.Length"
	errTypeModel        = "toolloop.Model"
	errTypeBudget       = "toolloop.Budget"
	errTypeUnknownPrice = "toolloop.UnknownPrice"
	// errTypeRunInterrupted: an interrupt stopped the run.
	errTypeRunInterrupted = "toolloop.RunInterrupted"
	// errTypeModelFailed, errTypeContextLength and errTypeToolFailed are
	// activity failures.
	errTypeModelFailed   = "toolloop.ModelFailed"
	errTypeContextLength = "toolloop.ContextLength"
	errTypeToolFailed    = "toolloop.ToolFailed"
	errTypeWorkerStopped = "toolloop.Interrupted"
)

// longRunVersion marks the workflow code that honours the loop's context
// managers, budget and failure policy and continues as new: runs started
// before it replay as they ran.
const (
	longRunChange  = "toolloop.long-run"
	longRunVersion = 1
)

// turnCapVersion marks the workflow code that answers the calls of a turn
// beyond Limits.MaxCallsPerTurn as not run.
const (
	turnCapChange  = "toolloop.calls-per-turn"
	turnCapVersion = 1
)

// run is one workflow execution in progress. It is workflow code: every
// step is deterministic.
type run struct {
	ag *agent
	// outer is the workflow's context; ctx is outer, cancelled as well when
	// Budget.MaxDuration runs out.
	outer, ctx workflow.Context
	res        *toolloop.RunResult
	turn       int
	calls      []*slot // the current turn's calls, for StatusQuery
	// decisions receives DecisionSignal.
	decisions workflow.ReceiveChannel
	// steer, when the run takes steering signals (steerVersion), is its
	// inbox; nil otherwise.
	steer *steering

	// longRun: the run honours the long-run policies (longRunVersion).
	longRun bool
	// turnCap: the run honours MaxCallsPerTurn (turnCapVersion).
	turnCap bool
	clock   clock
	tokens  tokenCounter
	// lastModel names the model that answered last.
	lastModel string
	// turnsHere counts the turns of this workflow execution.
	turnsHere int
	// jobs, when the run may start background jobs (jobsVersion), are
	// its jobs; nil otherwise.
	jobs *jobs
}

// workflow is the agent loop as a workflow: the same steps as
// AgentLoop.Run, with each model turn, each tool call and each round of
// context management an activity.
func (ag *agent) workflow(ctx workflow.Context, in Input) (*toolloop.RunResult, error) {
	rn := &run{
		ag: ag, outer: ctx, ctx: ctx,
		res:       &toolloop.RunResult{RunID: workflow.GetInfo(ctx).WorkflowExecution.ID, Messages: slices.Clone(in.Messages)},
		decisions: workflow.GetSignalChannel(ctx, DecisionSignal),
	}
	if err := workflow.SetQueryHandler(ctx, StatusQuery, rn.status); err != nil {
		return nil, err
	}
	rn.longRun = workflow.GetVersion(ctx, longRunChange, workflow.DefaultVersion, longRunVersion) >= longRunVersion
	rn.turnCap = workflow.GetVersion(ctx, turnCapChange, workflow.DefaultVersion, turnCapVersion) >= turnCapVersion
	if workflow.GetVersion(ctx, steerChange, workflow.DefaultVersion, steerVersion) >= steerVersion {
		rn.steer = &steering{}
	}
	rn.startJobs(ctx)
	var elapsed time.Duration
	if c := in.Carried; c != nil {
		elapsed = c.restore(rn)
	}
	if fixed, notes := toolloop.RepairTranscript(rn.res.Messages); len(notes) > 0 {
		rn.res.Messages = fixed
		workflow.GetLogger(ctx).Info("toolloop: repaired the input transcript", "repairs", notes)
	}
	if rn.longRun {
		rn.ctx, rn.clock.cancelRun = workflow.WithCancel(ctx)
		rn.clock.max = ag.Loop.Budget.MaxDuration
		rn.clock.start(ctx, elapsed)
	}
	if rn.steer != nil {
		rn.startSteering(ctx)
	}
	res, err := rn.loop()
	if !workflow.IsContinueAsNewError(err) {
		rn.endJobs()
	}
	rn.drainDecisions()
	rn.undelivered()
	return res, err
}

// loop takes model turns until the run ends, as AgentLoop.Run does.
func (rn *run) loop() (*toolloop.RunResult, error) {
	res, l := rn.res, rn.ag.Loop
	managed := rn.longRun && len(l.ContextManagers) > 0
	for {
		if rn.longRun {
			if err := rn.expired(); err != nil {
				return rn.limitReached(err)
			}
			if err := rn.checkBudget(); err != nil {
				return rn.limitReached(err)
			}
		}
		if max := rn.ag.budget().MaxTurns; rn.turn >= max {
			res.StopReason = toolloop.StopToolUse
			be := &toolloop.BudgetError{Limit: toolloop.LimitTurns, Used: float64(rn.turn), Max: float64(max)}
			if rn.longRun {
				return rn.limitReached(be)
			}
			return rn.fail(errTypeBudget, be.Error(), &failure{Budget: be})
		}
		if rn.steer != nil { // the safe point: interrupts, then messages
			if stop, _ := rn.safePoint(false); stop {
				return rn.interrupted()
			}
		}
		if rn.ctx.Err() != nil {
			if rn.cut() {
				continue // an interrupt came: act on it
			}
			return rn.aborted()
		}
		if rn.continueAsNew() {
			return nil, rn.continueAsNewError()
		}
		if managed {
			if _, err := rn.manageContext(rn.ctx, false, fmt.Sprintf("turn-%d/context", rn.turn+1)); err != nil {
				if rn.cut() {
					continue
				}
				return rn.aborted()
			}
		}
		rn.turn++
		rn.turnsHere++
		rn.calls = nil
		res.Turns = rn.turn
		out, err := rn.generate(rn.ctx, toolloop.ToolChoice{}, fmt.Sprintf("turn-%d", rn.turn))
		if specs, overflow := isContextLength(err); overflow && managed {
			// Free room once, then take the turn again.
			rn.tokens.Specs = specs
			if changed, merr := rn.manageContext(rn.ctx, true, fmt.Sprintf("turn-%d/overflow", rn.turn)); changed && merr == nil {
				out, err = rn.generate(rn.ctx, toolloop.ToolChoice{}, fmt.Sprintf("turn-%d/retry", rn.turn))
			}
		}
		if err != nil {
			if rn.cut() {
				rn.keepPartial(err)
				continue
			}
			if be := rn.expired(); be != nil {
				res.StopReason = toolloop.StopAborted
				return rn.limitReached(be)
			}
			if rn.ctx.Err() != nil {
				return rn.canceled()
			}
			res.StopReason = toolloop.StopError
			_, overflow := isContextLength(err)
			return rn.fail(errTypeModel, failureMessage(err), &failure{ContextLength: overflow})
		}
		msg := rn.accept(out)
		if rn.longRun && l.Budget.MaxCost > 0 && out.Unpriced {
			rn.notRun(msg.ToolCalls, "not run: the run stopped because the cost of this turn cannot be counted")
			return rn.fail(errTypeUnknownPrice, fmt.Sprintf(
				"Budget.MaxCost is set, but model %q has no price: add it to AgentLoop.ModelTable", out.Response.Model), nil)
		}
		if len(msg.ToolCalls) == 0 {
			if msg.StopReason == toolloop.StopLength {
				return rn.fail(errTypeLength, toolloop.ErrLength.Error(), nil)
			}
			if rn.steer != nil {
				if _, more := rn.safePoint(true); more {
					continue // follow-ups: the run goes on
				}
				if rn.awaitJobs() {
					continue // a job ended, or a message came: deliver it
				}
			}
			return res, nil
		}
		switch msg.StopReason {
		case toolloop.StopLength:
			// The last call's arguments may be cut off: run none of them.
			rn.notRun(msg.ToolCalls, "not run: the model's output hit its token limit, so this call may be incomplete")
			return rn.fail(errTypeLength, toolloop.ErrLength.Error(), nil)
		case toolloop.StopRefusal:
			rn.notRun(msg.ToolCalls, "not run: the provider refused or filtered this turn")
			return res, nil
		}
		if rn.steer != nil {
			if rn.receiveInterrupts(); rn.holding() {
				rn.notRun(msg.ToolCalls, notRunInterrupted)
				continue
			}
		}
		var done []*toolloop.ToolResult
		if rn.longRun || rn.turnCap {
			done = rn.overBudget(msg.ToolCalls)
		}
		results := rn.runTurn(msg.ToolCalls, out.Calls, done)
		for _, r := range results {
			res.Messages = append(res.Messages, toolloop.ToolMessage(r))
			res.Executions = append(res.Executions, execution(rn.turn, r))
			if s := r.Meta.Spent; s != nil { // an agent used as a tool
				res.AddSpent(s)
			}
			if rn.longRun { // a program's inner calls, as Run counts them
				res.ToolCalls += r.Meta.InnerCalls
			}
		}
		if rn.ctx.Err() != nil {
			if rn.cut() {
				continue
			}
			return rn.aborted()
		}
		if !rn.longRun {
			continue
		}
		ran := results
		if done != nil { // leave out the calls the budget did not run
			ran = make([]*toolloop.ToolResult, 0, len(results))
			for i, r := range results {
				if done[i] == nil {
					ran = append(ran, r)
				}
			}
		}
		if be := rn.checkFailures(ran); be != nil {
			fe, _ := errors.AsType[*toolloop.FailureError](be)
			return rn.fail(errTypeBudget, be.Error(), &failure{Budget: &toolloop.BudgetError{Limit: be.Limit}, Failure: fe})
		}
	}
}

// aborted ends a run whose inner context is done: at the budget's
// deadline, as a limit; otherwise as cancelled.
func (rn *run) aborted() (*toolloop.RunResult, error) {
	if be := rn.expired(); be != nil {
		rn.res.StopReason = toolloop.StopAborted
		return rn.limitReached(be)
	}
	return rn.canceled()
}

// accept appends the model's response to the transcript and counts what
// it cost, as AgentLoop.Run does.
func (rn *run) accept(out *turnOutput) toolloop.Message {
	res, resp := rn.res, out.Response
	msg := toolloop.AssistantMessage(rn.turn, resp)
	res.Usage.Add(resp.Usage)
	rn.addCost(out.Cost, out.Unpriced)
	res.Messages = append(res.Messages, msg)
	res.FinalText = msg.Text()
	res.StopReason = msg.StopReason
	if resp.Model != "" {
		rn.lastModel = resp.Model
	}
	if rn.longRun && len(rn.ag.Loop.ContextManagers) > 0 {
		rn.tokens.Specs = out.SpecTokens
		rn.tokens.reported(res.Messages, resp.Usage)
	}
	return msg
}

// addCost adds a priced usage to the run's cost.
func (rn *run) addCost(cost float64, unpriced bool) {
	if unpriced {
		rn.res.UnpricedTurns++
		return
	}
	rn.res.Cost += cost
}

// generate runs one model turn as an activity, on ctx, with the given
// activity ID.
func (rn *run) generate(ctx workflow.Context, choice toolloop.ToolChoice, id string) (*turnOutput, error) {
	ag := rn.ag
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          id,
		StartToCloseTimeout: ag.ModelTimeout,
		HeartbeatTimeout:    ag.HeartbeatTimeout,
		RetryPolicy:         ag.ModelRetry,
		// A cancelled turn reports the text it had streamed, which an
		// interrupt keeps.
		WaitForCancellation: rn.steer != nil,
		Summary:             fmt.Sprintf("model turn %d", rn.turn),
	})
	var out turnOutput
	err := rn.wait(actx, workflow.ExecuteActivity(actx, ag.modelActivity, turnInput{
		RunID: rn.res.RunID, Turn: rn.turn, Messages: rn.res.Messages, ToolChoice: choice,
	}), &out)
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
// details hold the result so far and f, if any.
func (rn *run) fail(errType, msg string, f *failure) (*toolloop.RunResult, error) {
	details := []any{rn.res}
	if f != nil {
		details = append(details, f)
	}
	return nil, tsdk.NewApplicationErrorWithOptions(msg, errType, tsdk.ApplicationErrorOptions{
		NonRetryable: true, Details: details,
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
