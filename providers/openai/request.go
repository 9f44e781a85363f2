package openai

import (
	"encoding/base64"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// params maps a request to the SDK's request parameters.
func (m *Model) params(req *toolloop.Request) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{Model: m.cfg.Model}
	if err := checkToolChoice(req); err != nil {
		return p, err
	}
	msgs, err := m.messages(req.Messages)
	if err != nil {
		return p, err
	}
	p.Messages = msgs
	for _, spec := range req.Tools {
		t := m.tool(spec)
		if t.err != nil {
			return p, t.err
		}
		p.Tools = append(p.Tools, t.param)
	}
	p.ToolChoice = chatToolChoice(req)
	if req.Output != nil {
		o, err := m.output(req)
		if err != nil {
			return p, err
		}
		p.ResponseFormat = o.chatFormat()
	}
	if m.cfg.MaxTokens > 0 {
		p.MaxCompletionTokens = oai.Int(m.cfg.MaxTokens)
	}
	if m.cfg.Temperature != nil {
		p.Temperature = oai.Float(*m.cfg.Temperature)
	}
	if m.cfg.ReasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(m.cfg.ReasoningEffort)
	}
	if key := cacheKey(&m.cfg, m.server, req); key != "" {
		p.PromptCacheKey = oai.String(key)
	}
	p.PromptCacheRetention = oai.ChatCompletionNewParamsPromptCacheRetention(m.cfg.PromptCacheRetention)
	return p, nil
}

// messages maps a transcript to Chat Completions messages.
func (m *Model) messages(msgs []toolloop.Message) ([]oai.ChatCompletionMessageParamUnion, error) {
	out := make([]oai.ChatCompletionMessageParamUnion, 0, len(msgs)+1)
	for i := 0; i < len(msgs); i++ {
		msg := &msgs[i]
		switch msg.Role {
		case toolloop.RoleSystem:
			out = append(out, oai.SystemMessage(plainText(msg.Content)))
		case toolloop.RoleUser:
			u := userMessage(msg.Content)
			if n := len(out); n > 0 && out[n-1].OfUser != nil {
				joinUser(out[n-1].OfUser, u.OfUser)
				continue
			}
			out = append(out, u)
		case toolloop.RoleAssistant:
			out = append(out, m.assistantMessage(msg))
		case toolloop.RoleTool:
			// A turn's results go out together, followed by one user
			// message with any images they hold.
			var images []oai.ChatCompletionContentPartUnionParam
			for ; i < len(msgs) && msgs[i].Role == toolloop.RoleTool; i++ {
				r := msgs[i].Result
				if r == nil {
					return nil, fmt.Errorf("openai: message %d is a tool message without a result", i)
				}
				text, imgs := toolResult(r)
				out = append(out, oai.ToolMessage(text, r.CallID))
				images = append(images, imgs...)
			}
			i--
			if len(images) > 0 {
				out = append(out, oai.UserMessage(images))
			}
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// plainText renders content as one string, for messages that take text
// only. Reasoning blocks are no text: they are dropped.
func plainText(cs []toolloop.Content) string {
	if len(cs) == 1 && cs[0].Type == toolloop.ContentText {
		return cs[0].Text
	}
	var b strings.Builder
	for _, c := range cs {
		if c.Type == toolloop.ContentReasoning {
			continue
		}
		if c.Type != toolloop.ContentText && b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(wire.AsText(c))
	}
	return b.String()
}

func userMessage(cs []toolloop.Content) oai.ChatCompletionMessageParamUnion {
	if len(cs) == 0 || len(cs) == 1 && cs[0].Type == toolloop.ContentText {
		return oai.UserMessage(plainText(cs))
	}
	parts := make([]oai.ChatCompletionContentPartUnionParam, 0, len(cs))
	for _, c := range cs {
		if c.Type != toolloop.ContentReasoning {
			parts = append(parts, contentPart(c))
		}
	}
	return oai.UserMessage(parts)
}

// joinUser appends next's content to prev's: consecutive user messages (a
// compacted transcript's summary after the task, the loop's wrap-up
// message after the images of results) go out as one, since many
// OpenAI-compatible servers' chat templates want user and assistant turns
// to alternate. Plain texts are joined by a blank line.
func joinUser(prev, next *oai.ChatCompletionUserMessageParam) {
	p, n := prev.Content, next.Content
	switch {
	case n.OfString.Valid() && n.OfString.Value == "":
		return
	case p.OfString.Valid() && p.OfString.Value == "":
		prev.Content = n
		return
	case p.OfString.Valid() && n.OfString.Valid():
		prev.Content.OfString = oai.String(p.OfString.Value + "\n\n" + n.OfString.Value)
		return
	}
	parts := make([]oai.ChatCompletionContentPartUnionParam, 0, len(p.OfArrayOfContentParts)+len(n.OfArrayOfContentParts)+2)
	for _, c := range []oai.ChatCompletionUserMessageParamContentUnion{p, n} {
		if c.OfString.Valid() {
			parts = append(parts, oai.TextContentPart(c.OfString.Value))
		}
		parts = append(parts, c.OfArrayOfContentParts...)
	}
	prev.Content = oai.ChatCompletionUserMessageParamContentUnion{OfArrayOfContentParts: parts}
}

// contentPart maps one block of user content.
func contentPart(c toolloop.Content) oai.ChatCompletionContentPartUnionParam {
	switch c.Type {
	case toolloop.ContentImage:
		if url, ok := imageURL(c); ok {
			return oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: url})
		}
	case toolloop.ContentAudio:
		if format, ok := audioFormat(c.MIMEType); ok && len(c.Data) > 0 {
			return oai.InputAudioContentPart(oai.ChatCompletionContentPartInputAudioInputAudioParam{
				Data: base64.StdEncoding.EncodeToString(c.Data), Format: format})
		}
	}
	return oai.TextContentPart(wire.AsText(c))
}

// imageURL returns the URL to send for an image block: its bytes as a data
// URL when the API takes their type, else its URL.
func imageURL(c toolloop.Content) (string, bool) {
	if len(c.Data) > 0 {
		if mime, ok := wire.ImageType(c.MIMEType); ok {
			return wire.DataURL(mime, c.Data), true
		}
		return "", false
	}
	return c.URI, c.URI != ""
}

func audioFormat(mime string) (string, bool) {
	switch strings.ToLower(mime) {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return "wav", true
	case "audio/mpeg", "audio/mp3":
		return "mp3", true
	}
	return "", false
}

// assistantMessage maps an assistant message, with the reasoning blocks
// this model's server wrote sent back where they came from.
func (m *Model) assistantMessage(msg *toolloop.Message) oai.ChatCompletionMessageParamUnion {
	var a oai.ChatCompletionAssistantMessageParam
	text := plainText(msg.Content)
	if text != "" || len(msg.ToolCalls) == 0 {
		a.Content.OfString = oai.String(text)
	}
	for _, tc := range msg.ToolCalls {
		args := string(tc.Arguments)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
				ID:       tc.ID,
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
			},
		})
	}
	r := m.reasoningOf(msg.Content)
	r.set(&a, text)
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// errorPrefix marks the text of a failed tool result: the API has no error
// flag on tool messages.
const errorPrefix = "Error: "

// noOutput is the text of a successful tool result with no content.
const noOutput = "(no output)"

// toolResult returns the text of a tool message and, since tool messages
// take text only, the result's images as parts of a user message that
// follows, introduced by a line naming the call.
func toolResult(r *toolloop.ToolResult) (string, []oai.ChatCompletionContentPartUnionParam) {
	var b strings.Builder
	var images []oai.ChatCompletionContentPartUnionParam
	for _, c := range r.Content {
		if c.Type == toolloop.ContentReasoning {
			continue
		}
		if c.Type == toolloop.ContentImage {
			if url, ok := imageURL(c); ok {
				images = append(images, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: url}))
				continue
			}
		}
		if c.Type != toolloop.ContentText && b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(wire.AsText(c))
	}
	if len(images) > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%d image(s) attached in the next user message]", len(images))
		intro := oai.TextContentPart(fmt.Sprintf("Image output of tool call %s (%s):", r.CallID, r.Name))
		images = append([]oai.ChatCompletionContentPartUnionParam{intro}, images...)
	}
	return resultText(r, b.String()), images
}

// resultText is the text the model reads for result r whose content
// renders as text: a failed result's starts with errorPrefix (the APIs
// have no error flag) and falls back to the error's message, and an empty
// successful result reads noOutput.
func resultText(r *toolloop.ToolResult, text string) string {
	switch {
	case r.IsError() && text == "" && r.Error != nil:
		return errorPrefix + r.Error.Message
	case r.IsError():
		return errorPrefix + text
	case text == "":
		return noOutput
	}
	return text
}

// convertedTool is a converted tool spec, cached per spec.
type convertedTool struct {
	param oai.ChatCompletionToolUnionParam
	err   error
}

// tool converts a tool spec, once per distinct spec.
func (m *Model) tool(spec toolloop.ToolSpec) convertedTool {
	key := wire.Key(spec.Name, spec.Description, string(spec.InputSchema))
	return m.tools.Get(key, func() convertedTool {
		schema, notes, err := wire.ObjectSchema(spec.InputSchema)
		if err != nil {
			return convertedTool{err: fmt.Errorf("openai: tool %s: %w", spec.Name, err)}
		}
		for _, n := range notes {
			m.log.Debug("openai: tool schema loosened for the API", "tool", spec.Name, "change", n)
		}
		fn := shared.FunctionDefinitionParam{Name: spec.Name, Parameters: schema}
		if spec.Description != "" {
			fn.Description = oai.String(spec.Description)
		}
		if m.cfg.Strict {
			why := strictProblem(schema)
			if len(notes) > 0 {
				// Strict mode would hold the model to the loosened schema,
				// which may not admit a single valid call of the real one.
				why = "the schema was loosened for the API: " + notes[0]
			}
			if why == "" {
				fn.Strict = oai.Bool(true)
			} else {
				m.log.Debug("openai: tool sent without strict mode", "tool", spec.Name, "reason", why)
			}
		}
		return convertedTool{param: oai.ChatCompletionFunctionTool(fn)}
	})
}
