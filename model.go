package toolloop

import (
	"context"
	"iter"
)

// Request is what the loop sends the model each turn.
type Request struct {
	// Messages is the whole transcript so far.
	Messages []Message `json:"messages"`
	// Tools are the specs of every tool the model may call, sorted by name.
	Tools []ToolSpec `json:"tools,omitempty"`
	// ToolChoice says whether the model may, must or must not call tools;
	// the zero value leaves it to the model.
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// Output, if set, asks for a final answer that is JSON of its schema,
	// as the provider's native structured output: see [NativeOutput].
	// Providers that cannot send it fail the request.
	Output *OutputFormat `json:"output,omitempty"`
}

// ToolChoiceMode is the mode of a [ToolChoice].
type ToolChoiceMode string

// ToolChoice says whether the model may, must or must not call tools.
// Every provider maps it to its API's own tool choice.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	// Name, with ToolChoiceRequired, is the one tool the model must call.
	Name string `json:"name,omitempty"`
}

// Response is the model's answer to a [Request].
type Response struct {
	// Message is the assistant message.
	Message Message `json:"message"`
	// StopReason says why the turn ended. If it is empty the loop infers it:
	// tool_use when Message has tool calls, stop otherwise.
	StopReason StopReason `json:"stop_reason"`
	Usage      Usage      `json:"usage"`
	// Model names the model that answered, as the provider reports it.
	Model string `json:"model,omitempty"`
}

// Model is a language model behind some provider. It is the only thing the
// loop knows about providers.
//
// Generate must honour ctx, must not keep req or its slices after it
// returns, and must be safe to call again after it returns an error. A
// provider failure is a Go error; a refusal is a Response with
// [StopRefusal]. Use looptest.TestModel to check an implementation, and
// providers/providertest.Run to check a provider against its wire format.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Chunk is one piece of a streamed turn. Text and reasoning chunks arrive
// while the model writes; the last chunk carries the assembled Response.
type Chunk struct {
	// Text is a text delta.
	Text string
	// Reasoning is a delta of the model's visible (or summarized)
	// reasoning text. The assembled Response holds it as reasoning blocks.
	Reasoning string
	// Response is set on the final chunk only: the whole turn, with tool
	// call arguments fully reassembled.
	Response *Response
}

// Streamer is an optional ability of a [Model]: it streams a turn. The loop
// uses Stream instead of Generate when a model has it, reporting text
// deltas as [EventModelDelta] events and reasoning deltas as
// [EventModelReasoningDelta] events. The sequence must end with a chunk
// whose Response is set, or yield an error.
type Streamer interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// ModelFunc adapts a function to the [Model] interface.
type ModelFunc func(ctx context.Context, req *Request) (*Response, error)

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req *Request) (*Response, error) {
	return f(ctx, req)
}

// NativeOutput is an optional ability of a [Model]: it reports whether its
// provider can be given Request.Output as native structured output, in a
// request that also offers tools when withTools is set. A model that lacks
// it, or answers false, is asked for its final answer through a tool the
// loop adds (see [AgentLoop.Output]).
type NativeOutput interface {
	NativeOutput(withTools bool) bool
}
