package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// params maps a request to the SDK's request parameters.
func (m *Model) params(req *toolloop.Request) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.cfg.Model), MaxTokens: m.cfg.MaxTokens}
	choice, err := m.toolChoice(req)
	if err != nil {
		return p, err
	}
	p.ToolChoice = choice
	if req.Output != nil {
		if p.OutputConfig.Format, err = m.outputFormat(req); err != nil {
			return p, err
		}
	}
	if err := m.messages(&p, req.Messages); err != nil {
		return p, err
	}
	for _, spec := range req.Tools {
		t := m.tool(spec)
		if t.err != nil {
			return p, t.err
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: t.param})
	}
	if m.cfg.Temperature != nil {
		p.Temperature = sdk.Float(*m.cfg.Temperature)
	}
	m.thinking(&p)
	if m.cfg.CachePrompt {
		p.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	m.breakpoints(&p)
	return p, nil
}

// messages maps a transcript to the system prompt and the messages of p.
func (m *Model) messages(p *sdk.MessageNewParams, msgs []toolloop.Message) error {
	for i := range msgs {
		msg := &msgs[i]
		switch msg.Role {
		case toolloop.RoleSystem:
			for _, c := range msg.Content {
				if c.Type == toolloop.ContentReasoning {
					continue
				}
				if text := wire.AsText(c); text != "" {
					p.System = append(p.System, sdk.TextBlockParam{Text: text})
				}
			}
		case toolloop.RoleUser:
			p.Messages = appendBlocks(p.Messages, sdk.MessageParamRoleUser, userBlocks(msg.Content))
		case toolloop.RoleAssistant:
			p.Messages = appendBlocks(p.Messages, sdk.MessageParamRoleAssistant, m.assistantBlocks(msg))
		case toolloop.RoleTool:
			if msg.Result == nil {
				return fmt.Errorf("anthropic: message %d is a tool message without a result", i)
			}
			p.Messages = appendResult(p.Messages, toolResult(msg.Result))
		default:
			return fmt.Errorf("anthropic: message %d has unknown role %q", i, msg.Role)
		}
	}
	return nil
}

// appendBlocks adds blocks to the conversation, merging them into the last
// message when it has the same role, since the API wants turns to
// alternate. A message without blocks is left out.
func appendBlocks(msgs []sdk.MessageParam, role sdk.MessageParamRole, blocks []sdk.ContentBlockParamUnion) []sdk.MessageParam {
	if len(blocks) == 0 {
		return msgs
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role {
		msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
		return msgs
	}
	return append(msgs, sdk.MessageParam{Role: role, Content: blocks})
}

// appendResult adds a tool_result block to the conversation: to the last
// message when it is the user's, after the tool results it starts with,
// since the API wants a turn's results before any other user content.
func appendResult(msgs []sdk.MessageParam, block sdk.ContentBlockParamUnion) []sdk.MessageParam {
	n := len(msgs)
	if n == 0 || msgs[n-1].Role != sdk.MessageParamRoleUser {
		return append(msgs, sdk.MessageParam{Role: sdk.MessageParamRoleUser, Content: []sdk.ContentBlockParamUnion{block}})
	}
	c := msgs[n-1].Content
	at := 0
	for at < len(c) && c[at].OfToolResult != nil {
		at++
	}
	msgs[n-1].Content = slices.Insert(c, at, block)
	return msgs
}

// userBlocks maps user content. Reasoning belongs to assistant turns; a
// reasoning block elsewhere is dropped, never rendered as text.
func userBlocks(cs []toolloop.Content) []sdk.ContentBlockParamUnion {
	blocks := make([]sdk.ContentBlockParamUnion, 0, len(cs))
	for _, c := range cs {
		if c.Type == toolloop.ContentReasoning {
			continue
		}
		if img := imageBlock(c); img != nil {
			blocks = append(blocks, sdk.ContentBlockParamUnion{OfImage: img})
		} else if text := wire.AsText(c); text != "" {
			blocks = append(blocks, sdk.NewTextBlock(text))
		}
	}
	return blocks
}

// imageBlock returns the image block for c, or nil when c is not an image
// the API takes.
func imageBlock(c toolloop.Content) *sdk.ImageBlockParam {
	if c.Type != toolloop.ContentImage {
		return nil
	}
	if len(c.Data) > 0 {
		mime, ok := wire.ImageType(c.MIMEType)
		if !ok {
			return nil
		}
		return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
			Data: base64.StdEncoding.EncodeToString(c.Data), MediaType: sdk.Base64ImageSourceMediaType(mime)}}}
	}
	if c.URI != "" {
		return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfURL: &sdk.URLImageSourceParam{URL: c.URI}}}
	}
	return nil
}

// assistantBlocks maps an assistant message: its content in order, with
// its own reasoning blocks as thinking and redacted_thinking blocks, and a
// tool_use block per call. A reasoning block tied to a call (CallID) goes
// just before that call's tool_use, after the calls before it, so that
// interleaved thinking is sent back where the model wrote it; the other
// calls follow the content. Other providers' reasoning is dropped.
func (m *Model) assistantBlocks(msg *toolloop.Message) []sdk.ContentBlockParamUnion {
	blocks := make([]sdk.ContentBlockParamUnion, 0, len(msg.Content)+len(msg.ToolCalls))
	calls := msg.ToolCalls
	next := 0                 // the first call not yet sent
	pending := -1             // the call the last reasoning block sent precedes
	flush := func(upTo int) { // sends the calls before upTo
		for ; next < upTo; next++ {
			blocks = append(blocks, m.toolUse(calls[next]))
		}
	}
	for _, c := range msg.Content {
		if c.Type == toolloop.ContentReasoning {
			if !wire.OwnReasoning(c, providerName) {
				continue
			}
			b, ok := reasoningBlock(c)
			if !ok {
				m.log.Debug("anthropic: left out a thinking block without a signature")
				continue
			}
			if k := callIndex(calls, next, c.Reasoning.CallID); k >= 0 {
				flush(k)
				pending = k
			}
			blocks = append(blocks, b)
			continue
		}
		if pending >= 0 {
			flush(pending + 1)
			pending = -1
		}
		if text := wire.AsText(c); text != "" {
			blocks = append(blocks, sdk.NewTextBlock(text))
		}
	}
	flush(len(calls))
	return blocks
}

// callIndex returns the index of the call with the given ID among
// calls[from:], or -1.
func callIndex(calls []toolloop.ToolCall, from int, id string) int {
	if id == "" {
		return -1
	}
	for k := from; k < len(calls); k++ {
		if calls[k].ID == id {
			return k
		}
	}
	return -1
}

// toolUse maps a tool call to a tool_use block.
func (m *Model) toolUse(tc toolloop.ToolCall) sdk.ContentBlockParamUnion {
	input, wrapped := toolInput(tc.Arguments)
	if wrapped {
		m.log.Debug("anthropic: sent tool call arguments that are not a JSON object wrapped", "id", tc.ID, "tool", tc.Name)
	}
	return sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: tc.ID, Name: tc.Name, Input: input}}
}

// rawArgumentsKey holds arguments that are not a JSON object, as a string,
// in the object the API insists on.
const rawArgumentsKey = "raw_arguments"

// toolInput returns the input to send for a call's arguments: a JSON
// object as it is, empty or null arguments as {}, and anything else
// wrapped as {"raw_arguments": "..."}.
func toolInput(args json.RawMessage) (input any, wrapped bool) {
	trimmed := bytes.TrimSpace(args)
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		return json.RawMessage(`{}`), false
	case trimmed[0] == '{' && json.Valid(trimmed):
		return json.RawMessage(bytes.Clone(trimmed)), false
	}
	return map[string]string{rawArgumentsKey: string(args)}, true
}

// toolResult maps a result to a tool_result block.
func toolResult(r *toolloop.ToolResult) sdk.ContentBlockParamUnion {
	b := &sdk.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.IsError() {
		b.IsError = sdk.Bool(true)
	}
	for _, c := range r.Content {
		if c.Type == toolloop.ContentReasoning {
			continue
		}
		if img := imageBlock(c); img != nil {
			b.Content = append(b.Content, sdk.ToolResultBlockParamContentUnion{OfImage: img})
		} else if text := wire.AsText(c); text != "" {
			b.Content = append(b.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: text}})
		}
	}
	if len(b.Content) == 0 && r.Error != nil && r.Error.Message != "" {
		b.Content = append(b.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: r.Error.Message}})
	}
	return sdk.ContentBlockParamUnion{OfToolResult: b}
}

// convertedTool is a converted tool spec, cached per spec.
type convertedTool struct {
	param *sdk.ToolParam
	err   error
}

// tool converts a tool spec, once per distinct spec.
func (m *Model) tool(spec toolloop.ToolSpec) convertedTool {
	key := wire.Key(spec.Name, spec.Description, string(spec.InputSchema))
	return m.tools.Get(key, func() convertedTool {
		schema, notes, err := wire.ObjectSchema(spec.InputSchema)
		if err != nil {
			return convertedTool{err: fmt.Errorf("anthropic: tool %s: %w", spec.Name, err)}
		}
		for _, n := range notes {
			m.log.Debug("anthropic: tool schema loosened for the API", "tool", spec.Name, "change", n)
		}
		// The schema goes out as a whole, encoded as a map is, with its
		// keys sorted: the SDK writes the extra fields of a
		// ToolInputSchemaParam in map order, which would change the
		// request's bytes from one request to the next and miss the
		// prompt cache.
		in := param.Override[sdk.ToolInputSchemaParam](schema)
		t := &sdk.ToolParam{Name: spec.Name, InputSchema: in}
		if spec.Description != "" {
			t.Description = sdk.String(spec.Description)
		}
		return convertedTool{param: t}
	})
}
