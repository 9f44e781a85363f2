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

var convertTool = toolloop.ToolSpec{
	Name:        "to_fahrenheit",
	Description: "Convert a temperature from Celsius to Fahrenheit.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"celsius":{"type":"number"}},"required":["celsius"]}`),
}

// toolChoiceCases are the tool choices with a golden request body each.
// none is the loop's wrap-up turn: the tools still listed, the last
// results followed by the wrap-up message.
var toolChoiceCases = []struct {
	golden string
	choice toolloop.ToolChoice
	wrapUp bool
}{
	{"tool_choice_none", toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}, true},
	{"tool_choice_required", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired}, false},
	{"tool_choice_named", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "to_fahrenheit"}, false},
}

// toolChoiceRequest returns the weather request with two tools and
// choice; with wrappingUp, the transcript holds a tool turn and ends with
// the wrap-up message.
func toolChoiceRequest(choice toolloop.ToolChoice, wrappingUp bool) *toolloop.Request {
	req := weatherRequest()
	req.Tools = []toolloop.ToolSpec{weatherTool, convertTool}
	req.ToolChoice = choice
	if wrappingUp {
		req.Messages = append(req.Messages,
			toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}, StopReason: toolloop.StopToolUse},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_1", Name: "get_weather", Status: toolloop.StatusOK,
				Content: []toolloop.Content{toolloop.TextContent(`{"sky":"light rain","temp_c":18}`)}}),
			replay.WrapUp,
		)
	}
	return req
}

func TestToolChoice(t *testing.T) {
	for _, tt := range toolChoiceCases {
		t.Run(tt.golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: tt.golden, Response: "plain.json"})
			_, err := modelFor(srv, Config{}).Generate(context.Background(), toolChoiceRequest(tt.choice, tt.wrapUp))
			require.NoError(t, err)
		})
	}
}

func TestResponsesToolChoice(t *testing.T) {
	for _, tt := range toolChoiceCases {
		t.Run(tt.golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: "responses_" + tt.golden, Response: rapi("text.json")})
			_, err := responsesFor(srv, Config{}).Generate(context.Background(), toolChoiceRequest(tt.choice, tt.wrapUp))
			require.NoError(t, err)
		})
	}
}

// TestToolChoiceWithoutTools checks that a request without tools, such
// as a compactor's, sends no tool_choice, and that auto sends none
// either: it is the APIs' default.
func TestToolChoiceWithoutTools(t *testing.T) {
	chat := New(Config{APIKey: "unused"})
	responses := NewResponses(Config{APIKey: "unused"})
	for _, req := range []*toolloop.Request{
		{Messages: weatherRequest().Messages, ToolChoice: toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}},
		{Messages: weatherRequest().Messages, Tools: []toolloop.ToolSpec{weatherTool}},
	} {
		p, err := chat.params(req)
		require.NoError(t, err)
		assert.NotContains(t, replay.Body(t, p), "tool_choice")
		rp, err := responses.params(req)
		require.NoError(t, err)
		assert.NotContains(t, replay.Body(t, rp), "tool_choice")
	}
}

// badToolChoices are tool choices no request can honour.
var badToolChoices = []struct {
	name   string
	choice toolloop.ToolChoice
	tools  []toolloop.ToolSpec
}{
	{"unknown tool", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "get_time"}, []toolloop.ToolSpec{weatherTool}},
	{"required without tools", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired}, nil},
	{"named without tools", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "get_weather"}, nil},
	{"name with none", toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone, Name: "get_weather"}, []toolloop.ToolSpec{weatherTool}},
	{"name with auto", toolloop.ToolChoice{Name: "get_weather"}, []toolloop.ToolSpec{weatherTool}},
	{"unknown mode", toolloop.ToolChoice{Mode: "any"}, []toolloop.ToolSpec{weatherTool}},
}

// TestBadToolChoiceFailsBeforeSending checks both APIs, both ways of
// calling: an error, and no request (the server has no steps, so any
// request fails the test).
func TestBadToolChoiceFailsBeforeSending(t *testing.T) {
	for _, tt := range badToolChoices {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t)
			req := &toolloop.Request{Messages: weatherRequest().Messages, Tools: tt.tools, ToolChoice: tt.choice}
			chat, responses := modelFor(srv, Config{}), responsesFor(srv, Config{})
			_, err := chat.Generate(context.Background(), req)
			assert.Error(t, err, "chat Generate")
			_, _, err = collect(chat, req)
			assert.Error(t, err, "chat Stream")
			_, err = responses.Generate(context.Background(), req)
			assert.Error(t, err, "responses Generate")
			for _, err := range responses.Stream(context.Background(), req) {
				assert.Error(t, err, "responses Stream")
			}
			assert.Empty(t, srv.Requests())
		})
	}
}
