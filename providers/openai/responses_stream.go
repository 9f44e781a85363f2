package openai

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// stream runs one streamed request and yields its chunks.
func (m *ResponsesModel) stream(ctx context.Context, params responses.ResponseNewParams, yield func(toolloop.Chunk, error) bool) {
	s := m.client.Responses.NewStreaming(ctx, params)
	ok := s.Next()
	if !ok && m.retryWithoutEncrypted(s.Err(), &params) {
		s.Close()
		s = m.client.Responses.NewStreaming(ctx, params)
		ok = s.Next()
	}
	defer s.Close()

	var st responsesStream
	for ; ok; ok = s.Next() {
		ev := s.Current()
		chunk, err := st.add(&ev)
		if err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		if (chunk.Text != "" || chunk.Reasoning != "") && !yield(chunk, nil) {
			return
		}
		if st.final != nil {
			break
		}
	}
	if err := s.Err(); err != nil {
		yield(toolloop.Chunk{}, mapError(err))
		return
	}
	if st.final == nil {
		yield(toolloop.Chunk{}, fmt.Errorf("openai: the stream ended before the response did: %w", io.ErrUnexpectedEOF))
		return
	}
	if len(st.final.Output) == 0 && len(st.done) > 0 {
		// Some servers leave the output out of the last event: it is the
		// items they finished along the way.
		for _, i := range slices.Sorted(maps.Keys(st.done)) {
			st.final.Output = append(st.final.Output, st.done[i])
		}
	}
	resp, err := m.response(st.final, st.args)
	if err != nil {
		yield(toolloop.Chunk{}, err)
		return
	}
	yield(toolloop.Chunk{Response: resp}, nil)
}

// responsesStream is what a stream has told so far.
type responsesStream struct {
	// final is the response of the terminal event.
	final *responses.Response
	// done holds the finished output items by output index.
	done map[int64]responses.ResponseOutputItemUnion
	// args holds function call arguments by item ID, from their deltas.
	args map[string]*wire.Fragments
	// reasoned is set once a reasoning delta was yielded.
	reasoned bool
}

// add takes one event and returns the chunk it makes, if any.
func (st *responsesStream) add(ev *responses.ResponseStreamEventUnion) (toolloop.Chunk, error) {
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		return toolloop.Chunk{Text: ev.Delta}, nil
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		st.reasoned = st.reasoned || ev.Delta != ""
		return toolloop.Chunk{Reasoning: ev.Delta}, nil
	case "response.reasoning_summary_part.added":
		// The final block joins the parts with a blank line; so do the
		// deltas, so that they add up to its text.
		if st.reasoned {
			return toolloop.Chunk{Reasoning: "\n\n"}, nil
		}
	case "response.function_call_arguments.delta":
		if st.args == nil {
			st.args = map[string]*wire.Fragments{}
		}
		f := st.args[ev.ItemID]
		if f == nil {
			f = new(wire.Fragments)
			st.args[ev.ItemID] = f
		}
		f.Add(ev.JSON.Delta.Raw(), ev.Delta)
	case "response.output_item.done":
		if st.done == nil {
			st.done = map[int64]responses.ResponseOutputItemUnion{}
		}
		st.done[ev.OutputIndex] = ev.Item
	case "response.completed", "response.incomplete", "response.failed":
		r := ev.Response
		st.final = &r
	case "error":
		// An error event without an error object (those are the SDK's
		// StreamError): its code and message are at the top.
		return toolloop.Chunk{}, classify(&providers.Error{
			Provider:   "openai",
			StatusCode: http.StatusOK,
			Type:       ev.Code,
			Message:    ev.Message,
			Err:        &ssestream.StreamError{Message: "received error while streaming: " + ev.RawJSON()},
		}, ev.Code, "")
	}
	return toolloop.Chunk{}, nil
}
