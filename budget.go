package toolloop

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// ErrBudget is matched by every *[BudgetError]: the run reached a limit of
// its [Budget] or its StopWhen said stop.
var ErrBudget = errors.New("toolloop: the run reached a limit of its budget")

// ErrToolFailures is matched by every *[FailureError]: the run stopped on
// failed tool calls, as its [FailurePolicy] says.
var ErrToolFailures = errors.New("toolloop: the run stopped on failed tool calls")

// Limit names a limit of a [Budget].
type Limit string

// The limits a run can reach.
const (
	LimitInputTokens  Limit = "input_tokens"
	LimitOutputTokens Limit = "output_tokens"
	LimitTotalTokens  Limit = "total_tokens"
	LimitCost         Limit = "cost"
	LimitDuration     Limit = "duration"
	LimitToolCalls    Limit = "tool_calls"
	// LimitStopWhen: the budget's StopWhen returned true.
	LimitStopWhen Limit = "stop_when"
)

// Budget limits what a run may spend. The zero value limits nothing.
//
// The loop checks the limits before every model turn, so a run stops
// between turns: the turn that crosses a token or cost limit finishes
// (its calls run, so the transcript stays whole), and the next one is not
// taken. MaxToolCalls is exact: the calls of a turn beyond it are answered
// as not run. MaxDuration cancels the model turn or the calls in progress
// when it passes, as a context deadline would.
//
// When a limit is reached the run ends with a *[BudgetError] naming it,
// and the transcript so far; with WrapUp, the model is first asked for a
// final answer, with tools disabled. Calls of the output tool (see
// [AgentLoop.Output]) are not tool calls: MaxToolCalls neither counts nor
// holds them back.
type Budget struct {
	// MaxInputTokens, MaxOutputTokens and MaxTotalTokens bound the tokens
	// the run's model turns report (Usage); 0 means no limit.
	MaxInputTokens  int64
	MaxOutputTokens int64
	MaxTotalTokens  int64
	// MaxCost bounds the run's cost in US dollars (see [Price]); 0 means
	// no limit. Each turn is priced by the model its response names, from
	// AgentLoop.Models and then [LookupModel]; a run with MaxCost ends
	// with an error at the first turn whose model has no price, rather
	// than spend without counting.
	MaxCost float64
	// MaxDuration bounds the wall-clock time of each Run or Resume call;
	// 0 means no limit. Time spent paused for approval, between Run and
	// Resume, does not count.
	MaxDuration time.Duration
	// MaxToolCalls bounds the number of tool calls the run makes; 0 means
	// no limit.
	MaxToolCalls int
	// StopWhen, if set, is asked before every model turn after the first;
	// returning true ends the run as a limit does, with [LimitStopWhen].
	StopWhen func(RunStatus) bool

	// WrapUp asks the model for a final answer when a limit is reached
	// (MaxIterations and StopWhen included): the loop appends a user
	// message saying which limit was reached and takes one more turn with
	// tool choice none. Calls the model makes anyway are answered as not
	// run. The run still ends with the limit's error; RunResult.FinalText
	// holds the answer.
	//
	// A wrap-up request too long for the model's context is shortened
	// like any other: the context managers are asked to free room, and if
	// the request still does not fit, the oldest turns are left out (see
	// [WrapUpTrim]) until it does. If even the task alone does not fit,
	// the run ends with the limit's error joined to the model's, which
	// matches providers.ErrContextLength.
	//
	// In a run with an output format ([AgentLoop.Output], [RunTyped]),
	// the wrap-up turn asks for the typed answer: natively where the
	// model takes the format, otherwise with the output tool as the only
	// tool offered (tool choice auto); a text answer valid for the schema
	// is accepted too. A valid answer is RunResult.Output (RunTyped
	// returns it decoded, with the limit's error); an invalid one adds an
	// *OutputError to the limit's error, since no turn is left to ask
	// again.
	WrapUp bool
	// WrapUpPrompt is the message of the wrap-up turn; empty means
	// DefaultWrapUpPrompt. A %s in it is replaced by the limit's
	// description.
	WrapUpPrompt string
}

// DefaultWrapUpPrompt is the message of a wrap-up turn when
// Budget.WrapUpPrompt is empty.
const DefaultWrapUpPrompt = "The run has reached its limit (%s), so you cannot call any more tools. " +
	"Give your final answer now: what you did, what you found, and what is left to do."

// RunStatus is what a run has done so far, as StopWhen sees it.
type RunStatus struct {
	RunID string
	// Turns counts the model turns taken.
	Turns int
	Usage Usage
	// Cost is the run's cost so far in US dollars, counting the turns
	// whose model has a known price.
	Cost float64
	// ToolCalls counts the calls the run has made.
	ToolCalls int
	// ConsecutiveFailures counts the failed calls since the last call
	// that succeeded.
	ConsecutiveFailures int
	// Elapsed is the time since Run (or Resume) was called.
	Elapsed time.Duration
	// Tokens estimates the transcript's size in the model's context (see
	// [EstimateTokens]), corrected by the usage the provider reported.
	Tokens int
	// Messages is the transcript so far. It must not be modified.
	Messages []Message
}

// BudgetError is the error a run ends with when it reaches a limit of its
// [Budget]. It matches [ErrBudget].
type BudgetError struct {
	Limit Limit
	// Used and Max are the amount spent and the limit, in the limit's
	// unit: tokens, US dollars, seconds or calls. Both are 0 for
	// LimitStopWhen.
	Used, Max float64
}

// Error implements the error interface.
func (e *BudgetError) Error() string { return "toolloop: the run reached its " + e.describe() }

// Is reports whether target is ErrBudget.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// describe names the limit and its amounts, for people and for the
// wrap-up message.
func (e *BudgetError) describe() string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch e.Limit {
	case LimitStopWhen:
		return "stop condition"
	case LimitCost:
		return fmt.Sprintf("cost limit: $%.4f spent of $%s", e.Used, num(e.Max))
	case LimitDuration:
		return fmt.Sprintf("time limit: %s of %s", time.Duration(e.Used*float64(time.Second)).Round(time.Millisecond),
			time.Duration(e.Max*float64(time.Second)))
	case LimitToolCalls:
		return fmt.Sprintf("tool-call limit: %s calls of %s", num(e.Used), num(e.Max))
	}
	return fmt.Sprintf("%s limit: %s of %s", limitWords[e.Limit], num(e.Used), num(e.Max))
}

var limitWords = map[Limit]string{
	LimitInputTokens:  "input-token",
	LimitOutputTokens: "output-token",
	LimitTotalTokens:  "total-token",
}

// Check returns the first limit st has reached, or nil. Drivers that
// schedule turns themselves (the temporal package) call it before each
// turn; AgentLoop.Run does.
func (b *Budget) Check(st RunStatus) *BudgetError {
	u := st.Usage
	switch {
	case b.MaxInputTokens > 0 && u.InputTokens >= b.MaxInputTokens:
		return &BudgetError{Limit: LimitInputTokens, Used: float64(u.InputTokens), Max: float64(b.MaxInputTokens)}
	case b.MaxOutputTokens > 0 && u.OutputTokens >= b.MaxOutputTokens:
		return &BudgetError{Limit: LimitOutputTokens, Used: float64(u.OutputTokens), Max: float64(b.MaxOutputTokens)}
	case b.MaxTotalTokens > 0 && u.InputTokens+u.OutputTokens >= b.MaxTotalTokens:
		return &BudgetError{Limit: LimitTotalTokens, Used: float64(u.InputTokens + u.OutputTokens), Max: float64(b.MaxTotalTokens)}
	case b.MaxCost > 0 && st.Cost >= b.MaxCost:
		return &BudgetError{Limit: LimitCost, Used: st.Cost, Max: b.MaxCost}
	case b.MaxDuration > 0 && st.Elapsed >= b.MaxDuration:
		return b.durationError(st.Elapsed)
	case b.MaxToolCalls > 0 && st.ToolCalls >= b.MaxToolCalls:
		return &BudgetError{Limit: LimitToolCalls, Used: float64(st.ToolCalls), Max: float64(b.MaxToolCalls)}
	case b.StopWhen != nil && st.Turns > 0 && b.StopWhen(st):
		return &BudgetError{Limit: LimitStopWhen}
	}
	return nil
}

func (b *Budget) durationError(elapsed time.Duration) *BudgetError {
	return &BudgetError{Limit: LimitDuration, Used: elapsed.Seconds(), Max: b.MaxDuration.Seconds()}
}

// WrapUpMessage returns the user message of the wrap-up turn after the
// run reached limit: a *BudgetError, ErrMaxIterations, or another error,
// described by its message. Drivers that schedule turns themselves (the
// temporal package) call it; AgentLoop.Run does.
func (b *Budget) WrapUpMessage(limit error) Message {
	return b.wrapUpMessage(limitReason(limit))
}

// limitReason describes a limit for the wrap-up message and the
// transcript edit that adds it.
func limitReason(limit error) string {
	var be *BudgetError
	switch {
	case errors.As(limit, &be):
		return be.describe()
	case errors.Is(limit, ErrMaxIterations):
		return "the maximum number of model turns"
	}
	return limit.Error()
}

func (b *Budget) wrapUpMessage(why string) Message {
	p := b.WrapUpPrompt
	if p == "" {
		p = DefaultWrapUpPrompt
	}
	if n := countVerb(p); n == 1 {
		p = fmt.Sprintf(p, why)
	}
	return UserMessage(p)
}

// countVerb counts the %s verbs of a prompt, so that a prompt holding a
// literal % is used as written.
func countVerb(p string) int {
	n := 0
	for i := 0; i+1 < len(p); i++ {
		if p[i] != '%' {
			continue
		}
		if p[i+1] != 's' {
			return -1
		}
		n++
		i++
	}
	return n
}

// FailurePolicy says when failed tool calls end a run. The zero value
// never does: the model sees each failure and carries on, which is right
// for most agents. A result counts as failed when its status is error,
// whatever its kind.
type FailurePolicy struct {
	// MaxConsecutive ends the run after this many failed calls in a row,
	// in call order across turns; 0 means no limit.
	MaxConsecutive int
	// StopOn ends the run at the first failure of one of these kinds.
	StopOn []ErrorKind
}

// FailureError is the error a run ends with when its [FailurePolicy]
// stops it. It matches [ErrToolFailures]. The transcript holds every
// result of the turn, the failed ones included.
type FailureError struct {
	// CallID, Tool and Kind describe the failure that stopped the run.
	CallID string
	Tool   string
	Kind   ErrorKind
	// Consecutive counts the failed calls in a row, that one included.
	Consecutive int
	// StopOn reports that the kind is one of FailurePolicy.StopOn, rather
	// than MaxConsecutive being reached.
	StopOn bool
}

// Error implements the error interface.
func (e *FailureError) Error() string {
	if e.StopOn {
		return fmt.Sprintf("toolloop: the run stopped: call %s of %s failed with %s", e.CallID, e.Tool, e.Kind)
	}
	return fmt.Sprintf("toolloop: the run stopped after %d failed tool calls in a row (the last: %s of %s, %s)",
		e.Consecutive, e.CallID, e.Tool, e.Kind)
}

// Is reports whether target is ErrToolFailures.
func (e *FailureError) Is(target error) bool { return target == ErrToolFailures }

// Check counts results, in call order, onto consecutive (the failures in a
// row so far), and returns the new count and the failure that stops the
// run, if any. Drivers that schedule calls themselves call it after each
// turn; AgentLoop.Run does.
func (p *FailurePolicy) Check(consecutive int, results []*ToolResult) (int, *FailureError) {
	var stop *FailureError
	for _, r := range results {
		if r == nil {
			continue
		}
		if r.Status != StatusError {
			consecutive = 0
			continue
		}
		consecutive++
		if stop != nil {
			continue
		}
		kind := ErrorKind("")
		if r.Error != nil {
			kind = r.Error.Kind
		}
		if slices.Contains(p.StopOn, kind) {
			stop = &FailureError{CallID: r.CallID, Tool: r.Name, Kind: kind, Consecutive: consecutive, StopOn: true}
		} else if p.MaxConsecutive > 0 && consecutive >= p.MaxConsecutive {
			stop = &FailureError{CallID: r.CallID, Tool: r.Name, Kind: kind, Consecutive: consecutive}
		}
	}
	return consecutive, stop
}
