package anthropic

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

// collect drains a stream: the final response, the text deltas, and the
// error, if any.
func collect(m *Model, req *toolloop.Request) (*toolloop.Response, []string, error) {
	var resp *toolloop.Response
	var deltas []string
	for ch, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return nil, deltas, err
		}
		if ch.Text != "" {
			deltas = append(deltas, ch.Text)
		}
		if ch.Response != nil {
			resp = ch.Response
		}
	}
	return resp, deltas, nil
}

func TestStreamText(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "stream", Response: "stream_text.sse"})
	resp, deltas, err := collect(modelFor(t, srv, Config{}), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, []string{"Hel", "lo", " from", " Zürich", " — ", "東京", "!"}, deltas)
	assert.Equal(t, strings.Join(deltas, ""), resp.Message.Text())
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
	assert.Equal(t, toolloop.Usage{InputTokens: 11, OutputTokens: 8}, resp.Usage)
	assert.Equal(t, "claude-sonnet-4-5-20250929", resp.Model)
}

func TestStreamToolArgumentsSplitMidToken(t *testing.T) {
	for _, chunk := range []int{1, 7, 4096} {
		srv := serve(t, replay.Step{Golden: "stream", Response: "stream_tool_args.sse", Chunk: chunk})
		resp, deltas, err := collect(modelFor(t, srv, Config{}), weatherRequest())
		require.NoError(t, err)
		assert.Equal(t, []string{"Checking both."}, deltas)
		assert.Equal(t, toolloop.StopToolUse, resp.StopReason)
		require.Len(t, resp.Message.ToolCalls, 2)
		assert.Equal(t, toolloop.ToolCall{ID: "toolu_01Rt5Wq2Lm8NcX0pVb3KsY7z", Name: "get_weather",
			Arguments: json.RawMessage(`{"city":"Zürich 🌧"}`)}, resp.Message.ToolCalls[0])
		assert.Equal(t, toolloop.ToolCall{ID: "toolu_01Pn4Xr1Kj7MbW9oUa2JtZ6y", Name: "get_weather",
			Arguments: json.RawMessage(`{"city":"東京"}`)}, resp.Message.ToolCalls[1])
		assert.Equal(t, toolloop.Usage{InputTokens: 70, OutputTokens: 40}, resp.Usage)
	}
}

func TestStreamStops(t *testing.T) {
	tests := []struct {
		response string
		stop     toolloop.StopReason
		text     string
		calls    []toolloop.ToolCall
	}{
		{"stream_refusal.sse", toolloop.StopRefusal, "I can help with part of that. Let me", nil},
		{"stream_length.sse", toolloop.StopLength, "The history of Paris begins", nil},
		{"stream_cut_tool.sse", toolloop.StopLength, "", []toolloop.ToolCall{
			{ID: "toolu_01Ks2Yq8Ov9PcX1qWc4LtZ8a", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Par`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.response, func(t *testing.T) {
			srv := serve(t, replay.Step{Response: tt.response})
			resp, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
			require.NoError(t, err)
			assert.Equal(t, tt.stop, resp.StopReason)
			assert.Equal(t, tt.text, resp.Message.Text())
			assert.Equal(t, tt.calls, resp.Message.ToolCalls)
		})
	}
}

func TestStreamCutOff(t *testing.T) {
	srv := serve(t, replay.Step{Response: "stream_cut.sse"})
	_, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestStreamErrorEvent(t *testing.T) {
	srv := serve(t, replay.Step{Response: "stream_error.sse"})
	_, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
	require.ErrorIs(t, err, providers.ErrOverloaded)
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "overloaded_error", pe.Type)
}

func TestStreamStopsWhenTheConsumerDoes(t *testing.T) {
	srv := serve(t, replay.Step{Response: "stream_text.sse"})
	n := 0
	for ch, err := range modelFor(t, srv, Config{}).Stream(context.Background(), weatherRequest()) {
		require.NoError(t, err)
		if ch.Text != "" {
			n++
			break
		}
	}
	assert.Equal(t, 1, n)
}
