package toolloop

import (
	"context"
	"encoding/json"
	"time"
)

// EventType names an [Event].
type EventType string

// The event types. Tool events carry the call ID, tool name and source of
// the call; every event carries the run ID and turn.
const (
	// EventRunStart opens a run; Messages is the input transcript.
	EventRunStart EventType = "run.start"
	// EventRunResumed continues a paused run; Approvals holds the decisions.
	EventRunResumed EventType = "run.resumed"
	// EventRunPaused: the run stopped to wait for approvals; Pending lists
	// the calls that wait, and Agents the calls to agents used as tools
	// whose runs paused, with their states (as PauseState.Agents holds
	// them, so that a log can resume the run), and Queued the messages
	// sent into the run and not yet delivered.
	EventRunPaused EventType = "run.paused"
	// EventRunEnd closes a run: StopReason, Usage and Error.
	EventRunEnd EventType = "run.end"
	// EventUserMessage: a message sent into the running run (see [Inbox])
	// was delivered, before a model request; Messages holds it, as
	// appended to the transcript, and Origin says how it was sent. For
	// OriginJob, Job is the job whose end it tells (absent when a resumed
	// run delivers the end of a job its pause ended).
	EventUserMessage EventType = "user.message"
	// EventRunInterrupted: an interrupt (see [Inbox.Interrupt]) stopped
	// the run at the point its mode names; Interrupt holds it. The run
	// ends next (run.end, with ErrInterrupted) or, with
	// Interrupt.Continue, goes on with the queued messages.
	EventRunInterrupted EventType = "run.interrupted"
	// EventTranscriptRepaired: the input transcript had tool calls without
	// results, or results without calls, and was repaired before use.
	// Messages holds the synthesized results; Repairs says what was done.
	EventTranscriptRepaired EventType = "transcript.repaired"
	// EventTranscriptEdited: the loop changed the transcript between turns
	// (a context manager, or the wrap-up turn's message); Edit says how.
	EventTranscriptEdited EventType = "transcript.edited"
	// EventLimit: the run reached a limit of its budget or its failure
	// policy; Error describes it. A wrap-up turn may follow, then run.end.
	EventLimit EventType = "run.limit"

	// EventModelRequest: the loop is asking the model for a turn; Request
	// describes the request (tools, tool choice, output format, token
	// estimate) and Messages holds its messages from Request.From on:
	// what the previous request did not have.
	EventModelRequest EventType = "model.request"
	// EventCacheBust: the request the loop is about to send does not
	// begin with the whole of the run's previous request, so the
	// provider's prompt cache cannot serve it from what that request
	// wrote; CacheBust says what changed (tools, a system message, the
	// tool choice, a transcript edit). It comes just before the turn's
	// model.request. Appending the model's turn, the results and new
	// messages is how a transcript grows, and busts nothing. The first
	// request of a run, or of a resumed run, is compared with nothing;
	// a driver that takes turns itself (AgentLoop.ModelRequest, as the
	// temporal package does) gets none of these events. It is durable:
	// it explains a run's cost after the run, and comes rarely.
	EventCacheBust EventType = "cache.bust"
	// EventModelDelta: a streamed text delta, in Text.
	EventModelDelta EventType = "model.delta"
	// EventModelReasoningDelta: a streamed delta of the model's visible
	// reasoning, in Text.
	EventModelReasoningDelta EventType = "model.reasoning_delta"
	// EventModelRetry: a model wrapped by [Retry] failed and will be asked
	// again; Attempt says which attempt failed, why, and the wait.
	EventModelRetry EventType = "model.retry"
	// EventModelFallback: a model of a [Fallback] list failed and the
	// next one is asked; Attempt says which failed and why.
	EventModelFallback EventType = "model.fallback"
	// EventTurnSentBack: a [TurnProcessor] sent the turn back to the
	// model; Error holds its reason, and every call of the turn was
	// answered as not run.
	EventTurnSentBack EventType = "turn.sent_back"
	// EventOutputInvalid: the model's final answer did not match
	// AgentLoop.Output's schema; Error holds the validator's message,
	// which the model is sent.
	EventOutputInvalid EventType = "output.invalid"
	// EventModelResponse: the model answered; Response holds the turn, its
	// Message exactly as appended to the transcript.
	EventModelResponse EventType = "model.response"

	// EventStart: a call entered the pipeline; Arguments as the model sent
	// them.
	EventStart EventType = "tool.execution_start"
	// EventArgumentsRepaired: the repairer fixed the arguments; Repairs
	// lists the fixes and Arguments holds the result.
	EventArgumentsRepaired EventType = "tool.arguments_repaired"
	// EventGuardVerdict: the guard decided; Verdict holds the decision.
	EventGuardVerdict EventType = "guard.verdict"
	// EventPermissionRequested: a call awaits an approver or a human.
	EventPermissionRequested EventType = "permission.requested"
	// EventPermissionCompleted: the approval came back, in Approval.
	EventPermissionCompleted EventType = "permission.completed"
	// EventHook: a hook had an effect, described by Hook.
	EventHook EventType = "hook.effect"
	// EventProgress: a running tool reported progress.
	EventProgress EventType = "tool.execution_progress"
	// EventPartialResult: a running tool reported output, in Text.
	EventPartialResult EventType = "tool.execution_partial_result"
	// EventComplete: the call is finished; Result holds what the model
	// sees, Stack the stack of a panic.
	EventComplete EventType = "tool.execution_complete"

	// EventJobStarted: a call started a background job (see [Job]); Job
	// holds it, CallID and Tool name the starting call. The call's
	// tool.execution_complete follows, with the result that says so.
	// The job events carry the starting call's turn (Job.Turn), not the
	// turn the run is in when they come: order them by Time.
	EventJobStarted EventType = "job.started"
	// EventJobOutput: a running job reported output, in Text; rate-limited
	// as partial results are (see Limits.ReportInterval), Coalesced
	// counting the reports joined.
	EventJobOutput EventType = "job.output"
	// EventJobFinished: a job ended, once; Job holds its status, reason
	// and result. Its end reaches the model next: as a user.message with
	// OriginJob at the next safe point, or as the result of the job_wait
	// or job_cancel call that saw it end.
	EventJobFinished EventType = "job.finished"
)

// Transient reports whether events of this type only matter while the run
// is live (start, progress, partial output, deltas) and may be dropped from
// durable logs. Completion, model response and run events are durable.
func (t EventType) Transient() bool {
	switch t {
	case EventStart, EventProgress, EventPartialResult, EventModelDelta, EventModelReasoningDelta, EventModelRequest,
		EventJobOutput:
		return true
	}
	return false
}

// Event is one thing that happened in a run. One struct serves every type;
// the fields a type does not use are zero. Events marshal to JSON for logs.
type Event struct {
	Type  EventType `json:"type"`
	Time  time.Time `json:"time"`
	RunID string    `json:"run_id"`
	Turn  int       `json:"turn"`
	// ParentRunID and ParentCallID are set on the events of a child run
	// (an agent used as a tool, see [AgentTool]) that reach its parent's
	// stream: the parent's run and the call that started the child.
	// ParentCallID alone is set on the events of an inner call (see
	// [Inner], as a code-mode program makes them): the call whose tool
	// made it, in the same run. An inner call's CallID also begins with
	// that call's ID and "/", which is how to find its program among a
	// child run's events, where ParentCallID names the parent's call.
	ParentRunID  string `json:"parent_run_id,omitempty"`
	ParentCallID string `json:"parent_call_id,omitempty"`

	// Tool events.
	CallID     string     `json:"call_id,omitempty"`
	Tool       string     `json:"tool,omitempty"`
	Source     SourceKind `json:"source,omitempty"`
	SourceName string     `json:"source_name,omitempty"`

	Arguments json.RawMessage `json:"arguments,omitempty"`
	Repairs   []string        `json:"repairs,omitempty"`
	Verdict   *Verdict        `json:"verdict,omitempty"`
	Approval  *Approval       `json:"approval,omitempty"`
	Hook      *HookEffect     `json:"hook,omitempty"`
	Progress  *Progress       `json:"progress,omitempty"`
	Result    *ToolResult     `json:"result,omitempty"`
	Stack     string          `json:"stack,omitempty"`

	// Text is a partial output or a model delta (text or reasoning).
	Text string `json:"text,omitempty"`
	// Coalesced, on progress and partial-output events, counts the reports
	// of the tool this event stands for when the loop's rate limit joined
	// several (see Limits.ReportInterval); 0 means one.
	Coalesced int `json:"coalesced,omitempty"`

	// Attempt describes a failed model attempt, on model.retry and
	// model.fallback.
	Attempt *ModelAttempt `json:"attempt,omitempty"`

	// Run and model events.
	Messages   []Message           `json:"messages,omitempty"`
	Response   *Response           `json:"response,omitempty"`
	Pending    []PendingCall       `json:"pending,omitempty"`
	Agents     []PendingCall       `json:"agents,omitempty"`
	Edit       *TranscriptEdit     `json:"edit,omitempty"`
	Approvals  map[string]Approval `json:"approvals,omitempty"`
	StopReason StopReason          `json:"stop_reason,omitempty"`
	Usage      *Usage              `json:"usage,omitempty"`
	// Origin is where the message of a user.message event came from.
	Origin Origin `json:"origin,omitempty"`
	// Interrupt is the interrupt that stopped the run, on run.interrupted,
	// and the one a paused run had not acted on, on run.paused (as
	// PauseState.Interrupt holds it).
	Interrupt *Interrupt `json:"interrupt,omitempty"`
	// Queued, on run.paused, holds the messages sent into the run that
	// were not delivered when it paused (as PauseState.Queued holds them).
	Queued []QueuedMessage `json:"queued,omitempty"`
	// Job is the background job of a job.started or job.finished event,
	// and the one whose end a user.message of OriginJob tells.
	Job *Job `json:"job,omitempty"`
	// CacheBust says why a request's prefix differs from the previous
	// request's, on cache.bust.
	CacheBust *CacheBust `json:"cache_bust,omitempty"`
	// Request describes the request of a model.request event.
	Request *RequestInfo `json:"request,omitempty"`
	// Timing splits the call's time into its stages, on
	// tool.execution_complete.
	Timing *CallTiming `json:"timing,omitempty"`
	// Accounting is what the run has spent, on run.paused, run.limit and
	// run.end.
	Accounting *Accounting `json:"accounting,omitempty"`
	Error      string      `json:"error,omitempty"`
}

// ModelAttempt describes a failed attempt to get a turn from a model.
type ModelAttempt struct {
	// Attempt counts from 1: the attempt of a [Retry] that failed, or on
	// model.fallback the position of the model that failed (Model+1).
	// Model is the index of the model that failed in its [Fallback] list:
	// on model.retry, the innermost list around the Retry (0 for a Retry
	// in no list).
	Attempt int `json:"attempt"`
	Model   int `json:"model"`
	// Error is the attempt's error.
	Error string `json:"error"`
	// Delay, on model.retry, is how long Retry waits before the next
	// attempt.
	Delay time.Duration `json:"delay_ns,omitempty"`
}

// HookEffect describes what a hook did to a call.
type HookEffect struct {
	// Hook is "pre_tool_use", "post_tool_use", "post_tool_use_failure" or
	// "guard"; Index is the hook's position in its list.
	Hook  string `json:"hook"`
	Index int    `json:"index"`
	// Effect is one of deny, modify, context, transform, reject, guidance,
	// error, panic.
	Effect string `json:"effect"`
	Detail string `json:"detail,omitempty"`
}

type eventSinkKey struct{}

// WithEventSink returns a copy of ctx that carries sink, to which model
// wrappers such as [Retry] and [Fallback] report their events. The loop
// sets it on the context of every model turn it takes while anything
// observes the run, filling in each event's run ID, turn and time; a
// driver that calls a Model itself (as the temporal package's model
// activity does) sets it to receive the same events.
func WithEventSink(ctx context.Context, sink func(Event)) context.Context {
	return context.WithValue(ctx, eventSinkKey{}, sink)
}

// emitTo passes e to the event sink ctx carries, if any.
func emitTo(ctx context.Context, e Event) {
	if sink, ok := ctx.Value(eventSinkKey{}).(func(Event)); ok && sink != nil {
		sink(e)
	}
}
