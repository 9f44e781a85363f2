package anthropic

import (
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// refusedText is the text of a refusal that came without one.
const refusedText = "The model declined to answer (stop reason: refusal)."

// response maps a message to our response. inputs, when not nil, holds
// the streamed input of each tool_use block by index, reassembled from its
// raw pieces.
//
// Thinking and redacted thinking become reasoning blocks, in order among
// the text. A reasoning block that follows a tool_use (interleaved
// thinking) is tied to the next tool_use with its CallID, so that it is
// sent back between the two calls, where the model wrote it.
func (m *Model) response(msg *sdk.Message, inputs map[int64]*wire.Fragments) *toolloop.Response {
	out := toolloop.Message{Role: toolloop.RoleAssistant}
	afterCall := false
	var untied []*toolloop.Reasoning // since the last tool_use
	for i := range msg.Content {
		b := &msg.Content[i]
		if c, ok := reasoningContent(b); ok {
			out.Content = append(out.Content, c)
			if afterCall {
				untied = append(untied, c.Reasoning)
			}
			continue
		}
		switch b.Type {
		case "text":
			if b.Text != "" {
				out.Content = append(out.Content, toolloop.TextContent(b.Text))
			}
		case "tool_use":
			args := json.RawMessage(b.Input)
			if f := inputs[int64(i)]; f != nil {
				if s := f.String(); s != "" {
					args = json.RawMessage(s)
				}
			}
			out.ToolCalls = append(out.ToolCalls, toolloop.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
			for _, r := range untied {
				r.CallID = b.ID
			}
			untied, afterCall = untied[:0], true
		default:
			m.log.Debug("anthropic: left out a content block", "type", b.Type)
		}
	}
	u := msg.Usage
	resp := &toolloop.Response{
		Message:    out,
		StopReason: m.stopReason(msg.StopReason, len(out.ToolCalls) > 0),
		Usage: toolloop.Usage{
			InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			OutputTokens:     u.OutputTokens,
			CacheReadTokens:  u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens,
			ReasoningTokens:  u.OutputTokensDetails.ThinkingTokens,
		},
		Model: string(msg.Model),
	}
	if resp.StopReason == toolloop.StopRefusal {
		m.refuse(resp, msg.StopDetails.Explanation)
	}
	return resp
}

// refuse makes sure a refusal says so, and drops its tool calls: they may
// be cut off, and must not run.
func (m *Model) refuse(resp *toolloop.Response, explanation string) {
	msg := &resp.Message
	if n := len(msg.ToolCalls); n > 0 {
		m.log.Debug("anthropic: dropped the tool calls of a refused turn", "calls", n)
		msg.ToolCalls = nil
	}
	if msg.Text() != "" {
		return
	}
	text := refusedText
	if explanation != "" {
		text = explanation
	}
	msg.Content = append(msg.Content, toolloop.TextContent(text))
}

// stopReason maps a stop reason. A turn with tool calls is tool_use unless
// it was cut off or refused.
func (m *Model) stopReason(r sdk.StopReason, hasCalls bool) toolloop.StopReason {
	switch r {
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return toolloop.StopLength
	case sdk.StopReasonRefusal:
		return toolloop.StopRefusal
	case sdk.StopReasonToolUse:
		return toolloop.StopToolUse
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence, sdk.StopReasonPauseTurn, "":
	default:
		m.log.Debug("anthropic: unknown stop reason", "stop_reason", r)
	}
	if hasCalls {
		return toolloop.StopToolUse
	}
	return toolloop.StopEnd
}
