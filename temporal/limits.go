package temporal

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
)

// clock measures a run's time for Budget.MaxDuration in workflow time
// (workflow.Now): from the run's start, across continue-as-new, leaving
// out the time the run only waits for approval decisions, as
// AgentLoop.Run leaves out the time between a pause and Resume. When the
// budget runs out it cancels the run's inner context, which stops the
// model turn or the calls in progress, as the core's deadline does.
type clock struct {
	max time.Duration
	// elapsed is the time counted before since.
	elapsed time.Duration
	since   time.Time
	on      bool
	fired   bool
	// stopTimer cancels the pending timer; cancelRun cancels the run's
	// inner context.
	stopTimer, cancelRun workflow.CancelFunc
}

// start starts counting on top of elapsed (carried from earlier
// executions). A zero max counts but never fires.
func (c *clock) start(ctx workflow.Context, elapsed time.Duration) {
	c.elapsed = elapsed
	c.resume(ctx)
}

// resume counts from now on.
func (c *clock) resume(ctx workflow.Context) {
	if c.on || c.fired {
		return
	}
	c.since, c.on = workflow.Now(ctx), true
	if c.max <= 0 {
		return
	}
	left := c.max - c.elapsed
	if left <= 0 {
		c.fire()
		return
	}
	tctx, cancel := workflow.WithCancel(ctx)
	c.stopTimer = cancel
	timer := workflow.NewTimer(tctx, left)
	workflow.Go(ctx, func(gctx workflow.Context) {
		if timer.Get(gctx, nil) == nil && c.on {
			c.fire()
		}
	})
}

// pause stops counting, while the run waits for decisions only.
func (c *clock) pause(ctx workflow.Context) {
	if !c.on || c.fired {
		return
	}
	c.elapsed += workflow.Now(ctx).Sub(c.since)
	c.on = false
	if c.stopTimer != nil {
		c.stopTimer()
		c.stopTimer = nil
	}
}

func (c *clock) fire() {
	c.fired = true
	if c.cancelRun != nil {
		c.cancelRun()
	}
}

// total is the time counted so far.
func (c *clock) total(ctx workflow.Context) time.Duration {
	if !c.on {
		return c.elapsed
	}
	return c.elapsed + workflow.Now(ctx).Sub(c.since)
}

// expired returns the budget's error once the time has run out and
// cancelled the run's inner context, and nil before: the core's
// budgetCause.
func (rn *run) expired() error {
	if !rn.clock.fired || rn.outer.Err() != nil {
		return nil
	}
	d := rn.ag.Loop.Budget.MaxDuration.Seconds()
	return &toolloop.BudgetError{Limit: toolloop.LimitDuration, Used: d, Max: d}
}

// checkBudget returns the limit of the budget the run has reached, if
// any. StopWhen runs here, in workflow code: it must be deterministic (it
// sees only the RunStatus, which is).
func (rn *run) checkBudget() error {
	b := &rn.ag.Loop.Budget
	if b.MaxInputTokens <= 0 && b.MaxOutputTokens <= 0 && b.MaxTotalTokens <= 0 && b.MaxCost <= 0 &&
		b.MaxDuration <= 0 && b.MaxToolCalls <= 0 && b.StopWhen == nil {
		return nil
	}
	res := rn.res
	st := toolloop.RunStatus{
		RunID: res.RunID, Turns: rn.turn, Usage: res.Usage, Cost: res.Cost, ToolCalls: res.ToolCalls,
		ConsecutiveFailures: res.ConsecutiveFailures, Elapsed: rn.clock.total(rn.outer), Messages: res.Messages,
	}
	if b.StopWhen != nil {
		st.Tokens = rn.tokens.count(res.Messages)
	}
	if be := rn.callCheck(b, st); be != nil {
		return be
	}
	return nil
}

// callCheck runs the budget's check, turning a panicking StopWhen into a
// stop, as the core does.
func (rn *run) callCheck(b *toolloop.Budget, st toolloop.RunStatus) (be *toolloop.BudgetError) {
	defer func() {
		if p := recover(); p != nil {
			workflow.GetLogger(rn.outer).Error("toolloop: Budget.StopWhen panicked; stopping the run", "panic", fmt.Sprint(p))
			be = &toolloop.BudgetError{Limit: toolloop.LimitStopWhen}
		}
	}()
	return b.Check(st)
}

// overBudget answers the calls beyond Limits.MaxCallsPerTurn and
// Budget.MaxToolCalls as not run, and counts the others. done holds the
// answers by call position, or is nil.
func (rn *run) overBudget(calls []toolloop.ToolCall) (done []*toolloop.ToolResult) {
	res := rn.res
	allowed := len(calls)
	var why string
	if m := rn.ag.limits().MaxCallsPerTurn; rn.turnCap && m > 0 && allowed > m {
		allowed = m
		why = fmt.Sprintf("not run: the model asked for %d tool calls in one turn, and at most %d run per turn; ask again for the ones still needed", len(calls), m)
	}
	if m := rn.ag.Loop.Budget.MaxToolCalls; rn.longRun && m > 0 && m-res.ToolCalls < allowed {
		allowed = max(m-res.ToolCalls, 0)
		why = fmt.Sprintf("not run: the run's budget allows %d tool calls, and they are spent", m)
	}
	if rn.longRun {
		res.ToolCalls += allowed
	}
	if allowed == len(calls) {
		return nil
	}
	done = make([]*toolloop.ToolResult, len(calls))
	for i := allowed; i < len(calls); i++ {
		done[i] = errorResult(calls[i], toolloop.KindCanceled, why)
	}
	return done
}

// checkFailures applies the failure policy to the results of the calls
// that ran.
func (rn *run) checkFailures(results []*toolloop.ToolResult) *toolloop.BudgetError {
	n, fe := rn.ag.Loop.Budget.CheckFailures(rn.res.ConsecutiveFailures, results)
	rn.res.ConsecutiveFailures = n
	return fe
}

// limitReached ends a run that reached a limit (a *BudgetError), after the wrap-up turn if the budget asks for one.
// The wrap-up turn runs on the outer context: the budget's deadline does
// not stop it.
func (rn *run) limitReached(limit error) (*toolloop.RunResult, error) {
	ag, res := rn.ag, rn.res
	b := &ag.Loop.Budget
	if !b.WrapUp || rn.outer.Err() != nil {
		return rn.endLimit(limit, "", false)
	}
	if len(ag.Loop.ContextManagers) > 0 {
		if _, err := rn.manageContext(rn.outer, false, fmt.Sprintf("turn-%d/wrap-up-context", rn.turn+1)); err != nil {
			return rn.endLimit(limit, "", false)
		}
	}
	n := len(res.Messages)
	edit := &toolloop.TranscriptEdit{Strategy: "wrap_up",
		Splices: []toolloop.Splice{{Start: n, End: n, Messages: []toolloop.Message{b.WrapUpMessage(limit)}}}}
	next, err := edit.Apply(res.Messages)
	if err != nil {
		return rn.endLimit(limit, "", false)
	}
	rn.tokens.edited(res.Messages, edit, next)
	res.Messages = next
	rn.turn++
	res.Turns = rn.turn
	out, err := rn.wrapUpTurn()
	if err != nil {
		_, overflow := isContextLength(err)
		return rn.endLimit(limit, failureMessage(err), overflow)
	}
	msg := rn.accept(out)
	rn.notRun(msg.ToolCalls, "not run: the run reached its limit, and this was its last turn")
	return rn.endLimit(limit, "", false)
}

// wrapUpTurn takes the wrap-up turn, whose request is the transcript
// ending with the wrap-up message. A request too long for the model's
// context is shortened as AgentLoop.Run shortens it: the context
// managers free room, then toolloop.WrapUpTrim leaves out older turns
// until the request fits or nothing is left to leave out.
func (rn *run) wrapUpTurn() (*turnOutput, error) {
	none := toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}
	id := fmt.Sprintf("turn-%d", rn.turn)
	out, err := rn.generate(rn.outer, none, id)
	specs, overflow := isContextLength(err)
	if !overflow || rn.outer.Err() != nil {
		return out, err
	}
	res := rn.res
	rn.tokens.Specs = specs
	if len(rn.ag.Loop.ContextManagers) > 0 {
		changed, merr := rn.manageContext(rn.outer, true, id+"/overflow")
		if merr != nil {
			return nil, err
		}
		if changed {
			out, err = rn.generate(rn.outer, none, id+"/retry")
			if _, overflow = isContextLength(err); !overflow || rn.outer.Err() != nil {
				return out, err
			}
		}
	}
	for i := 1; ; i++ {
		edit := toolloop.WrapUpTrim(res.Messages)
		if edit == nil {
			return nil, err
		}
		next, aerr := edit.Apply(res.Messages)
		if aerr != nil {
			return nil, err
		}
		rn.tokens.edited(res.Messages, edit, next)
		res.Messages = next
		out, err = rn.generate(rn.outer, none, fmt.Sprintf("%s/trim-%d", id, i))
		if _, overflow = isContextLength(err); !overflow || rn.outer.Err() != nil {
			return out, err
		}
	}
}

// endLimit ends the run with the limit's error; wrapUp is the wrap-up
// turn's failure, if it failed, and overflow whether that failure was a
// request too long for the model's context.
func (rn *run) endLimit(limit error, wrapUp string, overflow bool) (*toolloop.RunResult, error) {
	f := &failure{WrapUp: wrapUp, WrapUpContextLength: overflow}
	if be, ok := errors.AsType[*toolloop.BudgetError](limit); ok {
		f.Budget = &toolloop.BudgetError{Limit: be.Limit, Used: be.Used, Max: be.Max}
		return rn.fail(errTypeBudget, be.Error(), f)
	}
	return rn.fail(errTypeModel, limit.Error(), f)
}

// failure is the second detail of the error a run ends with (the first
// is the RunResult so far): what Wait needs to give back the error
// AgentLoop.Run returns.
type failure struct {
	// Budget is the limit the run reached, without its cause (an error
	// does not round-trip through JSON); Failure is the cause of a
	// LimitFailures.
	Budget  *toolloop.BudgetError  `json:"budget,omitempty"`
	Failure *toolloop.FailureError `json:"failure,omitempty"`
	// ContextLength: the model refused the request as too long for its
	// context (providers.ErrContextLength).
	ContextLength bool `json:"context_length,omitempty"`
	// WrapUp is the message of the wrap-up turn's failure, and
	// WrapUpContextLength says it was a context-length error that leaving
	// out earlier turns could not cure.
	WrapUp              string `json:"wrap_up,omitempty"`
	WrapUpContextLength bool   `json:"wrap_up_context_length,omitempty"`
}

// err is the error Wait returns for a failure of type typ with message
// msg, or nil for a type it does not know.
func (f *failure) err(typ, msg string) error {
	var err error
	switch typ {
	case errTypeLength:
		err = toolloop.ErrLength
	case errTypeBudget:
		if f.Budget == nil {
			return nil
		}
		be := *f.Budget
		if f.Failure != nil {
			be.Err = f.Failure
		}
		err = &be
	case errTypeUnknownPrice:
		err = fmt.Errorf("%w: %s", toolloop.ErrUnknownPrice, msg)
	case errTypeRunInterrupted:
		err = toolloop.ErrInterrupted
	case errTypeModel:
		if f.ContextLength {
			err = fmt.Errorf("%w: %w: %s", ErrModel, providers.ErrContextLength, msg)
		} else {
			err = fmt.Errorf("%w: %s", ErrModel, msg)
		}
	default:
		return nil
	}
	if f.WrapUp != "" && f.WrapUpContextLength {
		err = errors.Join(err, fmt.Errorf("%w: %w: wrap-up turn: %s", ErrModel, providers.ErrContextLength, f.WrapUp))
	} else if f.WrapUp != "" {
		err = errors.Join(err, fmt.Errorf("%w: wrap-up turn: %s", ErrModel, f.WrapUp))
	}
	return err
}
