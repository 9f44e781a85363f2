package toolloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/toolloop/toolloop/providers"
)

// Run runs the loop on msgs until the model stops, a limit is reached or
// ctx is done. It never modifies msgs. A loop set up wrong fails at once,
// with no result: see [AgentLoop.Validate]. To read the run's events as
// they happen, use [AgentLoop.RunStream].
//
// A transcript that ends mid-turn (calls without results, after a crash) is
// repaired first: each such call gets a canceled result saying the run was
// interrupted, and is never run again.
//
// Run returns the result so far with every error: ErrLength, ErrPaused,
// a *BudgetError (ErrBudget) naming the limit of the Budget that ended
// the run (turns, tokens, cost, time, tool calls, output retries,
// send-backs, failures, StopWhen), a model error (wrapped, so errors.Is
// and errors.As reach the provider's error), or ctx's error after giving
// every pending call a canceled result.
func (l *AgentLoop) Run(ctx context.Context, msgs []Message) (*RunResult, error) {
	return l.run(ctx, msgs, nil)
}

// run is Run with an extra event sink for streaming.
func (l *AgentLoop) run(ctx context.Context, msgs []Message, stream func(Event)) (*RunResult, error) {
	return l.runWith(ctx, msgs, stream, nil)
}

// runWith is run with an output format that overrides the loop's.
func (l *AgentLoop) runWith(ctx context.Context, msgs []Message, stream func(Event), output *OutputFormat) (*RunResult, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	rn := l.newRun("", stream)
	if err := rn.setup(output); err != nil {
		return nil, err
	}
	inner, cancel := rn.budgetContext(ctx)
	defer cancel()
	rn.base, rn.jobBase = inner, LastJobNumber(msgs)
	inner, err := rn.steerSetup(inner, nil, nil)
	if err != nil {
		return nil, err
	}
	// Room for two turns of one call and the answer, so a short run does
	// not grow the transcript at every message.
	res := &RunResult{RunID: rn.id, Messages: append(make([]Message, 0, len(msgs)+5), msgs...)}
	if rn.observed {
		rn.emitMessages(EventRunStart, msgs, nil)
	}
	if fixed, synth, notes := repairTranscript(res.Messages); len(notes) > 0 {
		res.Messages = fixed
		if rn.observed {
			rn.emitMessages(EventTranscriptRepaired, synth, notes)
		}
	}
	return l.loop(ctx, inner, rn, res)
}

// budgetContext is ctx with Budget.MaxDuration as its deadline, whose
// cause is the *BudgetError.
func (rn *runState) budgetContext(ctx context.Context) (context.Context, context.CancelFunc) {
	b := &rn.l.Budget
	if b.MaxDuration <= 0 {
		return ctx, func() {}
	}
	return context.WithDeadlineCause(ctx, rn.started.Add(b.MaxDuration), b.durationError(b.MaxDuration))
}

// budgetCause returns the *BudgetError that ended ctx, if it was the
// budget's deadline and not the caller's cancellation.
func budgetCause(outer, ctx context.Context) error {
	if ctx.Err() == nil || outer.Err() != nil {
		return nil
	}
	var be *BudgetError
	if errors.As(context.Cause(ctx), &be) {
		return be
	}
	return nil
}

// loop takes model turns until the run ends. ctx is outer with the
// budget's deadline (and, for a run with an inbox, the context an
// interrupt cancels); the wrap-up turn runs on outer.
func (l *AgentLoop) loop(outer, ctx context.Context, rn *runState, res *RunResult) (*RunResult, error) {
	defer func() {
		if rn.steer != nil {
			rn.steer.detach()
		}
	}()
	for {
		if rn.steer == nil && rn.base != nil {
			// The run started a job and had no inbox: it takes the one
			// the job's end is queued in, to deliver it at safe points.
			if js := rn.jobsNow(); js != nil {
				ctx, _ = rn.attach(ctx, js.inbox, nil, nil)
			}
		}
		if err := budgetCause(outer, ctx); err != nil {
			return rn.limitReached(outer, res, err)
		}
		if err := rn.checkBudget(ctx, res); err != nil {
			return rn.limitReached(outer, res, err)
		}
		if most := l.Budget.maxTurns(); rn.turn >= most {
			res.StopReason = StopToolUse
			return rn.limitReached(outer, res, &BudgetError{Limit: LimitTurns, Used: float64(rn.turn), Max: float64(most)})
		}
		if rn.steer != nil { // the safe point: interrupts, then messages
			var stop bool
			if ctx, stop, _ = rn.safePoint(ctx, res, false); stop {
				return rn.end(res, ErrInterrupted)
			}
		}
		if err := ctx.Err(); err != nil {
			if rn.steer != nil && rn.steer.cut(ctx) {
				continue // an interrupt came: act on it
			}
			res.StopReason = StopAborted
			return rn.end(res, err)
		}
		if len(l.ContextManagers) > 0 {
			if _, err := rn.manageContext(ctx, res, false); err != nil {
				if rn.steer != nil && rn.steer.cut(ctx) {
					continue
				}
				return rn.aborted(outer, ctx, res, err)
			}
		}
		rn.turn++
		res.Turns = rn.turn
		resp, err := l.generate(ctx, rn, res.Messages, ToolChoice{})
		if err != nil && len(l.ContextManagers) > 0 && errors.Is(err, providers.ErrContextLength) {
			// Free room once, then try the turn again.
			if changed, merr := rn.manageContext(ctx, res, true); changed && merr == nil {
				resp, err = l.generate(ctx, rn, res.Messages, ToolChoice{})
			}
		}
		if err != nil {
			if rn.steer != nil && rn.steer.cut(ctx) {
				rn.keepPartial(res)
				continue
			}
			if be := budgetCause(outer, ctx); be != nil {
				res.StopReason = StopAborted
				return rn.limitReached(outer, res, be)
			}
			res.StopReason = StopError
			if ctx.Err() != nil {
				res.StopReason = StopAborted
			}
			return rn.end(res, fmt.Errorf("toolloop: model: %w", err))
		}
		msg := rn.accept(res, resp)
		if err := rn.checkPriced(resp); err != nil {
			rn.notRun(res, msg.ToolCalls, "not run: the run stopped because the cost of this turn cannot be counted")
			return rn.end(res, err)
		}
		if len(msg.ToolCalls) == 0 {
			if msg.StopReason == StopLength {
				return rn.end(res, ErrLength)
			}
			if rn.ctl != nil && rn.ctl.out != nil && msg.StopReason != StopRefusal {
				if end, err := rn.checkAnswer(res, &msg, nil); !end {
					continue
				} else if err != nil {
					res.StopReason = StopError
					return rn.end(res, err)
				}
			}
			if rn.steer != nil {
				var more bool
				if ctx, _, more = rn.safePoint(ctx, res, true); more {
					continue // follow-ups: the run goes on
				}
				if rn.awaitJobs(ctx) {
					continue // a job ended, or a message came: deliver it
				}
			}
			return rn.end(res, nil)
		}
		switch msg.StopReason {
		case StopLength:
			// The last call's arguments may be cut off: run none of them.
			rn.notRun(res, msg.ToolCalls, "not run: the model's output hit its token limit, so this call may be incomplete")
			return rn.end(res, ErrLength)
		case StopRefusal:
			rn.notRun(res, msg.ToolCalls, "not run: the provider refused or filtered this turn")
			return rn.end(res, nil)
		}
		if rn.steer != nil && rn.steer.holding() {
			rn.notRun(res, msg.ToolCalls, notRunInterrupted)
			continue
		}
		done := rn.overBudget(res, msg.ToolCalls)
		if len(l.TurnProcessors) > 0 {
			var back string
			if done, back = rn.processTurn(ctx, res, msg.ToolCalls, done); back != "" {
				if err := rn.sendBack(res, msg.ToolCalls, done, back); err != nil {
					res.StopReason = StopError
					return rn.end(res, err)
				}
				continue
			}
			rn.ctl.sendBacks = 0
		}
		results, pending := rn.runTurn(ctx, msg.ToolCalls, done, nil)
		if len(pending) > 0 && (rn.steer == nil || !rn.stopHeld(results, pending, msg.ToolCalls)) {
			return rn.pause(res, results, pending)
		}
		rn.appendResults(res, results)
		if err := ctx.Err(); err != nil {
			if rn.steer != nil && rn.steer.cut(ctx) {
				continue
			}
			return rn.aborted(outer, ctx, res, err)
		}
		ran := results
		if done != nil { // leave out the calls the budget did not run
			ran = make([]*ToolResult, 0, len(results))
			for i, r := range results {
				if done[i] == nil {
					ran = append(ran, r)
				}
			}
		}
		if err := rn.checkFailures(res, ran); err != nil {
			return rn.end(res, err)
		}
		if rn.ctl != nil && rn.ctl.out != nil {
			if end, err := rn.checkAnswer(res, &msg, results); end {
				if err != nil {
					res.StopReason = StopError
				} else if rn.steer != nil {
					var more bool
					if ctx, _, more = rn.safePoint(ctx, res, true); more {
						continue
					}
				}
				return rn.end(res, err)
			}
		}
	}
}

// notRunInterrupted answers the calls an interrupt kept from starting.
const notRunInterrupted = "not run: the run was interrupted before this call started"

// aborted ends a run whose context is done: at the budget's deadline, as
// a limit; otherwise as cancelled.
func (rn *runState) aborted(outer, ctx context.Context, res *RunResult, err error) (*RunResult, error) {
	res.StopReason = StopAborted
	if be := budgetCause(outer, ctx); be != nil {
		return rn.limitReached(outer, res, be)
	}
	return rn.end(res, err)
}

// accept appends the model's response to the transcript and counts what
// it cost.
func (rn *runState) accept(res *RunResult, resp *Response) Message {
	msg := AssistantMessage(rn.turn, resp)
	if rn.observed {
		rn.emitResponse(&msg, resp)
	}
	res.Usage.Add(resp.Usage)
	rn.price(res, resp.Model, resp.Usage)
	res.Messages = append(res.Messages, msg)
	res.FinalText = msg.Text()
	res.StopReason = msg.StopReason
	if resp.Model != "" {
		rn.lastModel = resp.Model
	}
	if len(rn.l.ContextManagers) > 0 || rn.observed {
		rn.tokens.reported(res.Messages, resp.Usage)
	}
	return msg
}

// checkPriced fails a run with a cost limit whose model has no price.
func (rn *runState) checkPriced(resp *Response) error {
	if rn.l.Budget.MaxCost <= 0 || resp.Usage == (Usage{}) {
		return nil
	}
	if info, ok := rn.l.lookupModel(resp.Model); ok && info.Price != nil {
		return nil
	}
	return fmt.Errorf("%w: Budget.MaxCost is set, but model %q has no price: add it to AgentLoop.ModelTable", ErrUnknownPrice, resp.Model)
}

// ErrUnknownPrice: Budget.MaxCost is set and a model that answered has no
// price in AgentLoop.ModelTable or the built-in table, so the run's cost
// cannot be counted.
var ErrUnknownPrice = errors.New("toolloop: no price for the model")

// status is what StopWhen sees.
func (rn *runState) status(res *RunResult) RunStatus {
	st := RunStatus{
		RunID: rn.id, Turns: rn.turn, Usage: res.Usage, Cost: res.Cost, ToolCalls: res.ToolCalls,
		ConsecutiveFailures: res.ConsecutiveFailures, Elapsed: time.Since(rn.started), Messages: res.Messages,
	}
	if rn.l.Budget.StopWhen != nil {
		st.Tokens = rn.tokens.count(res.Messages)
	}
	return st
}

// checkBudget returns the limit the run has reached, if any.
func (rn *runState) checkBudget(ctx context.Context, res *RunResult) error {
	b := &rn.l.Budget
	if b.MaxInputTokens <= 0 && b.MaxOutputTokens <= 0 && b.MaxTotalTokens <= 0 && b.MaxCost <= 0 &&
		b.MaxDuration <= 0 && b.MaxToolCalls <= 0 && b.StopWhen == nil && b.Shared == nil {
		return nil
	}
	st := rn.status(res)
	if be := rn.callStopWhen(b, st); be != nil {
		return be
	}
	if be := rn.callShared(ctx, b, st); be != nil {
		return be
	}
	return nil
}

// callShared asks the budget's Shared, turning a panic into a stop.
func (rn *runState) callShared(ctx context.Context, b *Budget, st RunStatus) (be *BudgetError) {
	if b.Shared == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			rn.logger().Error("toolloop: Budget.Shared panicked; stopping the run", "panic", p)
			be = &BudgetError{Limit: LimitShared, Err: fmt.Errorf("toolloop: Budget.Shared panicked: %v", p)}
		}
	}()
	return b.CheckShared(ctx, st)
}

// callStopWhen runs the budget's check, turning a panicking StopWhen into
// a stop.
func (rn *runState) callStopWhen(b *Budget, st RunStatus) (be *BudgetError) {
	defer func() {
		if p := recover(); p != nil {
			rn.logger().Error("toolloop: Budget.StopWhen panicked; stopping the run", "panic", p)
			be = &BudgetError{Limit: LimitStopWhen}
		}
	}()
	return b.Check(st)
}

// overBudget answers the calls beyond MaxCallsPerTurn and
// Budget.MaxToolCalls as not run, and counts the others. Calls of the
// output tool are counted apart, and never held back: the final answer
// is not a tool call the budget pays for.
func (rn *runState) overBudget(res *RunResult, calls []ToolCall) []*ToolResult {
	name, answers := rn.outState().answerName(), 0
	if name != "" {
		for _, tc := range calls {
			if tc.Name == name {
				answers++
			}
		}
	}
	n := len(calls) - answers
	allowed := n
	var why string
	if m := rn.lim.MaxCallsPerTurn; m > 0 && allowed > m {
		allowed = m
		why = fmt.Sprintf("not run: the model asked for %d tool calls in one turn, and at most %d run per turn; ask again for the ones still needed", n, m)
	}
	if m := rn.l.Budget.MaxToolCalls; m > 0 && m-res.ToolCalls < allowed {
		allowed = max(m-res.ToolCalls, 0)
		why = fmt.Sprintf("not run: the run's budget allows %d tool calls, and they are spent", m)
	}
	res.ToolCalls += allowed
	res.OutputCalls += answers
	rn.callsAt = res.ToolCalls
	rn.innerCalls.Store(0)
	if allowed == n {
		return nil
	}
	done := make([]*ToolResult, len(calls))
	for i, k := 0, 0; i < len(calls); i++ {
		if name != "" && calls[i].Name == name {
			continue
		}
		if k++; k <= allowed {
			continue
		}
		done[i] = rn.answerNotRun(calls[i], why)
	}
	return done
}

// checkFailures applies the failure policy to a turn's results.
func (rn *runState) checkFailures(res *RunResult, results []*ToolResult) error {
	n, fe := rn.l.Budget.CheckFailures(res.ConsecutiveFailures, results)
	res.ConsecutiveFailures = n
	if fe == nil {
		return nil
	}
	if rn.observed {
		acc := res.Accounting
		rn.emit(&Event{Type: EventLimit, Error: fe.Error(), Accounting: &acc})
	}
	return fe
}

// AssistantMessage turns a model's response for the given turn (counting
// from 1) into the assistant message the loop appends to the transcript:
// role, stop reason (inferred if the model gave none), usage and model set,
// and tool call IDs made usable: a missing ID gets one, a repeated ID gets
// a suffix, so that every call can be answered exactly once. Run does this
// itself; drivers that schedule turns themselves call it to get the same
// transcript.
func AssistantMessage(turn int, resp *Response) Message {
	msg := resp.Message
	msg.Role = RoleAssistant
	msg.StopReason = resp.StopReason
	if msg.StopReason == "" {
		msg.StopReason = StopEnd
		if len(msg.ToolCalls) > 0 {
			msg.StopReason = StopToolUse
		}
	}
	u := resp.Usage
	msg.Usage = &u
	msg.Model = resp.Model
	if len(msg.ToolCalls) > 0 {
		msg.ToolCalls = slices.Clone(msg.ToolCalls)
		seen := make(map[string]bool, len(msg.ToolCalls))
		for i := range msg.ToolCalls {
			tc := &msg.ToolCalls[i]
			if tc.ID == "" {
				tc.ID = "call_" + strconv.Itoa(turn) + "_" + strconv.Itoa(i)
			}
			for n := 2; seen[tc.ID]; n++ {
				tc.ID = tc.ID + "_" + strconv.Itoa(n)
			}
			seen[tc.ID] = true
		}
	}
	return msg
}

// generate asks the model for one turn, streaming if it can.
func (l *AgentLoop) generate(ctx context.Context, rn *runState, msgs []Message, choice ToolChoice) (*Response, error) {
	turn, err := rn.request(ctx, msgs, choice)
	if err != nil {
		return nil, err
	}
	req := turn.Request
	if len(l.ContextManagers) > 0 || rn.observed {
		rn.tokens.specs = estimateSpecs(req.Tools)
	}
	if rn.observed {
		rn.emitRequest(req, msgs)
	}
	if rn.steer != nil {
		rn.steer.partial = rn.steer.partial[:0]
	}
	resp, err := l.callModel(ctx, rn, req)
	if err == nil && resp == nil {
		err = errors.New("model returned no response")
	}
	if err == nil && len(l.Hooks.AfterModel) > 0 {
		resp, err = rn.afterModel(ctx, turn, resp)
	}
	return resp, err
}

// callModel calls the model, streaming if it can, and turns a panic into
// an error.
func (l *AgentLoop) callModel(ctx context.Context, rn *runState, req *Request) (resp *Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("model panicked: %v", p)
		}
	}()
	if rn.observed {
		ctx = WithEventSink(ctx, func(e Event) { rn.emit(&e) })
	}
	if s, ok := l.Model.(Streamer); ok {
		return rn.streamTurn(ctx, s, req)
	}
	return l.Model.Generate(ctx, req)
}

// streamTurn takes a streamed turn, passing its deltas on as events. It is
// apart from callModel because the loop body's closure makes what it
// captures escape, which a model that does not stream should not pay for.
func (rn *runState) streamTurn(ctx context.Context, s Streamer, req *Request) (*Response, error) {
	var resp *Response
	for ch, err := range s.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ch.Reasoning != "" {
			rn.emit(&Event{Type: EventModelReasoningDelta, Text: ch.Reasoning})
		}
		if ch.Text != "" {
			if rn.steer != nil {
				rn.steer.partial = append(rn.steer.partial, ch.Text...)
			}
			rn.emit(&Event{Type: EventModelDelta, Text: ch.Text})
		}
		if ch.Response != nil {
			resp = ch.Response
		}
	}
	if resp == nil {
		return nil, errors.New("model stream ended without a response")
	}
	return resp, nil
}
