package openai

import (
	"encoding/json"
	"errors"
	"strconv"

	oai "github.com/openai/openai-go/v3"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// The texts of refusals that came without one of their own.
const (
	filteredText = "The answer was withheld by the provider's content filter."
	filteredNote = "\n\n[The rest of the answer was withheld by the provider's content filter.]"
)

// response maps a chat completion to our response. args, when not nil,
// holds the streamed arguments of each tool call by index, reassembled
// from their raw pieces; x, when not nil, the streamed reasoning and
// thought signatures (else they are read from the message).
func (m *Model) response(cc *oai.ChatCompletion, args map[int]*wire.Fragments, x *turnExtras) (*toolloop.Response, error) {
	if len(cc.Choices) == 0 {
		return nil, errors.New("openai: the response has no choices")
	}
	ch := &cc.Choices[0]
	if x == nil {
		x = m.messageExtras(&ch.Message)
	}
	msg := toolloop.Message{Role: toolloop.RoleAssistant}
	if ch.Message.Content != "" {
		msg.Content = []toolloop.Content{toolloop.TextContent(ch.Message.Content)}
	}
	var sigs map[string]string
	for i, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			m.log.Debug("openai: ignored a tool call that is not a function call", "type", tc.Type, "id", tc.ID)
			continue
		}
		a := tc.Function.Arguments
		if f := args[i]; f != nil && f.Len() > 0 {
			a = f.String()
		}
		msg.ToolCalls = append(msg.ToolCalls, toolloop.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(a)})
		if sig := x.callSigs[i]; sig != "" {
			if sigs == nil {
				sigs = map[string]string{}
			}
			sigs[tc.ID] = sig
		}
	}
	resp := &toolloop.Response{
		Message:    msg,
		StopReason: m.stopReason(ch.FinishReason, len(msg.ToolCalls) > 0),
		Usage:      usage(&cc.Usage),
		Model:      cc.Model,
	}
	if refusal := ch.Message.Refusal; refusal != "" || ch.FinishReason == "content_filter" {
		m.refuse(resp, refusal)
	}
	if b := m.blocks(x, resp.Message.ToolCalls, sigs); len(b) > 0 {
		resp.Message.Content = append(b, resp.Message.Content...)
	}
	return resp, nil
}

// usage maps a completion's usage. Servers disagree on whether
// completion_tokens holds every output token; total_tokens tells:
//
//   - total = prompt + completion (OpenAI, DeepSeek, Mistral): completion
//     holds them all, reasoning_tokens included (a part of it, as OpenAI
//     documents).
//   - total > prompt + completion (Gemini's OpenAI-compatible endpoint,
//     xAI): completion leaves out the reasoning, which reasoning_tokens
//     reports apart, or (Gemini's endpoint, at times) nothing does. The
//     difference is output all the same: OutputTokens is total - prompt,
//     and ReasoningTokens the difference, or reasoning_tokens if larger.
//   - no total (0), or a smaller one: completion is taken as it is.
//
// DeepSeek reports cache hits as prompt_cache_hit_tokens.
func usage(u *oai.CompletionUsage) toolloop.Usage {
	out := toolloop.Usage{
		InputTokens:      u.PromptTokens,
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
	}
	if missing := u.TotalTokens - u.PromptTokens - u.CompletionTokens; missing > 0 {
		out.OutputTokens += missing
		out.ReasoningTokens = min(max(out.ReasoningTokens, missing), out.OutputTokens)
	}
	if out.CacheReadTokens == 0 {
		if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok {
			out.CacheReadTokens, _ = strconv.ParseInt(f.Raw(), 10, 64)
		}
	}
	return out
}

// refuse turns resp into a refusal whose text says so. Tool calls of a
// refused turn are dropped: they may be cut off, and must not run.
func (m *Model) refuse(resp *toolloop.Response, refusal string) {
	msg := &resp.Message
	if n := len(msg.ToolCalls); n > 0 {
		m.log.Debug("openai: dropped the tool calls of a refused turn", "calls", n)
		msg.ToolCalls = nil
	}
	hasText := msg.Text() != ""
	switch {
	case refusal != "" && hasText:
		msg.Content = append(msg.Content, toolloop.TextContent("\n\n"+refusal))
	case refusal != "":
		msg.Content = append(msg.Content, toolloop.TextContent(refusal))
	case hasText:
		msg.Content = append(msg.Content, toolloop.TextContent(filteredNote))
	default:
		msg.Content = append(msg.Content, toolloop.TextContent(filteredText))
	}
	resp.StopReason = toolloop.StopRefusal
}

// stopReason maps a finish reason. Some servers finish a turn with tool
// calls as "stop"; a turn with calls is tool_use whatever they say, unless
// it was cut off or filtered.
func (m *Model) stopReason(finish string, hasCalls bool) toolloop.StopReason {
	switch finish {
	case "length":
		return toolloop.StopLength
	case "content_filter":
		return toolloop.StopRefusal
	case "tool_calls", "function_call":
		return toolloop.StopToolUse
	case "stop", "":
	default:
		m.log.Debug("openai: unknown finish reason", "finish_reason", finish)
	}
	if hasCalls {
		return toolloop.StopToolUse
	}
	return toolloop.StopEnd
}
