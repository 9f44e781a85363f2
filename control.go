package toolloop

import (
	"context"
)

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
