package anthropic

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

// TestToolChoiceWithoutTools checks that a request without tools, such
// as a compactor's, sends no tool_choice, and that auto sends none
// either: it is the APIs' default.
func TestToolChoiceWithoutTools(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	for _, req := range []*toolloop.Request{
		{Messages: weatherRequest().Messages, ToolChoice: toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}},
		{Messages: weatherRequest().Messages, Tools: []toolloop.ToolSpec{weatherTool}},
	} {
		p, err := m.params(req)
		require.NoError(t, err)
		assert.NotContains(t, replay.Body(t, p), "tool_choice")
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
			m := modelFor(t, srv, Config{})
			_, err := m.Generate(context.Background(), req)
			assert.Error(t, err, "Generate")
			_, _, err = collect(m, req)
			assert.Error(t, err, "Stream")
			assert.NotErrorIs(t, err, ErrConfig, "the config is fine")
			assert.Empty(t, srv.Requests())
		})
	}
}

// TestThinkingRefusesRequiredToolChoice checks that with thinking on, a
// required call (any tool, or a named one) fails with ErrConfig before
// anything is sent, and that none, as the wrap-up turn sends it, goes out.
func TestThinkingRefusesRequiredToolChoice(t *testing.T) {
	for _, thinking := range []Thinking{{Budget: 2048}, {Adaptive: true}} {
		for _, choice := range []toolloop.ToolChoice{
			{Mode: toolloop.ToolChoiceRequired},
			{Mode: toolloop.ToolChoiceRequired, Name: "get_weather"},
		} {
			srv := serve(t)
			m := modelFor(t, srv, Config{Thinking: thinking})
			_, err := m.Generate(context.Background(), toolChoiceRequest(choice, false))
			assert.ErrorIs(t, err, ErrConfig, "%+v with %+v", choice, thinking)
			assert.Empty(t, srv.Requests())
		}
		p, err := mustNew(t, Config{APIKey: "unused", Thinking: thinking}).params(toolChoiceRequest(toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}, true))
		require.NoError(t, err)
		b := replay.Body(t, p)
		assert.Equal(t, map[string]any{"type": "none"}, b["tool_choice"])
		assert.Contains(t, b, "thinking")
	}
}
