package toolloop

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolloop/toolloop/providers"
)

// Defaults for the zero fields of an [AgentLoop].
const (
	DefaultMaxIterations  = 20
	DefaultMaxConcurrency = 16
	DefaultToolTimeout    = 2 * time.Minute
)

// Errors a run can end with. The [RunResult] is returned with each of
// them, holding the transcript so far.
var (
	// ErrMaxIterations: the model still wanted tools after MaxIterations
	// turns.
	ErrMaxIterations = errors.New("toolloop: the model was still calling tools after the maximum number of iterations")
	// ErrLength: the model's output hit its token limit; the last message
	// is cut off, and any tool calls in it were not run.
	ErrLength = errors.New("toolloop: the model's output hit its token limit")
	// ErrPaused: a call awaits a human decision; RunResult.Paused holds the
	// state to pass to Resume.
	ErrPaused = errors.New("toolloop: the run is paused for approval")
	// ErrNoModel: the loop has no Model.
	ErrNoModel = errors.New("toolloop: AgentLoop has no Model")
)

// AgentLoop runs the tool-call loop: it sends the transcript and the tool
// specs to the model, runs the tool calls of each assistant turn through
// the pipeline, appends one result per call, and repeats until the model
// stops.
//
// Only Model is required; every other zero field is a documented default.
// An AgentLoop may run many conversations at once, but its fields must not
// change while it runs.
type AgentLoop struct {
	// Model answers each turn.
	Model Model
	// Tools are the tools the model may call; nil means none.
	Tools *ToolRegistry
	// Guard decides whether each call may run; nil allows all.
	Guard Guard
	// Approver decides calls the guard answered with Ask. With no approver,
	// an ask is a denial saying approval is required, unless
	// PauseForApproval is set; a guard that says it may ask (see [Asker])
	// needs one or the other, or Run refuses to start ([ErrNoApprover]).
	Approver Approver
	// PauseForApproval makes an ask without an Approver pause the run:
	// Run returns ErrPaused and a state to pass to Resume.
	PauseForApproval bool
	// Hooks run around every call.
	Hooks Hooks
	// Repair, if set, fixes common slips in malformed arguments before
	// validation, such as RepairArguments. Off by default.
	Repair Repairer

	// ToolChoice is the tool choice of every model turn but the wrap-up
	// turn (which forbids tools); the zero value leaves it to the model.
	// Set it per turn with a Hooks.BeforeModel hook. A choice that
	// requires tools on every turn keeps the model from ever answering:
	// the run then ends at MaxIterations.
	ToolChoice ToolChoice
	// ToolFilter, if set, decides before each model turn which tools the
	// model is sent (see [Only] for a fixed set). A call to a tool it left
	// out still resolves: the filter shapes the prompt, the guard decides
	// what runs.
	ToolFilter ToolFilter
	// Deferred, if set, marks tools the model is not sent until it finds
	// them with the tool search tool ([ToolSearchName]), which the loop
	// then offers: the tools a search lists are sent from the next turn
	// on. The loaded tools are read from the transcript, so a paused,
	// resumed or replayed run keeps them, and a context manager that
	// removes a search's result unloads its tools. A call to a deferred
	// tool the model has not loaded still runs, and its result's
	// Meta.Unloaded says so.
	Deferred ToolSelector
	// Output, if set, makes the run's final answer JSON of Output.Schema
	// (see [RunTyped], which sets it from a Go type). It is sent as the
	// provider's native structured output when the model supports it
	// with tools (see [NativeOutput]), otherwise as a tool the model
	// answers by calling, named Output.Name. An answer that does not
	// match the schema is sent back to the model with the validator's
	// message, up to MaxOutputRetries times; then the run ends with an
	// *OutputError. The valid answer is RunResult.Output. A turn with
	// tool choice none (the wrap-up turn of Budget.WrapUp) offers the
	// output tool alone, so the answer can still come.
	Output *OutputFormat
	// MaxOutputRetries bounds how many invalid final answers are sent
	// back to the model; 0 means 2, and a negative value sends none back.
	MaxOutputRetries int
	// TurnProcessors act on the whole batch of calls of each assistant
	// turn before any of them runs: they may answer calls themselves or
	// send the turn back to the model (see [TurnProcessor]).
	TurnProcessors []TurnProcessor
	// MaxSendBacks bounds how many times in a row the turn processors may
	// send a turn back; the next send-back ends the run with
	// ErrSentBack. 0 means 2; a negative value allows none.
	MaxSendBacks int

	// MaxIterations bounds the number of model turns; 0 means 20.
	MaxIterations int
	// MaxConcurrency bounds the calls of one turn that run at once; 0
	// means 16.
	MaxConcurrency int
	// ToolTimeout bounds each call unless its spec says otherwise; 0 means
	// two minutes.
	ToolTimeout time.Duration
	// MaxResultBytes is each result's byte budget; 0 means 64 KiB, and a
	// negative value turns truncation off.
	MaxResultBytes int
	// MaxOutputBytes is the pre-hook budget: the most of a tool's output
	// the loop holds. Output beyond it is cut while it is produced where
	// the source allows (shell, plugins, MCP, typed tools' text), and
	// otherwise as soon as the tool returns, so post-hooks (a redactor,
	// an envelope) see at most this much; the result is then cut to
	// MaxResultBytes for the model. 0 means 1 MiB or MaxResultBytes if
	// that is larger; a negative value turns the cut off.
	MaxOutputBytes int
	// MaxCallsPerTurn bounds the calls of one model turn: calls beyond it
	// are not run and get an error result saying so. 0 means 128; a
	// negative value means no limit.
	MaxCallsPerTurn int
	// MaxTurnResultBytes bounds the results of one turn together: each of
	// a turn's n calls is cut to MaxTurnResultBytes/n bytes, if that is
	// less than MaxResultBytes. 0 means 1 MiB (and no limit when
	// MaxResultBytes turns truncation off); a negative value means no
	// limit.
	MaxTurnResultBytes int
	// ReportInterval rate-limits what each running call reports: at most
	// one progress and one partial-output event per interval. Reports in
	// between are joined into the next event (partial output up to
	// MaxPartialBytes per event, with a marker counting the bytes
	// dropped; progress keeps the latest) and Event.Coalesced counts them;
	// what is pending when the call ends is sent before its completion.
	// 0 means 100ms; a negative value sends every report as it comes.
	ReportInterval time.Duration
	// MaxPartialBytes bounds the text of one partial-output event; 0
	// means 16 KiB.
	MaxPartialBytes int

	// ContextManagers keep the transcript within the model's context
	// window: before every model request each is asked, in order, for an
	// edit (see [ContextManager], [ClearToolResults], [Compactor]). When
	// the model answers that the request is too long, they are asked again
	// and the turn is taken once more if one of them freed room. Nil
	// leaves the transcript as it grows.
	ContextManagers []ContextManager
	// Budget limits what a run may spend (tokens, cost, time, tool calls)
	// and when it stops; the zero value limits nothing but MaxIterations.
	Budget Budget
	// Failures says when failed tool calls end the run; the zero value
	// never does.
	Failures FailurePolicy
	// Models adds to and overrides the built-in table of context windows
	// and prices (see [LookupModel]) that context managers, Budget.MaxCost
	// and RunResult.Cost use.
	Models Models

	// OnEvent, if set, receives every event of every run, one at a time
	// (the loop serializes the calls). It should return quickly: the run
	// waits for it. With no OnEvent, no event is built.
	OnEvent func(Event)
	// Logger, if set, receives warnings the loop cannot report otherwise,
	// such as a panicking OnEvent. Their values can hold tool output: wrap
	// the handler with a sanitize.Redactor's LogHandler to keep secrets
	// out of the log.
	Logger *slog.Logger

	// grace overrides cancelGrace, for tests.
	grace time.Duration
}

// RunResult is what a run produced, complete or not.
type RunResult struct {
	RunID string `json:"run_id"`
	// Messages is the whole transcript: the input, every assistant turn and
	// one tool message per call. It is always valid to send to a model
	// again: every call has exactly one result, in call order.
	Messages []Message `json:"messages"`
	// FinalText is the text of the last assistant message.
	FinalText  string     `json:"final_text"`
	StopReason StopReason `json:"stop_reason"`
	// Turns counts the model turns taken.
	Turns int `json:"turns"`
	// Accounting is what the run spent: tokens, cost and tool calls.
	Accounting
	// Executions records every call, in order.
	Executions []ToolExecution `json:"executions,omitempty"`
	// Output is the final answer, when the run has an output format (see
	// AgentLoop.Output and RunTyped) and ended with a valid answer.
	Output json.RawMessage `json:"output,omitempty"`
	// Paused is set when the run stopped for approval (ErrPaused).
	Paused *PauseState `json:"paused,omitempty"`
}

// Accounting is what a run has spent. A [RunResult] and a [PauseState]
// hold it; run.paused, run.limit and run.end events carry it.
type Accounting struct {
	// Usage adds up the tokens of the run's model turns and compactions.
	Usage Usage `json:"usage"`
	// Cost is what they cost in US dollars, priced from AgentLoop.Models
	// and [LookupModel] by the model each response names. UnpricedTurns
	// counts the responses whose model has no known price, which Cost
	// leaves out.
	Cost          float64 `json:"cost_usd,omitempty"`
	UnpricedTurns int     `json:"unpriced_turns,omitempty"`
	// ToolCalls counts the calls the run sent through the pipeline; calls
	// answered without running (over budget, after a length stop) are not
	// counted, and neither are calls of the output tool (see
	// AgentLoop.Output), which OutputCalls counts.
	ToolCalls int `json:"tool_calls,omitempty"`
	// OutputCalls counts the calls of the output tool: the final answers
	// the model gave by calling it, valid or not. Budget.MaxToolCalls and
	// MaxCallsPerTurn never hold them back.
	OutputCalls int `json:"output_calls,omitempty"`
	// ConsecutiveFailures counts the failed calls since the last one that
	// succeeded, for the failure policy.
	ConsecutiveFailures int `json:"consecutive_failures,omitempty"`
}

// ToolExecution records one tool call of a run.
type ToolExecution struct {
	Name    string `json:"name"`
	CallID  string `json:"call_id"`
	Turn    int    `json:"turn"`
	Success bool   `json:"success"`
	// Output is the text the model saw.
	Output  string        `json:"output"`
	Error   *ToolError    `json:"error,omitempty"`
	Latency time.Duration `json:"latency_ns"`
}

// runState is one Run or Resume in progress.
type runState struct {
	l        *AgentLoop
	id       string
	turn     int
	observed bool
	// stream, if set, receives every event after OnEvent (see Stream).
	stream func(Event)
	emitMu sync.Mutex
	// approveMu makes the approver see one call at a time.
	approveMu sync.Mutex
	// timer wakes turn coordinators; one serves the whole run.
	timer *time.Timer
	// decision settles an Ask verdict its calls meet (RunCall).
	decision *Approval

	// started is when Run or Resume was called, for Budget.MaxDuration.
	started time.Time
	// share is the byte budget of each result of the current turn (see
	// AgentLoop.MaxTurnResultBytes); set before the turn's calls start.
	share int
	// tokens counts the transcript's tokens for context managers.
	tokens tokenCounter
	// ctl is the state of the turn controls; nil when none are used.
	ctl *control
	// output is the output format given for this run only (RunTyped).
	output *OutputFormat
	// lastModel names the model that answered last.
	lastModel string
	// warnedAsk is set once an ask with nothing to settle it was logged.
	warnedAsk atomic.Bool
}

func (l *AgentLoop) newRun(id string, stream func(Event)) *runState {
	if id == "" {
		id = newRunID()
	}
	return &runState{l: l, id: id, observed: l.OnEvent != nil || stream != nil, stream: stream, started: time.Now()}
}

// newRunID makes a run ID: 64 random bits, from the process's randomly
// seeded generator, which costs a fraction of a system call for random
// bytes. A run ID names a run; it is no secret.
func newRunID() string {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], rand.Uint64())
	var b [20]byte // "run_" and 16 hex digits
	copy(b[:], "run_")
	hex.Encode(b[4:], n[:])
	return string(b[:])
}

func (rn *runState) emit(e *Event) {
	if !rn.observed {
		return
	}
	e.RunID = rn.id
	if e.Turn == 0 {
		e.Turn = rn.turn
	}
	e.Time = time.Now()
	rn.emitMu.Lock()
	defer rn.emitMu.Unlock()
	if rn.l.OnEvent != nil {
		rn.onEvent(e)
	}
	if rn.stream != nil {
		rn.stream(*e)
	}
}

// onEvent passes e to the loop's OnEvent, logging a panic.
func (rn *runState) onEvent(e *Event) {
	defer func() {
		if p := recover(); p != nil {
			rn.logger().Error("toolloop: OnEvent panicked; event dropped", "event", e.Type, "panic", p)
		}
	}()
	rn.l.OnEvent(*e)
}

func (rn *runState) logger() *slog.Logger {
	if rn.l.Logger != nil {
		return rn.l.Logger
	}
	return discardLogger
}

func (l *AgentLoop) maxIterations() int {
	if l.MaxIterations > 0 {
		return l.MaxIterations
	}
	return DefaultMaxIterations
}

func (l *AgentLoop) maxConcurrency() int {
	if l.MaxConcurrency > 0 {
		return l.MaxConcurrency
	}
	return DefaultMaxConcurrency
}

func (l *AgentLoop) toolTimeout() time.Duration {
	if l.ToolTimeout > 0 {
		return l.ToolTimeout
	}
	return DefaultToolTimeout
}

// The defaults of AgentLoop.MaxOutputBytes, MaxCallsPerTurn and
// MaxTurnResultBytes.
const (
	DefaultMaxOutputBytes     = 1 << 20
	DefaultMaxCallsPerTurn    = 128
	DefaultMaxTurnResultBytes = 1 << 20
)

func (l *AgentLoop) maxCallsPerTurn() int {
	if l.MaxCallsPerTurn == 0 {
		return DefaultMaxCallsPerTurn
	}
	return l.MaxCallsPerTurn
}

// resultShare is the byte budget of each result in a turn of n calls;
// <= 0 means none.
func (l *AgentLoop) resultShare(n int) int {
	per := l.maxResultBytes()
	turn := l.MaxTurnResultBytes
	if turn == 0 {
		if per <= 0 {
			return per // truncation is off, and no turn cap was asked for
		}
		turn = DefaultMaxTurnResultBytes
	}
	if turn < 0 || n == 0 {
		return per
	}
	if per <= 0 || turn/n < per {
		return max(turn/n, 1)
	}
	return per
}

// maxOutputBytes is the pre-hook budget; <= 0 means none.
func (l *AgentLoop) maxOutputBytes() int {
	if l.MaxOutputBytes != 0 {
		return l.MaxOutputBytes
	}
	r := l.maxResultBytes()
	if r <= 0 {
		return -1
	}
	return max(r, DefaultMaxOutputBytes)
}

func (l *AgentLoop) maxResultBytes() int {
	if l.MaxResultBytes == 0 {
		return DefaultMaxResultBytes
	}
	return l.MaxResultBytes
}

// Run runs the loop on msgs until the model stops, a limit is reached or
// ctx is done. It never modifies msgs. A loop set up wrong fails at once,
// with no result: see [AgentLoop.Validate]. To read the run's events as
// they happen, use [AgentLoop.RunStream].
//
// A transcript that ends mid-turn (calls without results, after a crash) is
// repaired first: each such call gets a canceled result saying the run was
// interrupted, and is never run again.
//
// Run returns the result so far with every error: ErrMaxIterations,
// ErrLength, ErrPaused, a *BudgetError (ErrBudget) when a limit of the
// Budget is reached, a *FailureError (ErrToolFailures) when the failure
// policy stops the run, a model error (wrapped, so errors.Is and errors.As
// reach the provider's error), or ctx's error after giving every pending
// call a canceled result.
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
	// Room for a turn or two, so a short run does not grow the transcript
	// at every message.
	res := &RunResult{RunID: rn.id, Messages: append(make([]Message, 0, len(msgs)+4), msgs...)}
	rn.emit(&Event{Type: EventRunStart, Messages: msgs})
	if fixed, synth, notes := repairTranscript(res.Messages); len(notes) > 0 {
		res.Messages = fixed
		rn.emit(&Event{Type: EventTranscriptRepaired, Messages: synth, Repairs: notes})
	}
	inner, cancel := rn.budgetContext(ctx)
	defer cancel()
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
// budget's deadline; the wrap-up turn runs on outer.
func (l *AgentLoop) loop(outer, ctx context.Context, rn *runState, res *RunResult) (*RunResult, error) {
	for {
		if err := budgetCause(outer, ctx); err != nil {
			return rn.limitReached(outer, res, err)
		}
		if err := rn.checkBudget(res); err != nil {
			return rn.limitReached(outer, res, err)
		}
		if rn.turn >= l.maxIterations() {
			res.StopReason = StopToolUse
			return rn.limitReached(outer, res, ErrMaxIterations)
		}
		if err := ctx.Err(); err != nil {
			res.StopReason = StopAborted
			return rn.end(res, err)
		}
		if len(l.ContextManagers) > 0 {
			if _, err := rn.manageContext(ctx, res, false); err != nil {
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
		if len(pending) > 0 {
			return rn.pause(res, results, pending)
		}
		rn.appendResults(res, results)
		if err := ctx.Err(); err != nil {
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
				}
				return rn.end(res, err)
			}
		}
	}
}

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
		rn.emit(&Event{Type: EventModelResponse, Response: &Response{
			Message: msg, StopReason: msg.StopReason, Usage: resp.Usage, Model: resp.Model}})
	}
	res.Usage.Add(resp.Usage)
	rn.price(res, resp.Model, resp.Usage)
	res.Messages = append(res.Messages, msg)
	res.FinalText = msg.Text()
	res.StopReason = msg.StopReason
	if resp.Model != "" {
		rn.lastModel = resp.Model
	}
	if len(rn.l.ContextManagers) > 0 {
		rn.tokens.reported(res.Messages, resp.Usage)
	}
	return msg
}

// price adds what u cost on model to the run's cost.
func (rn *runState) price(res *RunResult, model string, u Usage) {
	if u == (Usage{}) {
		return
	}
	if info, ok := rn.l.lookupModel(model); ok && info.Price != nil {
		res.Cost += info.Price.Cost(u)
		return
	}
	res.UnpricedTurns++
}

// checkPriced fails a run with a cost limit whose model has no price.
func (rn *runState) checkPriced(resp *Response) error {
	if rn.l.Budget.MaxCost <= 0 || resp.Usage == (Usage{}) {
		return nil
	}
	if info, ok := rn.l.lookupModel(resp.Model); ok && info.Price != nil {
		return nil
	}
	return fmt.Errorf("%w: Budget.MaxCost is set, but model %q has no price: add it to AgentLoop.Models", ErrUnknownPrice, resp.Model)
}

// ErrUnknownPrice: Budget.MaxCost is set and a model that answered has no
// price in AgentLoop.Models or the built-in table, so the run's cost
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
func (rn *runState) checkBudget(res *RunResult) error {
	b := &rn.l.Budget
	if b.MaxInputTokens <= 0 && b.MaxOutputTokens <= 0 && b.MaxTotalTokens <= 0 && b.MaxCost <= 0 &&
		b.MaxDuration <= 0 && b.MaxToolCalls <= 0 && b.StopWhen == nil {
		return nil
	}
	if be := rn.callStopWhen(b, rn.status(res)); be != nil {
		return be
	}
	return nil
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
	if m := rn.l.maxCallsPerTurn(); m > 0 && allowed > m {
		allowed = m
		why = fmt.Sprintf("not run: the model asked for %d tool calls in one turn, and at most %d run per turn; ask again for the ones still needed", n, m)
	}
	if m := rn.l.Budget.MaxToolCalls; m > 0 && m-res.ToolCalls < allowed {
		allowed = max(m-res.ToolCalls, 0)
		why = fmt.Sprintf("not run: the run's budget allows %d tool calls, and they are spent", m)
	}
	res.ToolCalls += allowed
	res.OutputCalls += answers
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
		r := notRunResult(calls[i], why)
		done[i] = r
		if rn.observed {
			rn.emit(&Event{Type: EventComplete, CallID: r.CallID, Tool: r.Name, Result: r})
		}
	}
	return done
}

// checkFailures applies the failure policy to a turn's results.
func (rn *runState) checkFailures(res *RunResult, results []*ToolResult) error {
	n, fe := rn.l.Failures.Check(res.ConsecutiveFailures, results)
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
	if len(l.ContextManagers) > 0 {
		rn.tokens.specs = estimateSpecs(req.Tools)
	}
	rn.emit(&Event{Type: EventModelRequest})
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

// notRun answers calls the loop will not run with canceled results.
func (rn *runState) notRun(res *RunResult, calls []ToolCall, why string) {
	for _, tc := range calls {
		r := notRunResult(tc, why)
		res.Messages = append(res.Messages, ToolMessage(r))
		res.Executions = append(res.Executions, execution(rn.turn, r))
		if rn.observed {
			rn.emit(&Event{Type: EventComplete, CallID: tc.ID, Tool: tc.Name, Result: r})
		}
	}
}

// notRunResult answers a call the loop did not run.
func notRunResult(tc ToolCall, why string) *ToolResult {
	r := &ToolResult{CallID: tc.ID, Name: tc.Name, Status: StatusError,
		Error: &ToolError{Kind: KindCanceled, Message: why}, Content: []Content{TextContent(why)}}
	r.Meta.Bytes = len(why)
	return r
}

// appendResults adds one tool message per result to the transcript, and
// what agents used as tools spent to the run's accounting.
func (rn *runState) appendResults(res *RunResult, results []*ToolResult) {
	for _, r := range results {
		res.Messages = append(res.Messages, ToolMessage(r))
		res.Executions = append(res.Executions, execution(rn.turn, r))
		if s := r.Meta.Spent; s != nil {
			res.Accounting.AddSpent(s)
		}
	}
}

func execution(turn int, r *ToolResult) ToolExecution {
	return ToolExecution{
		Name: r.Name, CallID: r.CallID, Turn: turn,
		Success: r.Status == StatusOK, Output: r.Text(), Error: r.Error, Latency: r.Meta.Duration,
	}
}

// end reports the end of a run and returns its result.
func (rn *runState) end(res *RunResult, err error) (*RunResult, error) {
	rn.putTimer()
	if rn.observed {
		acc := res.Accounting
		e := &Event{Type: EventRunEnd, StopReason: res.StopReason, Usage: &res.Usage, Accounting: &acc}
		if err != nil {
			e.Error = err.Error()
		}
		rn.emit(e)
	}
	return res, err
}
