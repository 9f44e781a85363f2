package openai

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// streamed is what a stream yielded.
type streamed struct {
	text, reasoning []string
}

// collectResponses drains a stream: the final response, the deltas, and
// the error, if any.
func collectResponses(m *ResponsesModel, req *toolloop.Request) (*toolloop.Response, streamed, error) {
	var resp *toolloop.Response
	var got streamed
	for ch, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return nil, got, err
		}
		if ch.Text != "" {
			got.text = append(got.text, ch.Text)
		}
		if ch.Reasoning != "" {
			got.reasoning = append(got.reasoning, ch.Reasoning)
		}
		if ch.Response != nil {
			resp = ch.Response
		}
	}
	return resp, got, nil
}

func TestResponsesStreamText(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "responses_stream", Response: rapi("stream_text.sse")})
	resp, got, err := collectResponses(responsesFor(t, srv, Config{}), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, []string{"Hel", "lo", " from", " Zürich", " — ", "東京", "!"}, got.text)
	assert.Empty(t, got.reasoning)
	assert.Equal(t, strings.Join(got.text, ""), resp.Message.Text())
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
	assert.Equal(t, toolloop.Usage{InputTokens: 11, OutputTokens: 8}, resp.Usage)
	assert.Equal(t, "gpt-4.1-2025-04-14", resp.Model)
}

func TestResponsesStreamReasoningAndParallelCalls(t *testing.T) {
	for _, chunk := range []int{1, 7, 4096} {
		srv := serve(t, replay.Step{Response: rapi("stream_reasoning_tool.sse"), Chunk: chunk})
		resp, got, err := collectResponses(responsesFor(t, srv, Config{}), weatherRequest())
		require.NoError(t, err)
		assert.Empty(t, got.text)
		assert.Equal(t, []string{"**Comparing", " two cities**\n\nI need the weather", " in Zürich and Tokyo.", "\n\n", "**Calling", " the tool twice**"}, got.reasoning)
		assert.Equal(t, toolloop.StopToolUse, resp.StopReason)
		require.Len(t, resp.Message.Content, 1)
		block := resp.Message.Content[0]
		assert.Equal(t, toolloop.ContentReasoning, block.Type)
		assert.Equal(t, strings.Join(got.reasoning, ""), block.Text, "the deltas add up to the block")
		assert.Empty(t, resp.Message.Text(), "reasoning is never text")
		require.NotNil(t, block.Reasoning)
		assert.Equal(t, "rs_68a1c3b1d2e38190c1d2e3f405162738", block.Reasoning.ID)
		assert.True(t, strings.HasPrefix(block.Reasoning.Encrypted, "gAAAAAB"), "the encrypted content of the finished item")
		assert.Equal(t, "call_Rt5Wq2Lm8NcX0pVb3KsY7zHe", block.Reasoning.CallID, "tied to the call that follows it")
		require.Len(t, resp.Message.ToolCalls, 2)
		assert.Equal(t, toolloop.ToolCall{ID: "call_Rt5Wq2Lm8NcX0pVb3KsY7zHe", Name: "get_weather",
			Arguments: json.RawMessage(`{"city":"Zürich 🌧"}`)}, resp.Message.ToolCalls[0])
		assert.Equal(t, toolloop.ToolCall{ID: "call_Pn4Xr1Kj7MbW9oUa2JtZ6yGd", Name: "get_weather",
			Arguments: json.RawMessage(`{"city":"東京"}`)}, resp.Message.ToolCalls[1])
		assert.Equal(t, toolloop.Usage{InputTokens: 70, OutputTokens: 240, ReasoningTokens: 192}, resp.Usage)
	}
}

// TestResponsesStreamArgumentDeltas: from a server that sends neither the
// output in its last event nor the arguments in the finished item, the
// arguments are their deltas, reassembled even where a character is split
// between two of them.
func TestResponsesStreamArgumentDeltas(t *testing.T) {
	srv := serve(t, replay.Step{Response: rapi("stream_compat.sse"), Chunk: 3})
	resp, _, err := collectResponses(responsesFor(t, srv, Config{}), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopToolUse, resp.StopReason)
	require.Len(t, resp.Message.ToolCalls, 1)
	assert.Equal(t, toolloop.ToolCall{ID: "call_compat_0001", Name: "get_weather",
		Arguments: json.RawMessage(`{"city":"Zürich 🌧"}`)}, resp.Message.ToolCalls[0])
}

func TestResponsesStreamStops(t *testing.T) {
	tests := []struct {
		response string
		stop     toolloop.StopReason
		text     string
	}{
		{"stream_refusal.sse", toolloop.StopRefusal, "I'm sorry, I can't help with that."},
		{"stream_incomplete.sse", toolloop.StopLength, "The history of Paris begins"},
	}
	for _, tt := range tests {
		t.Run(tt.response, func(t *testing.T) {
			srv := serve(t, replay.Step{Response: rapi(tt.response)})
			resp, got, err := collectResponses(responsesFor(t, srv, Config{}), weatherRequest())
			require.NoError(t, err)
			assert.Equal(t, tt.stop, resp.StopReason)
			assert.Equal(t, tt.text, resp.Message.Text())
			assert.Equal(t, tt.text, strings.Join(got.text, ""))
		})
	}
}

func TestResponsesStreamCutOff(t *testing.T) {
	srv := serve(t, replay.Step{Response: rapi("stream_cut.sse")})
	_, _, err := collectResponses(responsesFor(t, srv, Config{}), weatherRequest())
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestResponsesStreamErrors(t *testing.T) {
	tests := []struct {
		response string
		typ      string
		kind     error
	}{
		{"stream_error.sse", "server_error", nil},
		{"stream_error_nested.sse", "context_length_exceeded", providers.ErrContextLength},
		{"stream_failed.sse", "rate_limit_exceeded", providers.ErrRateLimit},
	}
	for _, tt := range tests {
		t.Run(tt.response, func(t *testing.T) {
			srv := serve(t, replay.Step{Response: rapi(tt.response)})
			_, _, err := collectResponses(responsesFor(t, srv, Config{}), weatherRequest())
			var pe *providers.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.typ, pe.Type)
			assert.Equal(t, 200, pe.StatusCode)
			assert.NotEmpty(t, pe.Message)
			if tt.kind != nil {
				assert.ErrorIs(t, err, tt.kind)
			}
		})
	}
}

func TestResponsesStreamStopsWhenTheConsumerDoes(t *testing.T) {
	srv := serve(t, replay.Step{Response: rapi("stream_text.sse")})
	n := 0
	for ch, err := range responsesFor(t, srv, Config{}).Stream(context.Background(), weatherRequest()) {
		require.NoError(t, err)
		if ch.Text != "" {
			n++
			break
		}
	}
	assert.Equal(t, 1, n)
}
