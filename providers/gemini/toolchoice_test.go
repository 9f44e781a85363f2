package gemini

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

// TestToolChoiceWithoutTools checks that a request without tools, such
// as a compactor's, sends no tool_choice, and that auto sends none
// either: it is the APIs' default.
func TestToolChoiceWithoutTools(t *testing.T) {
	m := New(Config{APIKey: "unused"})
	for _, req := range []*toolloop.Request{
		{Messages: weatherRequest().Messages, ToolChoice: toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}},
		{Messages: weatherRequest().Messages, Tools: []toolloop.ToolSpec{weatherTool}},
	} {
		_, config, err := m.params(req)
		require.NoError(t, err)
		assert.Nil(t, config.ToolConfig)
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

// TestBadToolChoiceFailsBeforeSending checks both ways of calling: an
// error, and no request (the server has no steps, so any request fails
// the test).
func TestBadToolChoiceFailsBeforeSending(t *testing.T) {
	for _, tt := range badToolChoices {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t)
			req := &toolloop.Request{Messages: weatherRequest().Messages, Tools: tt.tools, ToolChoice: tt.choice}
			m := modelFor(srv, Config{})
			_, err := m.Generate(context.Background(), req)
			assert.Error(t, err, "Generate")
			_, _, _, err = collect(m, req)
			assert.Error(t, err, "Stream")
			assert.Empty(t, srv.Requests())
		})
	}
}
