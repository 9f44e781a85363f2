package openai

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// The texts of the Mistral recordings.
const (
	mistralThinking = "The tool says Paris is at 18 °C with light rain. The user asked for the weather, so a short answer with both will do."
	mistralAnswer   = "It's 18 °C in Paris, with light rain."
)

// mistralExtra is the Extra of the thinking a model talking to srv keeps.
func mistralExtra(t *testing.T, srv *replay.Server) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(chatExtra{Server: serverOf(srv.URL), Field: fieldContent, Chunk: chunkThinking})
	require.NoError(t, err)
	return b
}

// TestGenerateMistralThinking reads a magistral answer whose content is a
// list of chunks: the thinking becomes a reasoning block, the text the
// answer, and no chunk's JSON shows up as text.
func TestGenerateMistralThinking(t *testing.T) {
	srv := serve(t, replay.Step{Response: "mistral_thinking.json"})
	got, err := modelFor(t, srv, Config{Model: "magistral-medium-latest"}).Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	want := toolloop.Response{
		Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
			toolloop.ReasoningContent(mistralThinking, toolloop.Reasoning{Provider: "openai.chat", Extra: mistralExtra(t, srv)}),
			toolloop.TextContent(mistralAnswer),
		}},
		StopReason: toolloop.StopEnd,
		Usage:      toolloop.Usage{InputTokens: 142, OutputTokens: 159},
		Model:      "magistral-medium-2509",
	}
	assert.JSONEq(t, replay.JSON(t, want), replay.JSON(t, got))
	assert.Equal(t, mistralAnswer, got.Message.Text())
}

// TestStreamMistralThinking streams the same answer: thinking chunks
// arrive as reasoning deltas, the text (a list, then plain strings) as
// text deltas, and the turn is the one Generate reads.
func TestStreamMistralThinking(t *testing.T) {
	for _, chunk := range []int{1, 7, 4096} {
		srv := serve(t, replay.Step{Response: "mistral_thinking.sse", Chunk: chunk})
		resp, text, reasoning := collectAll(t, modelFor(t, srv, Config{Model: "magistral-medium-latest"}), replay.WeatherRequest())
		assert.Equal(t, []string{"It's 18", " °C in Paris,", " with light rain."}, text)
		assert.Equal(t, []string{"The tool says Paris", " is at 18 °C with light rain.", " The user asked for the weather,", " so a short answer with both will do."}, reasoning)
		want := toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
			toolloop.ReasoningContent(mistralThinking, toolloop.Reasoning{Provider: "openai.chat", Extra: mistralExtra(t, srv)}),
			toolloop.TextContent(mistralAnswer),
		}}
		assert.JSONEq(t, replay.JSON(t, want), replay.JSON(t, resp.Message))
		assert.Equal(t, toolloop.StopEnd, resp.StopReason)
		assert.Equal(t, toolloop.Usage{InputTokens: 142, OutputTokens: 159}, resp.Usage)
	}
}

// TestAgentLoopMistral runs two magistral turns, streamed: the first
// thinks and calls a tool, and the second request sends that thinking
// back as a thinking chunk of the assistant message's content, where
// Mistral's API takes it.
func TestAgentLoopMistral(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "mistral_turn1", Response: "mistral_tool_call.sse"},
		replay.Step{Golden: "mistral_turn2", Response: "mistral_thinking.sse"},
	)
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{Model: modelFor(t, srv, Config{Model: "magistral-medium-latest"}), Tools: replay.WeatherTools(), OnEvent: rec.Record}
	res, err := loop.Run(context.Background(), []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant. Use the tools."),
		toolloop.UserMessage("What's the weather in Paris?"),
	})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, 2, res.Turns)
	assert.Equal(t, mistralAnswer, res.FinalText)
	assert.Equal(t, toolloop.Usage{InputTokens: 96 + 142, OutputTokens: 82 + 159}, res.Usage)
	assert.Len(t, rec.Of(toolloop.EventModelReasoningDelta), 4+4)

	msgs := sentMessages(t, srv.Bodies()[1])
	require.Len(t, msgs, 4)
	assert.Equal(t, []any{map[string]any{"type": "thinking", "thinking": []any{map[string]any{"type": "text",
		"text": "The user wants the weather in Paris. I have get_weather, which takes a city, so I'll call it."}}}},
		msgs[2]["content"], "the thinking goes back as a chunk of the content")
	assert.NotContains(t, msgs[2], "reasoning_content")
}

// TestContentChunks reads content lists of every kind the package knows,
// and some it does not: those are skipped and logged at debug level.
func TestContentChunks(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    chunked
		skipped []string
	}{{
		name:    "thinking then text",
		content: `[{"type":"thinking","thinking":[{"type":"text","text":"Hmm."}]},{"type":"text","text":"Yes."}]`,
		want:    chunked{text: "Yes.", reasoning: "Hmm.", kind: "thinking"},
	}, {
		name:    "thinking as a string, closed",
		content: `[{"type":"thinking","thinking":"Hmm.","closed":true},{"type":"text","text":"Yes."}]`,
		want:    chunked{text: "Yes.", reasoning: "Hmm.", kind: "thinking"},
	}, {
		name:    "reasoning text and refusal",
		content: `[{"type":"reasoning_text","text":"Not this."},{"type":"refusal","refusal":"I can't help with that."}]`,
		want:    chunked{refusal: "I can't help with that.", reasoning: "Not this.", kind: "reasoning_text"},
	}, {
		name:    "unknown chunks skipped",
		content: `[{"type":"reference","reference_ids":[0,2]},{"type":"text","text":"Per the docs."},{"type":"image_url","image_url":"https://example.com/a.png"},"stray"]`,
		want:    chunked{text: "Per the docs."},
		skipped: []string{"reference", "image_url"},
	}, {
		name:    "empty list",
		content: `[]`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs replay.LogRecorder
			m := mustNew(t, Config{APIKey: "test-key", Logger: slog.New(&logs)})
			got, ok := m.readChunks(tt.content)
			require.True(t, ok)
			assert.Equal(t, tt.want, got)
			var types []string
			for _, a := range logs.Attrs(slog.LevelDebug) {
				if a["type"] != "" {
					types = append(types, a["type"])
				}
			}
			assert.Equal(t, tt.skipped, types)
		})
	}
	m := mustNew(t, Config{APIKey: "test-key"})
	for _, raw := range []string{`"plain text"`, `null`, ``} {
		_, ok := m.readChunks(raw)
		assert.False(t, ok, "%s is not a list", raw)
	}
}

// TestContentChunksRefusal checks that a refusal chunk makes the turn a
// refusal, with its text, as a refusal field does.
func TestContentChunksRefusal(t *testing.T) {
	var cc oai.ChatCompletion
	require.NoError(t, json.Unmarshal([]byte(`{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop",
		"message":{"role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}}]}`), &cc))
	m := mustNew(t, Config{APIKey: "test-key"})
	resp, err := m.response(&cc, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopRefusal, resp.StopReason)
	assert.Equal(t, "I can't help with that.", resp.Message.Text())
}

// TestContentChunksNotSentBack checks that reasoning which came in chunks
// other than Mistral's thinking is kept but never sent back.
func TestContentChunksNotSentBack(t *testing.T) {
	m := mustNew(t, Config{APIKey: "test-key", BaseURL: "http://localhost:8000/v1"})
	extra, err := json.Marshal(chatExtra{Server: m.server, Field: fieldContent, Chunk: chunkReasoningText})
	require.NoError(t, err)
	req := replay.WeatherRequest()
	req.Messages = append(req.Messages, toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
		toolloop.ReasoningContent("Not this.", toolloop.Reasoning{Provider: "openai.chat", Extra: extra}),
		toolloop.TextContent("Sure."),
	}}, toolloop.UserMessage("Thanks."))
	p, err := m.params(req)
	require.NoError(t, err)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "Not this.")
	assert.Equal(t, "Sure.", sentMessages(t, b)[2]["content"])
}
