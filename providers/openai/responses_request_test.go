package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// ownReasoning returns a reasoning block of the Responses API, as the
// model would have made it.
func ownReasoning(id, summary, encrypted, callID string) toolloop.Content {
	extra, _ := json.Marshal(reasoningExtra{Summary: []reasoningPart{{Type: "summary_text", Text: summary}}})
	return toolloop.ReasoningContent(summary, toolloop.Reasoning{Provider: ResponsesProvider, ID: id,
		Encrypted: encrypted, Summary: true, CallID: callID, Extra: extra})
}

// responsesTranscript has every kind of message and content the Responses
// mapping knows, reasoning of its own and of another provider included.
func responsesTranscript() []toolloop.Message {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	return []toolloop.Message{
		toolloop.SystemMessage("You are terse."),
		toolloop.SystemMessage("Answer in English."),
		{Role: toolloop.RoleUser, Content: []toolloop.Content{
			toolloop.TextContent("What is in these pictures?"),
			toolloop.ImageContent("image/png", png),
			{Type: toolloop.ContentImage, URI: "https://example.com/cat.jpg"},
			toolloop.JSONContent(json.RawMessage(`{"hint":"animals"}`)),
			{Type: toolloop.ContentImage, MIMEType: "image/bmp", Data: []byte("BM")},
		}},
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
			ownReasoning("rs_1", "Look first.", "enc_1", ""),
			toolloop.TextContent("Let me look closer."),
			ownReasoning("rs_2", "Zoom on the cat.", "enc_2", "call_A"),
			ownReasoning("rs_3", "Without encrypted content.", "", "call_B"),
			ownReasoning("rs_4", "Describe it.", "enc_4", "call_D"),
			toolloop.ReasoningContent("Anthropic's thoughts.", toolloop.Reasoning{Provider: "anthropic", Signature: "sig"}),
		},
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
		toolloop.SystemMessage("The user may ask for more."),
		toolloop.UserMessage("Thanks!"),
	}
}

// TestResponsesTranscriptMapping checks the whole mapping against its
// golden body: leading system messages as instructions, a later one in
// place, images as input_image, reasoning items in their place (the one
// without encrypted content dropped, another provider's too), tool results
// with images as output parts, and the configuration.
func TestResponsesTranscriptMapping(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "responses_transcript", Response: rapi("text.json")})
	temp := 0.2
	m := responsesFor(t, srv, Config{Model: "gpt-5", MaxTokens: 512, Temperature: &temp, Strict: true,
		ReasoningEffort: "high", ReasoningSummary: "detailed"})
	tools := []toolloop.ToolSpec{
		replay.WeatherTool,
		{Name: "zoom", Description: "Zoom in.", InputSchema: json.RawMessage(`{"type":"object","properties":{"factor":{"type":"number"}}}`)},
	}
	_, err := m.Generate(context.Background(), &toolloop.Request{Messages: responsesTranscript(), Tools: tools})
	require.NoError(t, err)
}

// inputTypes returns the type of each input item, and the IDs of the
// reasoning items.
func inputTypes(t *testing.T, m *ResponsesModel, msgs []toolloop.Message) (types, reasoning []string) {
	t.Helper()
	p, err := m.params(&toolloop.Request{Messages: msgs})
	require.NoError(t, err)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	var body struct {
		Input []struct {
			Type string `json:"type"`
			Role string `json:"role"`
			ID   string `json:"id"`
		} `json:"input"`
	}
	require.NoError(t, json.Unmarshal(b, &body))
	for _, in := range body.Input {
		types = append(types, in.Type+in.Role)
		if in.Type == "reasoning" {
			reasoning = append(reasoning, in.ID)
		}
	}
	return types, reasoning
}

// TestResponsesReasoningOrder: reasoning blocks go back where the model
// produced them, before the call each is tied to, and in content order
// otherwise; a tie to a call the message no longer has keeps the block in
// its place.
func TestResponsesReasoningOrder(t *testing.T) {
	m := mustNewResponses(t, Config{APIKey: "unused"})
	msg := toolloop.Message{Role: toolloop.RoleAssistant,
		Content: []toolloop.Content{
			ownReasoning("rs_a", "a", "enc", "call_2"),
			ownReasoning("rs_b", "b", "enc", ""),
			toolloop.TextContent("Working."),
			ownReasoning("rs_c", "c", "enc", "call_1"),
			ownReasoning("rs_d", "d", "enc", "call_gone"),
		},
		ToolCalls: []toolloop.ToolCall{{ID: "call_1", Name: "f"}, {ID: "call_2", Name: "f"}},
	}
	types, ids := inputTypes(t, m, []toolloop.Message{toolloop.UserMessage("go"), msg})
	assert.Equal(t, []string{"user", "reasoning", "assistant", "reasoning", "reasoning", "function_call", "reasoning", "function_call"}, types)
	assert.Equal(t, []string{"rs_b", "rs_d", "rs_c", "rs_a"}, ids)
}

// TestResponsesStoreSendsReasoningWithoutEncryptedContent: with Store, a
// reasoning block without encrypted content goes back by its ID (the API
// kept it); without, it cannot, and is dropped.
func TestResponsesStoreSendsReasoningWithoutEncryptedContent(t *testing.T) {
	msgs := []toolloop.Message{
		toolloop.UserMessage("go"),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{ownReasoning("rs_1", "plan", "", ""), toolloop.TextContent("Done.")}},
	}
	_, ids := inputTypes(t, mustNewResponses(t, Config{APIKey: "unused", Store: true}), msgs)
	assert.Equal(t, []string{"rs_1"}, ids)
	_, ids = inputTypes(t, mustNewResponses(t, Config{APIKey: "unused"}), msgs)
	assert.Empty(t, ids)

	p, err := mustNewResponses(t, Config{APIKey: "unused", Store: true}).params(&toolloop.Request{Messages: msgs})
	require.NoError(t, err)
	assert.True(t, p.Store.Value)
}

func TestResponsesFunctionOutput(t *testing.T) {
	tests := []struct {
		name   string
		result toolloop.ToolResult
		want   string
	}{
		{"text", toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("ok")}}, `"ok"`},
		{"empty", toolloop.ToolResult{Status: toolloop.StatusOK}, `"(no output)"`},
		{"error", *toolloop.ErrorResult(toolloop.Errorf(toolloop.KindTimeout, "took too long")), `"Error: took too long"`},
		{"error without content", toolloop.ToolResult{Status: toolloop.StatusError, Error: &toolloop.ToolError{Kind: toolloop.KindDenied, Message: "no"}}, `"Error: no"`},
		{"json", toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"a":1}`))}}, `"{\"a\":1}"`},
		{"image", toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{
			toolloop.TextContent("shot:"), toolloop.ImageContent("image/png", []byte{1})}},
			`[{"type":"input_text","text":"shot:"},{"type":"input_image","image_url":"data:image/png;base64,AQ==","detail":"auto"}]`},
		{"image of a failure", toolloop.ToolResult{Status: toolloop.StatusError, Error: &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "crashed"},
			Content: []toolloop.Content{toolloop.ImageContent("image/png", []byte{1})}},
			`[{"type":"input_text","text":"Error: crashed"},{"type":"input_image","image_url":"data:image/png;base64,AQ==","detail":"auto"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(functionOutput(&tt.result))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestResponsesUnknownRoleIsAnError(t *testing.T) {
	m := mustNewResponses(t, Config{APIKey: "unused"})
	_, err := m.params(&toolloop.Request{Messages: []toolloop.Message{{Role: "narrator"}}})
	require.Error(t, err)
	_, err = m.params(&toolloop.Request{Messages: []toolloop.Message{{Role: toolloop.RoleTool}}})
	require.Error(t, err)
}

// TestResponsesReasoningWithoutSummary: a reasoning item that came without
// a summary (none was asked for) goes back with an empty one, which the
// API requires.
func TestResponsesReasoningWithoutSummary(t *testing.T) {
	var item responses.ResponseReasoningItem
	require.NoError(t, json.Unmarshal([]byte(`{"id":"rs_9","type":"reasoning","summary":[],"encrypted_content":"enc_9"}`), &item))
	block := reasoningBlock(item)
	assert.Empty(t, block.Text)
	assert.True(t, block.Reasoning.Redacted)
	assert.False(t, block.Reasoning.Summary)

	in, ok := mustNewResponses(t, Config{APIKey: "unused"}).reasoningItem(&block)
	require.True(t, ok)
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"reasoning","id":"rs_9","summary":[],"encrypted_content":"enc_9"}`, string(b))
}
