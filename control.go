package toolloop

import (
	"context"
	"encoding/json"
)

// ToolInfo is a registered tool as the loop's tool filters see it: its
// spec and where it comes from.
type ToolInfo struct {
	ToolSpec
	// Source and SourceName say where the tool comes from.
	Source     SourceKind `json:"source"`
	SourceName string     `json:"source_name,omitempty"`
}

// ToolSelector picks tools by what they are, for [AgentLoop.Deferred] and
// for building a [ToolFilter]. Use [SelectNames], [SelectSources],
// [SelectAnnotations], or any function.
type ToolSelector func(t *ToolInfo) bool

// ToolFilter decides, before each model turn, which tools the model is
// sent: it reports whether t goes out on the turn st describes. It sees
// every registered tool once per turn, so it must be cheap; it runs on the
// loop's goroutine and must not keep st.
type ToolFilter func(st *TurnState, t *ToolInfo) bool

// TurnState is what a [ToolFilter] and a [BeforeModelHook] know of the run
// when a model turn is about to be asked for.
type TurnState struct {
	RunID string
	// Turn is the turn about to be taken, counting from 1.
	Turn int
	// Messages is the transcript the model will be sent. Do not modify it.
	Messages []Message
	// Loaded holds the deferred tools the model has loaded with the tool
	// search tool, by name.
	Loaded map[string]bool
}

// ModelTurn is a model turn about to be taken: what a [BeforeModelHook]
// may edit and an [AfterModelHook] sees.
type ModelTurn struct {
	TurnState
	// Request is what the model will be sent. A before-model hook may
	// change it (its messages, tools, tool choice or output format); the
	// loop's transcript is not changed.
	Request *Request
}

// BeforeModelHook runs before every model turn, in order. It may inspect
// or edit turn.Request. An error (or a panic) ends the run with an error
// that wraps it.
type BeforeModelHook func(ctx context.Context, turn *ModelTurn) error

// AfterModelHook runs on every model response, in order, before the loop
// reads it. It returns nil to keep resp (which it may have changed) or a
// replacement; an error (or a panic) rejects the response and ends the
// run with an error that wraps it.
type AfterModelHook func(ctx context.Context, turn *ModelTurn, resp *Response) (*Response, error)

// TurnBatch is the batch of calls of one assistant turn, as a
// [TurnProcessor] sees it before any of them runs.
type TurnBatch struct {
	RunID string
	Turn  int
	// Messages is the transcript, ending with the assistant message
	// whose calls these are. Do not modify it.
	Messages []Message
	// Calls are the turn's calls, in order.
	Calls []ToolCall
	// Retries counts the times this turn was sent back already.
	Retries int
}

// TurnDecision is what a [TurnProcessor] decided about a batch. The zero
// value runs every call as usual.
type TurnDecision struct {
	// Results answers calls without running them, by call ID: each such
	// call skips the pipeline and its result is marked Meta.Synthesized.
	// A result's CallID and Name are set by the loop.
	Results map[string]*ToolResult
	// SendBack, if not empty, sends the turn back to the model with this
	// reason instead of running it: every call is answered as not run,
	// saying why, and the model is asked for another turn. It is bounded
	// by Budget.MaxSendBacks.
	SendBack string
}

// TurnProcessor acts on the whole batch of calls of one assistant turn,
// before any of them runs. Processors run in order; a later one sees the
// calls an earlier one left to run. An error (or a panic) is logged and
// the processor's decision ignored.
type TurnProcessor func(ctx context.Context, batch *TurnBatch) (TurnDecision, error)

// OutputFormat asks the model for a final answer that is JSON of a given
// schema. See [AgentLoop.Output] and [RunTyped].
type OutputFormat struct {
	// Name names the format for providers that want one (1 to 64 of a-z,
	// A-Z, 0-9, _ and -); empty means "final_answer".
	Name string `json:"name,omitempty"`
	// Description tells the model what the answer is.
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the answer: an object.
	Schema json.RawMessage `json:"schema"`
}

// NativeOutput is an optional ability of a [Model]: it reports whether its
// provider can be given Request.Output as native structured output, in a
// request that also offers tools when withTools is set. A model that lacks
// it, or answers false, is asked for its final answer through a tool the
// loop adds (see [AgentLoop.Output]).
type NativeOutput interface {
	NativeOutput(withTools bool) bool
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
