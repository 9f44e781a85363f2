package toolloop

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolloop/toolloop/providers"
)

// isLimit reports whether err is a *BudgetError of limit lim.
func isLimit(err error, lim Limit) bool {
	be, ok := errors.AsType[*BudgetError](err)
	return ok && be.Limit == lim
}

// limitReached ends a run that reached a limit, after the wrap-up turn
// if the budget asks for one.
func (rn *runState) limitReached(outer context.Context, res *RunResult, limit error) (*RunResult, error) {
	l := rn.l
	if rn.observed && (l.Budget.WrapUp || !isLimit(limit, LimitTurns)) {
		acc := res.Accounting
		rn.emit(&Event{Type: EventLimit, Error: limit.Error(), Accounting: &acc})
	}
	if rn.steer != nil && l.Budget.WrapUp {
		// An interrupt now stops the wrap-up turn too; one already sent
		// skips it.
		outer = rn.steer.rebase(outer)
	}
	if !l.Budget.WrapUp || outer.Err() != nil {
		return rn.end(res, limit)
	}
	why := limitReason(limit)
	if len(l.ContextManagers) > 0 {
		if _, err := rn.manageContext(outer, res, false); err != nil {
			return rn.end(res, limit)
		}
	}
	msg := l.Budget.wrapUpMessage(why)
	if o := rn.outState(); o != nil {
		msg = UserMessage(msg.Text() + "\n\n" + o.wrapUpHint())
	}
	n := len(res.Messages)
	edit := &TranscriptEdit{Strategy: "wrap_up", Reason: why,
		Splices: []Splice{{Start: n, End: n, Messages: []Message{msg}}}}
	if err := rn.applyEdit(res, edit); err != nil {
		return rn.end(res, limit)
	}
	rn.turn++
	res.Turns = rn.turn
	resp, err := rn.wrapUpTurn(outer, res)
	if err != nil && rn.steer != nil && rn.steer.cut(outer) {
		rn.keepPartial(res)
		res.StopReason = StopInterrupted
		i := rn.steer.takeInterrupt()
		if i == nil {
			i = &Interrupt{Mode: InterruptNow}
		}
		rn.emit(&Event{Type: EventRunInterrupted, Interrupt: i})
		return rn.end(res, errors.Join(limit, ErrInterrupted))
	}
	if err != nil {
		return rn.end(res, errors.Join(limit, fmt.Errorf("toolloop: wrap-up turn: %w", err)))
	}
	last := rn.accept(res, resp)
	if o := rn.outState(); o != nil {
		if err := rn.wrapUpAnswer(outer, res, o, &last); err != nil {
			return rn.end(res, errors.Join(limit, err))
		}
		return rn.end(res, limit)
	}
	rn.notRun(res, last.ToolCalls, wrapUpNotRun)
	return rn.end(res, limit)
}

const wrapUpNotRun = "not run: the run reached its limit, and this was its last turn"

// wrapUpTurn asks the model for the wrap-up turn, whose request is the
// transcript ending with the wrap-up message. When the model answers that
// the request is too long, the context managers are asked to free room,
// as on any turn; if the request still does not fit, the oldest turns are
// left out (see fitWrapUp) until it does.
func (rn *runState) wrapUpTurn(ctx context.Context, res *RunResult) (*Response, error) {
	l := rn.l
	none := ToolChoice{Mode: ToolChoiceNone}
	resp, err := l.generate(ctx, rn, res.Messages, none)
	if !overflowed(ctx, err) {
		return resp, err
	}
	if len(l.ContextManagers) > 0 {
		changed, merr := rn.manageContext(ctx, res, true)
		if merr != nil {
			return nil, err
		}
		if changed {
			if resp, err = l.generate(ctx, rn, res.Messages, none); !overflowed(ctx, err) {
				return resp, err
			}
		}
	}
	for {
		if !rn.fitWrapUp(res) {
			return nil, fmt.Errorf("the request does not fit the model's context even with every earlier turn left out: %w", err)
		}
		if resp, err = l.generate(ctx, rn, res.Messages, none); !overflowed(ctx, err) {
			return resp, err
		}
	}
}

// overflowed reports whether err says the request was too long for the
// model's context, and there is still time to try a shorter one.
func overflowed(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && errors.Is(err, providers.ErrContextLength)
}

// WrapUpOmitted starts the text of the message that stands in for the
// turns a wrap-up turn left out because its request did not fit the
// model's context.
const WrapUpOmitted = "[Earlier turns of this conversation were left out so that this last request fits the model's context window.]"

// WrapUpTrim returns the edit that shortens the transcript of a wrap-up
// turn, msgs (ending with the wrap-up message), whose request was too
// long for the model's context: it leaves out the older half of the
// turns between the task (the leading system messages and the first user
// message) and the wrap-up message, or all of them when one is left,
// putting in their place one user message, [WrapUpOmitted]. A cut falls
// only where a model turn starts, so no call is parted from its result.
// It returns nil when nothing is left to leave out.
//
// AgentLoop.Run applies it until the request fits, after the context
// managers; drivers that take turns themselves (the temporal package)
// call it to do the same.
func WrapUpTrim(msgs []Message) *TranscriptEdit {
	if len(msgs) == 0 {
		return nil
	}
	last := len(msgs) - 1 // the wrap-up message
	head := leadingMessages(msgs[:last])
	omitted := head < last && msgs[head].Role == RoleUser && msgs[head].Text() == WrapUpOmitted
	turns := 0
	for _, m := range msgs[head:last] {
		if m.Role == RoleAssistant {
			turns++
		}
	}
	cut := last
	if keep := turns / 2; keep > 0 {
		cut, _ = turnStart(msgs[:last], keep)
	}
	if cut <= head || omitted && cut == head+1 {
		return nil
	}
	var callIDs []string
	for _, m := range msgs[head:cut] {
		for _, tc := range m.ToolCalls {
			callIDs = append(callIDs, tc.ID)
		}
	}
	return &TranscriptEdit{Strategy: "wrap_up_trim", Reason: "overflow", CallIDs: callIDs,
		Splices: []Splice{{Start: head, End: cut, Messages: []Message{UserMessage(WrapUpOmitted)}}}}
}

// fitWrapUp makes the WrapUpTrim edit on the run's transcript, reported
// like a context manager's so a log replays to the transcript the model
// saw. It reports false when there was nothing left to leave out.
func (rn *runState) fitWrapUp(res *RunResult) bool {
	edit := WrapUpTrim(res.Messages)
	return edit != nil && rn.applyEdit(res, edit) == nil
}

// wrapUpHint is what the wrap-up message adds when the run has an output
// format: how to give the typed answer in a turn without other tools.
func (o *outputState) wrapUpHint() string {
	if o.tool != nil {
		return fmt.Sprintf("Give your final answer by calling the %s tool, the only tool you can call now.", o.format.Name)
	}
	return "Give your final answer as JSON that matches the required schema."
}

// wrapUpAnswer reads the typed answer of a run with an output format
// from its wrap-up turn, whose message is msg: a call of the output tool
// (run through the pipeline like any call) or a text answer valid for
// the schema. Other calls are answered as not run. It returns an
// *OutputError when the turn holds no valid answer; there is no turn
// left to ask again.
func (rn *runState) wrapUpAnswer(ctx context.Context, res *RunResult, o *outputState, msg *Message) error {
	var why, given string
	if len(msg.ToolCalls) == 0 {
		raw := []byte(unfence(msg.Text()))
		te := o.check.validate(raw)
		if te == nil {
			res.Output = raw
			return nil
		}
		why, given = te.Message, msg.Text()
	} else {
		done := make([]*ToolResult, len(msg.ToolCalls))
		answer := false
		for i, tc := range msg.ToolCalls {
			if o.tool != nil && tc.Name == o.format.Name && !answer {
				answer = true
				continue
			}
			done[i] = rn.answerNotRun(tc, wrapUpNotRun)
		}
		if answer {
			res.OutputCalls++
		}
		results, pending := rn.runTurn(ctx, msg.ToolCalls, done, nil)
		for _, p := range pending {
			results[p.Index] = rn.answerNotRun(msg.ToolCalls[p.Index], wrapUpNotRun)
		}
		rn.appendResults(res, results)
		a, bad := o.toolAnswer(msg.ToolCalls, results)
		if a != nil {
			res.Output, res.FinalText, res.StopReason = a, string(a), StopEnd
			return nil
		}
		why = "the wrap-up turn gave no answer"
		if bad != nil && bad.Error != nil {
			why = bad.Error.Message
		}
		given = o.given(msg.ToolCalls)
	}
	o.invalided(rn, why)
	return &OutputError{Attempts: o.invalid, Answer: given, Reason: why}
}
