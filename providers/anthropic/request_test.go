package anthropic

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// richTranscript has every kind of message and content the mapping knows.
func richTranscript() []toolloop.Message {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	return []toolloop.Message{
		toolloop.SystemMessage("You are terse."),
		{Role: toolloop.RoleUser, Content: []toolloop.Content{
			toolloop.TextContent("What is in these pictures?"),
			toolloop.ImageContent("image/png", png),
			{Type: toolloop.ContentImage, URI: "https://example.com/cat.jpg"},
			toolloop.JSONContent(json.RawMessage(`{"hint":"animals"}`)),
			{Type: toolloop.ContentImage, MIMEType: "image/bmp", Data: []byte("BM")},
		}},
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("Let me look closer.")},
			ToolCalls: []toolloop.ToolCall{
				{ID: "toolu_A", Name: "zoom", Arguments: json.RawMessage(`{"factor":2}`)},
				{ID: "toolu_B", Name: "zoom", Arguments: json.RawMessage(`{"factor": 2,`)},
				{ID: "toolu_C", Name: "list", Arguments: nil},
				{ID: "toolu_D", Name: "describe", Arguments: json.RawMessage(`["not","an","object"]`)},
			},
			StopReason: toolloop.StopToolUse},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_A", Name: "zoom", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.TextContent("zoomed"), toolloop.ImageContent("image/jpeg", []byte("jpeg"))}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_B", Name: "zoom", Status: toolloop.StatusError,
			Content: []toolloop.Content{toolloop.TextContent("arguments are not valid JSON")},
			Error:   &toolloop.ToolError{Kind: toolloop.KindInvalidArgs, Message: "arguments are not valid JSON"}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_C", Name: "list", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`["a","b"]`))}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_D", Name: "describe", Status: toolloop.StatusError,
			Error: &toolloop.ToolError{Kind: toolloop.KindInvalidArgs, Message: "arguments must be an object"}}),
		toolloop.UserMessage("Also, be brief."),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("A cat and a dog.")}, StopReason: toolloop.StopEnd},
		{Role: toolloop.RoleAssistant, StopReason: toolloop.StopLength},
		toolloop.SystemMessage("Answer in English."),
		toolloop.UserMessage("Thanks!"),
	}
}

func TestTranscriptMapping(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "transcript", Response: "plain.json"})
	temp := 0.2
	m := modelFor(t, srv, Config{MaxTokens: 512, Temperature: &temp})
	_, err := m.Generate(context.Background(), &toolloop.Request{Messages: richTranscript()})
	require.NoError(t, err)
}

func TestToolInput(t *testing.T) {
	tests := []struct {
		args    string
		want    string
		wrapped bool
	}{
		{`{"a":1}`, `{"a":1}`, false},
		{` {"a":1} `, `{"a":1}`, false},
		{``, `{}`, false},
		{`null`, `{}`, false},
		{`{"a":`, `{"raw_arguments":"{\"a\":"}`, true},
		{`[1,2]`, `{"raw_arguments":"[1,2]"}`, true},
		{`"text"`, `{"raw_arguments":"\"text\""}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			in, wrapped := toolInput(json.RawMessage(tt.args))
			assert.Equal(t, tt.wrapped, wrapped)
			b, err := json.Marshal(in)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestUnknownRoleIsAnError(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	_, err := m.params(&toolloop.Request{Messages: []toolloop.Message{{Role: "narrator"}}})
	require.Error(t, err)
}

func TestSchemaLoosenedAndLogged(t *testing.T) {
	var logs replay.LogRecorder
	m := mustNew(t, Config{APIKey: "unused", Logger: slog.New(&logs), PromptCache: PromptCache{Off: true}})
	spec := toolloop.ToolSpec{Name: "pick", Description: "Pick one.",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`)}
	p, err := m.params(&toolloop.Request{Tools: []toolloop.ToolSpec{spec}})
	require.NoError(t, err)
	b, err := json.Marshal(p.Tools[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"pick","description":"Pick one.","input_schema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}}`, string(b))
	logged := logs.Attrs(slog.LevelDebug)
	require.Len(t, logged, 1)
	assert.Equal(t, "pick", logged[0]["tool"])
	_, err = m.params(&toolloop.Request{Tools: []toolloop.ToolSpec{spec}})
	require.NoError(t, err)
	assert.Len(t, logs.Attrs(slog.LevelDebug), 1, "a spec is converted and logged once")
}

func TestCachePrompt(t *testing.T) {
	for _, on := range []bool{false, true} {
		m := mustNew(t, Config{APIKey: "unused", CachePrompt: on})
		p, err := m.params(replay.WeatherRequest())
		require.NoError(t, err)
		b, err := json.Marshal(p)
		require.NoError(t, err)
		var body map[string]any
		require.NoError(t, json.Unmarshal(b, &body))
		if on {
			assert.Equal(t, map[string]any{"type": "ephemeral"}, body["cache_control"])
		} else {
			assert.NotContains(t, body, "cache_control")
		}
	}
}
