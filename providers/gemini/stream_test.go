package gemini

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

// collect drains a stream: the final response, the text and reasoning
// deltas, and the error, if any.
func collect(m *Model, req *toolloop.Request) (resp *toolloop.Response, texts, thoughts []string, err error) {
	for ch, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return nil, texts, thoughts, err
		}
		if ch.Text != "" {
			texts = append(texts, ch.Text)
		}
		if ch.Reasoning != "" {
			thoughts = append(thoughts, ch.Reasoning)
		}
		if ch.Response != nil {
			resp = ch.Response
		}
	}
	return resp, texts, thoughts, nil
}

func TestStreamText(t *testing.T) {
	for _, chunk := range []int{1, 7, 4096} {
		srv := serve(t, replay.Step{Golden: "stream", Response: "stream_text.sse", Chunk: chunk})
		resp, texts, thoughts, err := collect(modelFor(t, srv, Config{}), weatherRequest())
		require.NoError(t, err)
		assert.Equal(t, []string{"Hello from", " Zürich — 東京", "!"}, texts)
		assert.Empty(t, thoughts)
		assert.Equal(t, []toolloop.Content{text(strings.Join(texts, ""))}, resp.Message.Content, "the pieces make one block")
		assert.Equal(t, toolloop.StopEnd, resp.StopReason)
		assert.Equal(t, toolloop.Usage{InputTokens: 11, OutputTokens: 8 + 30, ReasoningTokens: 30}, resp.Usage)
		assert.Equal(t, "gemini-2.5-flash", resp.Model)
		reqs := srv.Requests()
		assert.Equal(t, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", reqs[len(reqs)-1].URL.Path)
		assert.Equal(t, "sse", reqs[len(reqs)-1].URL.Query().Get("alt"))
	}
}

func TestStreamThoughts(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "stream_thoughts", Response: "stream_thoughts.sse"})
	level := "high"
	resp, texts, thoughts, err := collect(modelFor(t, srv, Config{Model: "gemini-3-pro-preview", ThinkingLevel: level, IncludeThoughts: true}), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, []string{"**Planning the answer**\n\nThe user asks", " for a haiku about rain; five, seven, five."}, thoughts)
	assert.Equal(t, []string{"Soft rain on the roofs,\n", "Paris hums beneath grey skies —\nthe Seine keeps the time."}, texts)
	assert.Equal(t, []toolloop.Content{
		thought(strings.Join(thoughts, ""), ""),
		text(strings.Join(texts, "")),
		sig(sigStream, ""),
	}, resp.Message.Content, "the signature of the last, empty piece belongs to the text before it")
	assert.Equal(t, strings.Join(texts, ""), resp.Message.Text(), "reasoning is never text")
	assert.Equal(t, toolloop.Usage{InputTokens: 40, OutputTokens: 19 + 210, ReasoningTokens: 210}, resp.Usage)
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
}

func TestStreamParallelCalls(t *testing.T) {
	for _, chunk := range []int{1, 7, 4096} {
		srv := serve(t, replay.Step{Response: "stream_parallel.sse", Chunk: chunk})
		resp, texts, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
		require.NoError(t, err)
		assert.Equal(t, []string{"Checking both."}, texts)
		assert.Equal(t, toolloop.StopToolUse, resp.StopReason)
		id1, id2 := "gemini-call-3wnYaIPGL4bVz7IPuK-x8Qw-1", "gemini-call-3wnYaIPGL4bVz7IPuK-x8Qw-2"
		assert.Equal(t, []toolloop.ToolCall{
			{ID: id1, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Zürich 🌧"}`)},
			{ID: id2, Name: "get_weather", Arguments: json.RawMessage(`{"city":"東京"}`)},
		}, resp.Message.ToolCalls)
		assert.Equal(t, []toolloop.Content{text("Checking both."), sig(sigParallel, id1)}, resp.Message.Content)
		assert.Equal(t, toolloop.Usage{InputTokens: 62, OutputTokens: 40 + 96, ReasoningTokens: 96}, resp.Usage)
	}
}

func TestStreamSafety(t *testing.T) {
	srv := serve(t, replay.Step{Response: "stream_safety.sse"})
	resp, _, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopRefusal, resp.StopReason)
	assert.Equal(t, "I can help with part of that. Let me\n\n[The answer was withheld by the provider's content filters (finish reason: SAFETY).]", resp.Message.Text())
}

func TestStreamCutOff(t *testing.T) {
	srv := serve(t, replay.Step{Response: "stream_cut.sse"})
	_, _, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestStreamErrorEvent(t *testing.T) {
	srv := serve(t, replay.Step{Response: "stream_error.sse"})
	_, texts, _, err := collect(modelFor(t, srv, Config{}), weatherRequest())
	assert.Equal(t, []string{"Hello"}, texts)
	require.ErrorIs(t, err, providers.ErrOverloaded)
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "UNAVAILABLE", pe.Type)
	assert.Equal(t, 503, pe.StatusCode)
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
