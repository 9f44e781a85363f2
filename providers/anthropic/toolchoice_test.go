package anthropic

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestThinkingRefusesRequiredToolChoice checks that with thinking on, a
// required call (any tool, or a named one) fails with ErrConfig before
// anything is sent, and that none, as the wrap-up turn sends it, goes out.
func TestThinkingRefusesRequiredToolChoice(t *testing.T) {
	wrapUp := replay.EdgeTranscripts(func(text, callID string) toolloop.Content {
		return reasoning(text, toolloop.Reasoning{CallID: callID})
	})["wrap_up"]
	request := func(choice toolloop.ToolChoice, wrappingUp bool) *toolloop.Request {
		req := replay.WeatherRequest()
		if wrappingUp {
			req = &toolloop.Request{Messages: wrapUp, Tools: replay.ToolsOf(wrapUp)}
		}
		req.ToolChoice = choice
		return req
	}
	for _, thinking := range []Thinking{{Budget: 2048}, {Adaptive: true}} {
		for _, choice := range []toolloop.ToolChoice{
			{Mode: toolloop.ToolChoiceRequired},
			{Mode: toolloop.ToolChoiceRequired, Name: "get_weather"},
		} {
			srv := serve(t)
			m := modelFor(t, srv, Config{Thinking: thinking})
			_, err := m.Generate(context.Background(), request(choice, false))
			assert.ErrorIs(t, err, ErrConfig, "%+v with %+v", choice, thinking)
			assert.Empty(t, srv.Requests())
		}
		p, err := mustNew(t, Config{APIKey: "unused", Thinking: thinking}).params(request(toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}, true))
		require.NoError(t, err)
		b := replay.Body(t, p)
		assert.Equal(t, map[string]any{"type": "none"}, b["tool_choice"])
		assert.Contains(t, b, "thinking")
	}
}
