package openai

import (
	"context"
	"encoding/json"
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
				{ID: "call_A", Name: "zoom", Arguments: json.RawMessage(`{"factor":2}`)},
				{ID: "call_B", Name: "zoom", Arguments: json.RawMessage(`{"factor": 2,`)},
				{ID: "call_C", Name: "list", Arguments: nil},
				{ID: "call_D", Name: "describe", Arguments: json.RawMessage(`{}`)},
			},
			StopReason: toolloop.StopToolUse},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_A", Name: "zoom", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.TextContent("zoomed"), toolloop.ImageContent("image/jpeg", []byte("jpeg"))}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_B", Name: "zoom", Status: toolloop.StatusError,
			Content: []toolloop.Content{toolloop.TextContent("arguments are not valid JSON")},
			Error:   &toolloop.ToolError{Kind: toolloop.KindInvalidArgs, Message: "arguments are not valid JSON"}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_C", Name: "list", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`["a","b"]`))}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_D", Name: "describe", Status: toolloop.StatusOK}),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("A cat and a dog.")}, StopReason: toolloop.StopEnd},
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

func TestToolResultText(t *testing.T) {
	tests := []struct {
		name   string
		result toolloop.ToolResult
		want   string
		images int
	}{
		{"text", toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("ok")}}, "ok", 0},
		{"empty", toolloop.ToolResult{Status: toolloop.StatusOK}, noOutput, 0},
		{"error", *toolloop.ErrorResult(toolloop.Errorf(toolloop.KindTimeout, "took too long")), "Error: took too long", 0},
		{"error without content", toolloop.ToolResult{Status: toolloop.StatusError, Error: &toolloop.ToolError{Kind: toolloop.KindDenied, Message: "no"}}, "Error: no", 0},
		{"json", toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"a":1}`))}}, `{"a":1}`, 0},
		{"image", toolloop.ToolResult{CallID: "c1", Name: "shot", Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.ImageContent("image/png", []byte{1})}},
			"[1 image(s) attached in the next user message]", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, images := toolResult(&tt.result)
			assert.Equal(t, tt.want, text)
			assert.Len(t, images, tt.images)
		})
	}
}

func TestUnknownRoleIsAnError(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	_, err := m.params(&toolloop.Request{Messages: []toolloop.Message{{Role: "narrator"}}})
	require.Error(t, err)
}
