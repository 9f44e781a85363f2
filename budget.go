package toolloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// ErrBudget is matched by every *[BudgetError]: the run reached a limit of
// its [Budget] (turns, tokens, cost, time, tool calls, output retries,
// send-backs or failures), or its StopWhen said stop.
var ErrBudget = errors.New("toolloop: the run reached a limit of its budget")

// Limit names a limit of a [Budget].
type Limit string

// The limits a run can reach.
const (
	// LimitTurns: the model was still calling tools after Budget.MaxTurns
	// turns.
	LimitTurns        Limit = "turns"
	LimitInputTokens  Limit = "input_tokens"
	LimitOutputTokens Limit = "output_tokens"
	LimitTotalTokens  Limit = "total_tokens"
	LimitCost         Limit = "cost"
	LimitDuration     Limit = "duration"
	LimitToolCalls    Limit = "tool_calls"
	// LimitOutputRetries: the model's final answer still did not match
	// the output schema after Budget.MaxOutputRetries send-backs; the
	// BudgetError wraps the *OutputError.
	LimitOutputRetries Limit = "output_retries"
	// LimitSendBacks: the turn processors sent a turn back more than
	// Budget.MaxSendBacks times in a row.
	LimitSendBacks Limit = "send_backs"
	// LimitFailures: failed tool calls stopped the run
	// (Budget.MaxConsecutiveFailures or StopOnFailure); the BudgetError
	// wraps the *FailureError.
	LimitFailures Limit = "failures"
	// LimitStopWhen: the budget's StopWhen returned true.
	LimitStopWhen Limit = "stop_when"
	// LimitShared: the budget's Shared said the spending the run shares
	// with other runs has no room left (a session's or a tenant's cap,
	// see the session package); the BudgetError wraps its error.
	LimitShared Limit = "shared"
)

// Budget says when a run stops: how many turns it may take, what it may
// spend (tokens, cost, time, tool calls), how often a bad answer or turn
// is sent back, and how many failures it bears. The zero value limits
// nothing but the turns (20), output retries (2) and send-backs (2).
//
// The loop checks the limits before every model turn, so a run stops
// between turns: the turn that crosses a token or cost limit finishes
// (its calls run, so the transcript stays whole), and the next one is not
// taken. MaxToolCalls is exact: the calls of a turn beyond it are answered
// as not run. MaxDuration cancels the model turn or the calls in progress
// when it passes, as a context deadline would.
//
// Every limit ends the run with a *[BudgetError] naming it (errors.Is
// with [ErrBudget]) and the transcript so far; with WrapUp, the model is
// first asked for a final answer, with tools disabled. Calls of the
// output tool (see [AgentLoop.Output]) are not tool calls: MaxToolCalls
// neither counts nor holds them back.
type Budget struct {
	// MaxTurns bounds the model turns of a run that keeps calling tools;
	// 0 means 20.
	MaxTurns int
	// MaxInputTokens, MaxOutputTokens and MaxTotalTokens bound the tokens
	// the run's model turns report (Usage); 0 means no limit.
	MaxInputTokens  int64
	MaxOutputTokens int64
	MaxTotalTokens  int64
	// MaxCost bounds the run's cost in US dollars (see [Price]); 0 means
	// no limit. Each turn is priced by the model its response names, from
	// AgentLoop.ModelTable and then [LookupModel]; a run with MaxCost
	// ends with an error at the first turn whose model has no price,
	// rather than spend without counting.
	MaxCost float64
	// MaxDuration bounds the wall-clock time of each Run or Resume call;
	// 0 means no limit. Time spent paused for approval, between Run and
	// Resume, does not count.
	MaxDuration time.Duration
	// MaxToolCalls bounds the number of tool calls the run makes; 0 means
	// no limit.
	MaxToolCalls int

	// MaxOutputRetries bounds how many invalid final answers (see
	// AgentLoop.Output) are sent back to the model; the next ends the run
	// with LimitOutputRetries. 0 means 2, and a negative value sends none
	// back.
	MaxOutputRetries int
	// MaxSendBacks bounds how many times in a row the turn processors may
	// send a turn back; the next send-back ends the run with
	// LimitSendBacks. 0 means 2; a negative value allows none.
	MaxSendBacks int
	// MaxConsecutiveFailures ends the run after this many failed calls in
	// a row, in call order across turns; 0 means no limit. A result counts
	// as failed when its status is error, whatever its kind. The zero
	// value suits most agents: the model sees each failure and carries
	// on.
	MaxConsecutiveFailures int
	// StopOnFailure ends the run at the first failed call of one of these
	// kinds.
	StopOnFailure []ErrorKind

	// StopWhen, if set, is asked before every model turn after the first;
	// returning true ends the run as a limit does, with [LimitStopWhen].
	StopWhen func(RunStatus) bool

	// Shared, if set, bounds spending the run shares with other runs,
	// perhaps in other processes: a session's across its runs, a
	// tenant's across its sessions (the session package sets it from its
	// caps). It is asked before every model turn, the first included,
	// after the limits above; an error it returns ends the run with a
	// *BudgetError of [LimitShared] wrapping it. Runs that share a cap
	// each check it before their turn, so together they overspend it by
	// at most one turn each.
	Shared SharedBudget

	// WrapUp asks the model for a final answer when a limit is reached
	// (MaxTurns and StopWhen included): the loop appends a user
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

// SharedBudget bounds what runs spend together (see Budget.Shared).
type SharedBudget interface {
	// Allow is asked before each model turn of a run, with what the run
	// has done so far; a non-nil error stops the run before the turn.
	// It is called from the run's goroutine, and may be called by many
	// runs at once.
	Allow(ctx context.Context, st RunStatus) error
}

// CheckShared asks b.Shared, if set, whether st's run may take another
// turn, and returns the *BudgetError of [LimitShared] wrapping its
// answer, or nil. AgentLoop.Run and Resume call it before every model
// turn; drivers that schedule turns themselves call it after Check.
func (b *Budget) CheckShared(ctx context.Context, st RunStatus) *BudgetError {
	if b.Shared == nil {
		return nil
	}
	if err := b.Shared.Allow(ctx, st); err != nil {
		return &BudgetError{Limit: LimitShared, Err: err}
	}
	return nil
}

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
// [Budget]. It matches [ErrBudget]. Err, when set, says more: a
// *[FailureError] for LimitFailures, an *[OutputError] for
// LimitOutputRetries; errors.As reaches it.
type BudgetError struct {
	Limit Limit
	// Used and Max are the amount spent and the limit, in the limit's
	// unit: turns, tokens, US dollars, seconds, calls, answers or
	// send-backs. Both are 0 for LimitStopWhen and LimitFailures.
	Used, Max float64
	// Err is the cause, or nil.
	Err error
}

// Error implements the error interface.
func (e *BudgetError) Error() string {
	s := "toolloop: the run reached its " + e.describe()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is ErrBudget.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// Unwrap returns the cause, Err.
func (e *BudgetError) Unwrap() error { return e.Err }

// describe names the limit and its amounts, for people and for the
// wrap-up message.
func (e *BudgetError) describe() string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch e.Limit {
	case LimitStopWhen:
		return "stop condition"
	case LimitShared:
		return "shared spending limit"
	case LimitFailures:
		return "failure limit"
	case LimitTurns:
		return fmt.Sprintf("turn limit: the model was still calling tools after %s turns", num(e.Max))
	case LimitCost:
		return fmt.Sprintf("cost limit: $%.4f spent of $%s", e.Used, num(e.Max))
	case LimitDuration:
		return fmt.Sprintf("time limit: %s of %s", time.Duration(e.Used*float64(time.Second)).Round(time.Millisecond),
			time.Duration(e.Max*float64(time.Second)))
	case LimitToolCalls:
		return fmt.Sprintf("tool-call limit: %s calls of %s", num(e.Used), num(e.Max))
	case LimitOutputRetries:
		return fmt.Sprintf("output-retry limit: %s invalid answers, %s sent back", num(e.Used), num(e.Max))
	case LimitSendBacks:
		return fmt.Sprintf("send-back limit: %s send-backs in a row, of %s", num(e.Used), num(e.Max))
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
// run reached limit: a *BudgetError, or another error,
// described by its message. Drivers that schedule turns themselves (the
// temporal package) call it; AgentLoop.Run does.
func (b *Budget) WrapUpMessage(limit error) Message {
	return b.wrapUpMessage(limitReason(limit))
}

// limitReason describes a limit for the wrap-up message and the
// transcript edit that adds it.
func limitReason(limit error) string {
	if be, ok := errors.AsType[*BudgetError](limit); ok {
		return be.describe()
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

// FailureError is the cause of the *BudgetError a run ends with when
// failed tool calls stop it (LimitFailures): which call failed. The
// transcript holds every result of the turn, the failed ones included.
type FailureError struct {
	// CallID, Tool and Kind describe the failure that stopped the run.
	CallID string
	Tool   string
	Kind   ErrorKind
	// Consecutive counts the failed calls in a row, that one included.
	Consecutive int
	// StopOn reports that the kind is one of Budget.StopOnFailure, rather
	// than MaxConsecutiveFailures being reached.
	StopOn bool
}

// Error implements the error interface.
func (e *FailureError) Error() string {
	if e.StopOn {
		return fmt.Sprintf("call %s of %s failed with %s", e.CallID, e.Tool, e.Kind)
	}
	return fmt.Sprintf("%d failed tool calls in a row (the last: %s of %s, %s)",
		e.Consecutive, e.CallID, e.Tool, e.Kind)
}

// CheckFailures counts results, in call order, onto consecutive (the
// failures in a row so far), and returns the new count and, if failures
// stop the run (MaxConsecutiveFailures, StopOnFailure), its error, with
// Limit LimitFailures and the *FailureError as its cause. Drivers that
// schedule calls themselves call it after each turn; AgentLoop.Run does.
func (b *Budget) CheckFailures(consecutive int, results []*ToolResult) (int, *BudgetError) {
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
		if slices.Contains(b.StopOnFailure, kind) {
			stop = &FailureError{CallID: r.CallID, Tool: r.Name, Kind: kind, Consecutive: consecutive, StopOn: true}
		} else if b.MaxConsecutiveFailures > 0 && consecutive >= b.MaxConsecutiveFailures {
			stop = &FailureError{CallID: r.CallID, Tool: r.Name, Kind: kind, Consecutive: consecutive}
		}
	}
	if stop == nil {
		return consecutive, nil
	}
	return consecutive, &BudgetError{Limit: LimitFailures, Err: stop}
}

// WithDefaults returns b with each zero field that has a default set to
// it (MaxTurns 20, MaxOutputRetries 2, MaxSendBacks 2), so that those
// fields hold the limit in force; a negative MaxOutputRetries or
// MaxSendBacks (none) stays negative. Drivers that run turns themselves
// (the temporal package) use it to apply the budget exactly as Run does.
func (b Budget) WithDefaults() Budget {
	b.MaxTurns = b.maxTurns()
	if b.MaxOutputRetries == 0 {
		b.MaxOutputRetries = 2
	}
	if b.MaxSendBacks == 0 {
		b.MaxSendBacks = 2
	}
	return b
}

// maxTurns is MaxTurns with its default. The loop asks it every turn;
// WithDefaults would copy the whole Budget into the loop's stack frame.
func (b *Budget) maxTurns() int {
	if b.MaxTurns <= 0 {
		return 20
	}
	return b.MaxTurns
}
