package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// response maps a Responses API response to ours. args, when not nil,
// holds the streamed arguments of function calls by item ID, for calls
// whose final item came without them.
func (m *ResponsesModel) response(r *responses.Response, args map[string]*wire.Fragments) (*toolloop.Response, error) {
	switch r.Status {
	case responses.ResponseStatusFailed:
		return nil, failedError(r)
	case responses.ResponseStatusCancelled:
		return nil, errors.New("openai: the response was cancelled")
	}
	msg := toolloop.Message{Role: toolloop.RoleAssistant}
	var refusal strings.Builder
	// pending holds the reasoning blocks that no other item has followed
	// yet: a function call that follows ties them to itself.
	var pending []int
	for _, item := range r.Output {
		switch item.Type {
		case "reasoning":
			pending = append(pending, len(msg.Content))
			msg.Content = append(msg.Content, reasoningBlock(item.AsReasoning()))
			continue
		case "message":
			var text strings.Builder
			for _, part := range item.Content {
				switch part.Type {
				case "output_text":
					text.WriteString(part.Text)
				case "refusal":
					refusal.WriteString(part.Refusal)
				}
			}
			if text.Len() > 0 {
				msg.Content = append(msg.Content, toolloop.TextContent(text.String()))
			}
		case "function_call":
			fc := item.AsFunctionCall()
			if fc.Status == responses.ResponseFunctionToolCallStatusIncomplete {
				m.log.Debug("openai: dropped a function call that was cut off", "call_id", fc.CallID, "name", fc.Name)
				break
			}
			a := fc.Arguments
			if f := args[fc.ID]; a == "" && f != nil && f.Len() > 0 {
				a = f.String()
			}
			msg.ToolCalls = append(msg.ToolCalls, toolloop.ToolCall{ID: fc.CallID, Name: fc.Name, Arguments: json.RawMessage(a)})
			for _, i := range pending {
				msg.Content[i].Reasoning.CallID = fc.CallID
			}
		default:
			m.log.Debug("openai: ignored an output item", "type", item.Type, "id", item.ID)
		}
		pending = pending[:0]
	}
	resp := &toolloop.Response{
		Message:    msg,
		StopReason: toolloop.StopEnd,
		Usage:      responsesUsage(&r.Usage),
		Model:      r.Model,
	}
	if len(msg.ToolCalls) > 0 {
		resp.StopReason = toolloop.StopToolUse
	}
	filtered := false
	if r.Status == responses.ResponseStatusIncomplete {
		switch reason := r.IncompleteDetails.Reason; reason {
		case "content_filter":
			filtered = true
		case "max_output_tokens":
			resp.StopReason = toolloop.StopLength
		default:
			m.log.Debug("openai: unknown reason for an incomplete response; taken as cut off", "reason", reason)
			resp.StopReason = toolloop.StopLength
		}
	}
	if refusal.Len() > 0 || filtered {
		m.chat.refuse(resp, refusal.String())
	}
	return resp, nil
}

// reasoningBlock maps a reasoning item to a reasoning block: its summary
// (or, from servers that return it, its reasoning text) as the text, and
// what the API needs back in Reasoning.
func reasoningBlock(item responses.ResponseReasoningItem) toolloop.Content {
	r := toolloop.Reasoning{
		Provider:  ResponsesProvider,
		ID:        item.ID,
		Encrypted: item.EncryptedContent,
		Extra:     reasoningExtraJSON(&item),
	}
	var parts []string
	if len(item.Summary) > 0 {
		r.Summary = true
		for _, s := range item.Summary {
			parts = append(parts, s.Text)
		}
	} else {
		for _, c := range item.Content {
			parts = append(parts, c.Text)
		}
	}
	text := strings.Join(parts, "\n\n")
	r.Redacted = text == "" && r.Encrypted != ""
	return toolloop.ReasoningContent(text, r)
}

// reasoningExtraJSON returns the item's summary and content parts as
// received, as a reasoningExtra object.
func reasoningExtraJSON(item *responses.ResponseReasoningItem) json.RawMessage {
	summary := item.JSON.Summary.Raw()
	if !json.Valid([]byte(summary)) || strings.TrimSpace(summary) == "null" {
		summary = "[]"
	}
	var b strings.Builder
	b.WriteString(`{"summary":`)
	b.WriteString(summary)
	if content := item.JSON.Content.Raw(); len(item.Content) > 0 && json.Valid([]byte(content)) {
		b.WriteString(`,"content":`)
		b.WriteString(content)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// responsesUsage maps the usage of a response. Output tokens include the
// reasoning tokens already, as ours do.
func responsesUsage(u *responses.ResponseUsage) toolloop.Usage {
	return toolloop.Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.InputTokensDetails.CachedTokens,
		CacheWriteTokens: u.InputTokensDetails.CacheWriteTokens,
		ReasoningTokens:  u.OutputTokensDetails.ReasoningTokens,
	}
}

// failedError maps a failed response, which came with a 200 status (as a
// body or as a response.failed event), to a *providers.Error.
func failedError(r *responses.Response) error {
	code := string(r.Error.Code)
	msg := r.Error.Message
	if msg == "" {
		msg = "the response failed"
	}
	return classify(&providers.Error{
		Provider:   "openai",
		StatusCode: http.StatusOK,
		Type:       code,
		Message:    msg,
	}, code, "")
}
