package openai

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// toolChoiceRequest is the weather request with both tools and choice
// (see replay.ToolChoiceRequest).
func toolChoiceRequest(choice toolloop.ToolChoice, wrappingUp bool) *toolloop.Request {
	return replay.ToolChoiceRequest(weatherRequest(), []toolloop.ToolSpec{weatherTool, replay.ConvertTool}, choice, wrappingUp)
}

// toolChoiceCases are the shared tool choices and auto, which sends no
// tool_choice: its golden shows that.
var toolChoiceCases = append([]replay.ToolChoiceCase{{Golden: "tool_choice_auto"}}, replay.ToolChoiceCases...)

func TestToolChoice(t *testing.T) {
	for _, tt := range toolChoiceCases {
		t.Run(tt.Golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: tt.Golden, Response: "plain.json"})
			_, err := modelFor(t, srv, Config{}).Generate(context.Background(), toolChoiceRequest(tt.Choice, tt.WrapUp))
			require.NoError(t, err)
		})
	}
}

func TestResponsesToolChoice(t *testing.T) {
	for _, tt := range toolChoiceCases {
		t.Run(tt.Golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: "responses_" + tt.Golden, Response: rapi("text.json")})
			_, err := responsesFor(t, srv, Config{}).Generate(context.Background(), toolChoiceRequest(tt.Choice, tt.WrapUp))
			require.NoError(t, err)
		})
	}
}

// TestToolChoiceWithoutTools checks that a request without tools, such
// as a compactor's, sends no tool_choice, and that auto sends none
// either: it is the APIs' default.
func TestToolChoiceWithoutTools(t *testing.T) {
	chat := mustNew(t, Config{APIKey: "unused"})
	responses := mustNewResponses(t, Config{APIKey: "unused"})
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
			chat, responses := modelFor(t, srv, Config{}), responsesFor(t, srv, Config{})
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
