package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// params maps a request to the SDK's Responses request parameters.
func (m *ResponsesModel) params(req *toolloop.Request) (responses.ResponseNewParams, error) {
	p := responses.ResponseNewParams{
		Model: m.cfg.Model,
		// Always said, because the API's default is to store.
		Store: oai.Bool(m.cfg.Store),
	}
	if err := checkToolChoice(req); err != nil {
		return p, err
	}
	msgs := req.Messages
	if instructions, n := leadingSystem(msgs); n > 0 {
		p.Instructions = oai.String(instructions)
		msgs = msgs[n:]
	}
	input, err := m.input(msgs, len(req.Messages)-len(msgs))
	if err != nil {
		return p, err
	}
	p.Input.OfInputItemList = input
	for _, spec := range req.Tools {
		t := m.chat.tool(spec)
		if t.err != nil {
			return p, t.err
		}
		fn := t.param.OfFunction.Function
		// The API's default is strict, so non-strict is said too.
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name:        fn.Name,
			Description: fn.Description,
			Parameters:  fn.Parameters,
			Strict:      oai.Bool(fn.Strict.Value),
		}})
	}
	p.ToolChoice = responsesToolChoice(req)
	if req.Output != nil {
		o, err := m.chat.output(req)
		if err != nil {
			return p, err
		}
		p.Text.Format = o.responsesFormat()
	}
	if !m.noEncrypted.Load() {
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if m.cfg.ReasoningEffort != "" {
		p.Reasoning.Effort = shared.ReasoningEffort(m.cfg.ReasoningEffort)
	}
	if m.cfg.ReasoningSummary != "" {
		p.Reasoning.Summary = shared.ReasoningSummary(m.cfg.ReasoningSummary)
	}
	if m.cfg.MaxTokens > 0 {
		p.MaxOutputTokens = oai.Int(m.cfg.MaxTokens)
	}
	if m.cfg.Temperature != nil {
		p.Temperature = oai.Float(*m.cfg.Temperature)
	}
	if key := cacheKey(&m.cfg, m.chat.server, req); key != "" {
		p.PromptCacheKey = oai.String(key)
	}
	p.PromptCacheRetention = responses.ResponseNewParamsPromptCacheRetention(m.cfg.PromptCacheRetention)
	return p, nil
}

// leadingSystem returns the text of the system messages a transcript
// starts with, for the instructions, and how many there are.
func leadingSystem(msgs []toolloop.Message) (string, int) {
	n := 0
	for n < len(msgs) && msgs[n].Role == toolloop.RoleSystem {
		n++
	}
	switch n {
	case 0:
		return "", 0
	case 1:
		return plainText(msgs[0].Content), 1
	}
	parts := make([]string, n)
	for i := range n {
		parts[i] = plainText(msgs[i].Content)
	}
	return strings.Join(parts, "\n\n"), n
}

// input maps a transcript (after its leading system messages, of which
// there were skipped) to input items.
func (m *ResponsesModel) input(msgs []toolloop.Message, skipped int) (responses.ResponseInputParam, error) {
	out := make(responses.ResponseInputParam, 0, len(msgs)+len(msgs)/2)
	for i := range msgs {
		msg := &msgs[i]
		switch msg.Role {
		case toolloop.RoleSystem:
			out = append(out, easyMessage(responses.EasyInputMessageRoleSystem, plainText(msg.Content)))
		case toolloop.RoleUser:
			out = append(out, userItem(msg.Content))
		case toolloop.RoleAssistant:
			out = m.assistantItems(out, msg)
		case toolloop.RoleTool:
			r := msg.Result
			if r == nil {
				return nil, fmt.Errorf("openai: message %d is a tool message without a result", i+skipped)
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: oai.String(r.CallID),
				Output: functionOutput(r),
			}})
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i+skipped, msg.Role)
		}
	}
	return out, nil
}

func easyMessage(role responses.EasyInputMessageRole, text string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Role:    role,
		Content: responses.EasyInputMessageContentUnionParam{OfString: oai.String(text)},
	}}
}

// userItem maps a user message: plain text as a string, anything else as
// input_text and input_image parts.
func userItem(cs []toolloop.Content) responses.ResponseInputItemUnionParam {
	simple := true
	for _, c := range cs {
		simple = simple && (c.Type == toolloop.ContentText || c.Type == toolloop.ContentReasoning)
	}
	if simple {
		return easyMessage(responses.EasyInputMessageRoleUser, plainText(cs))
	}
	parts := make(responses.ResponseInputMessageContentListParam, 0, len(cs))
	for _, c := range cs {
		switch {
		case c.Type == toolloop.ContentReasoning:
			continue
		case c.Type == toolloop.ContentImage:
			if url, ok := imageURL(c); ok {
				parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
					ImageURL: oai.String(url), Detail: responses.ResponseInputImageDetailAuto}})
				continue
			}
		}
		parts = append(parts, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: wire.AsText(c)}})
	}
	return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Role:    responses.EasyInputMessageRoleUser,
		Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts},
	}}
}

// assistantItems appends the items of an assistant message to out, in the
// order the model produced them: its own reasoning blocks and text in
// content order, each reasoning block tied to a call just before that
// call, then the function calls. Other providers' reasoning is dropped.
func (m *ResponsesModel) assistantItems(out responses.ResponseInputParam, msg *toolloop.Message) responses.ResponseInputParam {
	var byCall map[string][]*toolloop.Content
	for i := range msg.Content {
		c := &msg.Content[i]
		if wire.OwnReasoning(*c, ResponsesProvider) && c.Reasoning.CallID != "" && slices.ContainsFunc(msg.ToolCalls, func(tc toolloop.ToolCall) bool { return tc.ID == c.Reasoning.CallID }) {
			if byCall == nil {
				byCall = map[string][]*toolloop.Content{}
			}
			byCall[c.Reasoning.CallID] = append(byCall[c.Reasoning.CallID], c)
		}
	}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, easyMessage(responses.EasyInputMessageRoleAssistant, text.String()))
			text.Reset()
		}
	}
	for i := range msg.Content {
		c := &msg.Content[i]
		switch {
		case c.Type == toolloop.ContentReasoning:
			if !wire.OwnReasoning(*c, ResponsesProvider) || byCall[c.Reasoning.CallID] != nil {
				continue
			}
			if item, ok := m.reasoningItem(c); ok {
				flush()
				out = append(out, item)
			}
		case c.Type == toolloop.ContentText:
			text.WriteString(c.Text)
		default:
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(wire.AsText(*c))
		}
	}
	flush()
	for _, tc := range msg.ToolCalls {
		for _, c := range byCall[tc.ID] {
			if item, ok := m.reasoningItem(c); ok {
				out = append(out, item)
			}
		}
		args := string(tc.Arguments)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
			CallID: tc.ID, Name: tc.Name, Arguments: args,
		}})
	}
	return out
}

// reasoningExtra is what a reasoning block keeps in Reasoning.Extra: the
// item's summary and content parts, as the API sent them.
type reasoningExtra struct {
	Summary []reasoningPart `json:"summary"`
	Content []reasoningPart `json:"content,omitempty"`
}

type reasoningPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// reasoningItem returns the input item that sends a reasoning block back.
// Without storage, a block without encrypted content cannot be sent: the
// API would look its ID up, and fail.
func (m *ResponsesModel) reasoningItem(c *toolloop.Content) (responses.ResponseInputItemUnionParam, bool) {
	r := c.Reasoning
	switch {
	case r.ID == "":
		m.log.Debug("openai: dropped a reasoning block that cannot be sent back", "reason", "it has no ID")
		return responses.ResponseInputItemUnionParam{}, false
	case !m.cfg.Store && r.Encrypted == "":
		m.log.Debug("openai: dropped a reasoning block that cannot be sent back",
			"id", r.ID, "reason", "no encrypted content, and store is off")
		return responses.ResponseInputItemUnionParam{}, false
	}
	var extra reasoningExtra
	if len(r.Extra) > 0 {
		if err := json.Unmarshal(r.Extra, &extra); err != nil {
			m.log.Debug("openai: ignored the unreadable extra of a reasoning block", "id", r.ID, "error", err)
		}
	}
	if extra.Summary == nil && r.Summary && c.Text != "" {
		extra.Summary = []reasoningPart{{Type: "summary_text", Text: c.Text}}
	}
	item := &responses.ResponseReasoningItemParam{
		ID: r.ID,
		// The API requires a summary, if only an empty one.
		Summary: make([]responses.ResponseReasoningItemSummaryParam, len(extra.Summary)),
	}
	for i, s := range extra.Summary {
		item.Summary[i].Text = s.Text
	}
	for _, s := range extra.Content {
		item.Content = append(item.Content, responses.ResponseReasoningItemContentParam{Text: s.Text})
	}
	if r.Encrypted != "" {
		item.EncryptedContent = oai.String(r.Encrypted)
	}
	return responses.ResponseInputItemUnionParam{OfReasoning: item}, true
}

// functionOutput maps a tool result to a function_call_output's output:
// its text, or, when it holds images, input_text and input_image parts.
// A failed result's text starts with "Error: " (the API has no error
// flag), and an empty successful result reads "(no output)".
func functionOutput(r *toolloop.ToolResult) responses.ResponseInputItemFunctionCallOutputOutputUnionParam {
	var b strings.Builder
	var parts responses.ResponseFunctionCallOutputItemListParam
	text := func() {
		if b.Len() > 0 {
			parts = append(parts, responses.ResponseFunctionCallOutputItemUnionParam{
				OfInputText: &responses.ResponseInputTextContentParam{Text: b.String()}})
			b.Reset()
		}
	}
	for _, c := range r.Content {
		if c.Type == toolloop.ContentImage {
			if url, ok := imageURL(c); ok {
				text()
				parts = append(parts, responses.ResponseFunctionCallOutputItemUnionParam{
					OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: oai.String(url), Detail: responses.ResponseInputImageContentDetailAuto}})
				continue
			}
		}
		if c.Type == toolloop.ContentReasoning {
			continue
		}
		if c.Type != toolloop.ContentText && b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(wire.AsText(c))
	}
	if len(parts) == 0 {
		return responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: oai.String(resultText(r, b.String()))}
	}
	text()
	if r.IsError() {
		prefix := errorPrefix
		if r.Error != nil && r.Error.Message != "" {
			prefix += r.Error.Message
		}
		parts = append(responses.ResponseFunctionCallOutputItemListParam{{
			OfInputText: &responses.ResponseInputTextContentParam{Text: strings.TrimSpace(prefix)}}}, parts...)
	}
	return responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfResponseFunctionCallOutputItemArray: parts}
}
