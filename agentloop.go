package toolloop

import (
	"errors"
	"log/slog"
	"time"
)

// Errors a run can end with. The [RunResult] is returned with each of
// them, holding the transcript so far.
var (
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
	// Sealing, if its Key is set, seals the state of every run that
	// pauses and makes Resume refuse a state that is not sealed with the
	// key or was changed since ([ErrTampered]): set it when paused states
	// leave the process.
	Sealing Sealing
	// Hooks run around every call.
	Hooks Hooks
	// Repair, if set, fixes common slips in malformed arguments before
	// validation, such as RepairArguments. Off by default.
	Repair Repairer

	// ToolChoice is the tool choice of every model turn but the wrap-up
	// turn (which forbids tools); the zero value leaves it to the model.
	// Set it per turn with a Hooks.BeforeModel hook. A choice that
	// requires tools on every turn keeps the model from ever answering:
	// the run then ends at Budget.MaxTurns.
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
	// message, up to Budget.MaxOutputRetries times; then the run ends
	// with a *BudgetError (LimitOutputRetries) wrapping an *OutputError.
	// The valid answer is RunResult.Output. A turn with tool choice none
	// (the wrap-up turn of Budget.WrapUp) offers the output tool alone,
	// so the answer can still come.
	Output *OutputFormat
	// TurnProcessors act on the whole batch of calls of each assistant
	// turn before any of them runs: they may answer calls themselves or
	// send the turn back to the model (see [TurnProcessor]), up to
	// Budget.MaxSendBacks times in a row.
	TurnProcessors []TurnProcessor
	// ContextManagers keep the transcript within the model's context
	// window: before every model request each is asked, in order, for an
	// edit (see [ContextManager], [ClearToolResults], [Compactor]). When
	// the model answers that the request is too long, they are asked again
	// and the turn is taken once more if one of them freed room. Nil
	// leaves the transcript as it grows.
	ContextManagers []ContextManager

	// Limits bounds how big and how parallel each turn is: calls at once
	// and per turn, the tool timeout, result and output bytes, progress
	// reports. The zero value is the documented defaults.
	Limits Limits
	// Budget says when a run stops: turns (20 by default), tokens, cost,
	// time, tool calls, output retries, send-backs, failures, and whether
	// a last wrap-up turn asks for a final answer.
	Budget Budget
	// ModelTable adds to and overrides the built-in table of context
	// windows and prices (see [LookupModel]) that context managers,
	// Budget.MaxCost and RunResult.Cost use.
	ModelTable ModelTable

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

// Validate reports the mistakes in the loop's configuration that would
// make every run fail or misbehave: no Model ([ErrNoModel]), or a guard
// that may ask (see [Asker]) with neither an Approver nor
// PauseForApproval ([ErrNoApprover]), or a Sealing key shorter than 16
// bytes. Run and Resume call it first and return its error before doing
// anything; drivers that schedule turns and calls themselves (with
// [AgentLoop.RunCall]) should call it once before they start.
func (l *AgentLoop) Validate() error {
	var errs []error
	if l.Model == nil {
		errs = append(errs, ErrNoModel)
	}
	if l.Guard != nil && l.Approver == nil && !l.PauseForApproval && mayAsk(l.Guard) {
		errs = append(errs, ErrNoApprover)
	}
	if n := len(l.Sealing.Key); n > 0 && n < minSealKey {
		errs = append(errs, errSealKey)
	}
	return errors.Join(errs...)
}
