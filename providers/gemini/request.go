package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// The roles of the API's contents.
const (
	roleUser  = genai.RoleUser
	roleModel = genai.RoleModel
)

// params maps a request to the SDK's contents and configuration, with
// Config.CachedContent and Config.EditRequest applied.
func (m *Model) params(req *toolloop.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	contents, config, err := m.mapRequest(req)
	if err != nil {
		return nil, nil, err
	}
	m.useCache(config)
	if m.cfg.EditRequest != nil {
		m.cfg.EditRequest(config)
	}
	return contents, config, nil
}

// mapRequest maps a request to the SDK's contents and configuration.
func (m *Model) mapRequest(req *toolloop.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	config := &genai.GenerateContentConfig{}
	toolConfig, err := toolConfig(req)
	if err != nil {
		return nil, nil, err
	}
	contents, system, err := m.contents(req.Messages)
	if err != nil {
		return nil, nil, err
	}
	if len(system) > 0 {
		config.SystemInstruction = &genai.Content{Parts: system}
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, spec := range req.Tools {
			t := m.tool(spec)
			if t.err != nil {
				return nil, nil, t.err
			}
			decls = append(decls, t.decl)
		}
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		config.ToolConfig = toolConfig
	}
	if req.Output != nil {
		if err := m.output(req, config); err != nil {
			return nil, nil, err
		}
	}
	if m.cfg.MaxTokens > 0 {
		config.MaxOutputTokens = int32(min(m.cfg.MaxTokens, 1<<31-1))
	}
	if m.cfg.Temperature != nil {
		config.Temperature = genai.Ptr(float32(*m.cfg.Temperature))
	}
	if m.cfg.ThinkingBudget != nil || m.cfg.ThinkingLevel != "" || m.cfg.IncludeThoughts {
		tc := &genai.ThinkingConfig{IncludeThoughts: m.cfg.IncludeThoughts}
		if b := m.cfg.ThinkingBudget; b != nil {
			tc.ThinkingBudget = genai.Ptr(int32(max(min(*b, 1<<31-1), -1)))
		}
		if m.cfg.ThinkingLevel != "" {
			tc.ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(m.cfg.ThinkingLevel))
		}
		config.ThinkingConfig = tc
	}
	if p := m.cfg.HTTPOptions.ExtrasRequestProvider; p != nil {
		// The SDK reads this one from the request's options only.
		config.HTTPOptions = &genai.HTTPOptions{ExtrasRequestProvider: p}
	}
	return contents, config, nil
}

// contents maps a transcript to the API's contents and the parts of the
// system instruction.
func (m *Model) contents(msgs []toolloop.Message) ([]*genai.Content, []*genai.Part, error) {
	var out []*genai.Content
	var system []*genai.Part
	names := map[string]string{} // call ID to tool name, for results without one
	for i := range msgs {
		msg := &msgs[i]
		switch msg.Role {
		case toolloop.RoleSystem:
			for _, c := range msg.Content {
				if c.Type == toolloop.ContentReasoning {
					continue
				}
				if text := wire.AsText(c); text != "" {
					system = append(system, &genai.Part{Text: text})
				}
			}
		case toolloop.RoleUser:
			out = appendUser(out, m.userParts(msg.Content))
		case toolloop.RoleAssistant:
			for _, tc := range msg.ToolCalls {
				names[tc.ID] = tc.Name
			}
			out = appendParts(out, roleModel, m.modelParts(msg))
		case toolloop.RoleTool:
			if msg.Result == nil {
				return nil, nil, fmt.Errorf("gemini: message %d is a tool message without a result", i)
			}
			out = appendUser(out, functionResponse(msg.Result, names))
		default:
			return nil, nil, fmt.Errorf("gemini: message %d has unknown role %q", i, msg.Role)
		}
	}
	return out, system, nil
}

// appendParts adds parts to the conversation, merging them into the last
// content when it has the same role. Parts of nothing are left out: the
// API refuses an empty content.
func appendParts(out []*genai.Content, role string, parts []*genai.Part) []*genai.Content {
	if len(parts) == 0 {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Role == role {
		out[n-1].Parts = append(out[n-1].Parts, parts...)
		return out
	}
	return append(out, &genai.Content{Role: role, Parts: parts})
}

// appendUser adds the parts of a user message or a tool result to the
// conversation: to its last content when that is the user's, else to a
// new one, so that user and model contents alternate. The API wants the
// function responses to a turn's calls in one content, and refuses (on
// Gemini 3.6 Flash and later) a content where other parts follow them, so
// a user content keeps its other parts (images of results, a later user
// message such as the loop's wrap-up message) in order before all its
// function responses.
func appendUser(out []*genai.Content, parts []*genai.Part) []*genai.Content {
	if len(parts) == 0 {
		return out
	}
	parts = responsesLast(parts)
	n := len(out)
	if n == 0 || out[n-1].Role != roleUser {
		return append(out, &genai.Content{Role: roleUser, Parts: parts})
	}
	c := out[n-1]
	first := slices.IndexFunc(parts, isResponse)
	at := slices.IndexFunc(c.Parts, isResponse)
	if at < 0 || first == 0 {
		c.Parts = append(c.Parts, parts...)
		return out
	}
	if first < 0 {
		first = len(parts)
	}
	c.Parts = slices.Concat(c.Parts[:at], parts[:first], c.Parts[at:], parts[first:])
	return out
}

// responsesLast returns parts with the function responses after the other
// parts, each in order: parts itself when they already are.
func responsesLast(parts []*genai.Part) []*genai.Part {
	first := slices.IndexFunc(parts, isResponse)
	if first < 0 || !slices.ContainsFunc(parts[first:], func(p *genai.Part) bool { return !isResponse(p) }) {
		return parts
	}
	out := make([]*genai.Part, 0, len(parts))
	for _, p := range parts {
		if !isResponse(p) {
			out = append(out, p)
		}
	}
	for _, p := range parts {
		if isResponse(p) {
			out = append(out, p)
		}
	}
	return out
}

func isResponse(p *genai.Part) bool { return p.FunctionResponse != nil }

// userParts maps a user message's content.
func (m *Model) userParts(cs []toolloop.Content) []*genai.Part {
	parts := make([]*genai.Part, 0, len(cs))
	for _, c := range cs {
		if c.Type == toolloop.ContentReasoning {
			continue
		}
		if p := mediaPart(c); p != nil {
			parts = append(parts, p)
		} else if text := wire.AsText(c); text != "" {
			parts = append(parts, &genai.Part{Text: text})
		}
	}
	return parts
}

// imageTypes are the image MIME types the API takes as inline data.
var imageTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/webp": true, "image/heic": true, "image/heif": true,
}

// mediaPart returns the part for an image, audio or PDF block the API
// takes natively, or nil: bytes go inline, a URI with a MIME type as file
// data (an uploaded file's URI, or a URL the API can fetch).
func mediaPart(c toolloop.Content) *genai.Part {
	mime, _ := wire.ImageType(c.MIMEType)
	ok := false
	switch c.Type {
	case toolloop.ContentImage:
		ok = imageTypes[mime]
	case toolloop.ContentAudio:
		ok = strings.HasPrefix(mime, "audio/")
	case toolloop.ContentResource:
		ok = mime == "application/pdf"
	}
	switch {
	case !ok:
		return nil
	case len(c.Data) > 0:
		return &genai.Part{InlineData: &genai.Blob{MIMEType: mime, Data: c.Data}}
	case c.URI != "" && c.Type != toolloop.ContentResource:
		return &genai.Part{FileData: &genai.FileData{FileURI: c.URI, MIMEType: mime}}
	}
	return nil
}

// modelParts maps an assistant message to the parts of a model content:
// its content in order, then a function call per tool call. Gemini's own
// reasoning goes back where it came from: thought summaries as thought
// parts, a text part's signature on that text part, a function call's
// signature on that call's part. Every other provider's reasoning is
// dropped.
func (m *Model) modelParts(msg *toolloop.Message) []*genai.Part {
	parts := make([]*genai.Part, 0, len(msg.Content)+len(msg.ToolCalls))
	var callSigs map[string][]byte
	lastText := -1 // index in parts of a text part that a signature may follow
	for _, c := range msg.Content {
		switch {
		case c.Type == toolloop.ContentReasoning:
			if !wire.OwnReasoning(c, ProviderName) {
				continue
			}
			r := c.Reasoning
			sig := m.signature(r.Signature)
			switch {
			case r.CallID != "":
				if callSigs == nil {
					callSigs = map[string][]byte{}
				}
				callSigs[r.CallID] = sig
			case r.Summary || c.Text != "":
				parts = append(parts, &genai.Part{Text: c.Text, Thought: true, ThoughtSignature: sig})
			case sig == nil:
			case lastText >= 0 && lastText == len(parts)-1:
				parts[lastText].ThoughtSignature = sig
			default:
				parts = append(parts, &genai.Part{ThoughtSignature: sig})
			}
			lastText = -1
			continue
		case c.Type == toolloop.ContentText:
			if c.Text == "" {
				continue
			}
			parts = append(parts, &genai.Part{Text: c.Text})
		default:
			text := wire.AsText(c)
			if text == "" {
				continue
			}
			parts = append(parts, &genai.Part{Text: text})
		}
		lastText = len(parts) - 1
	}
	for _, tc := range msg.ToolCalls {
		args, wrapped := toolArgs(tc.Arguments)
		if wrapped {
			m.log.Debug("gemini: sent tool call arguments that are not a JSON object wrapped", "id", tc.ID, "tool", tc.Name)
		}
		fc := &genai.FunctionCall{Name: tc.Name, Args: args}
		if !generatedID(tc.ID) {
			fc.ID = tc.ID
		}
		parts = append(parts, &genai.Part{FunctionCall: fc, ThoughtSignature: callSigs[tc.ID]})
		delete(callSigs, tc.ID)
	}
	for id := range callSigs {
		m.log.Debug("gemini: dropped the thought signature of a tool call the message does not have", "id", id)
	}
	return parts
}

// signature decodes a thought signature, or returns nil if there is none
// or it is not base64.
func (m *Model) signature(s string) []byte {
	if s == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		m.log.Debug("gemini: dropped a thought signature that is not base64", "error", err)
		return nil
	}
	return b
}

// rawArgumentsKey holds arguments that are not a JSON object, as a string,
// in the object the API insists on.
const rawArgumentsKey = "raw_arguments"

// toolArgs returns the arguments to send for a call: a JSON object as it
// is, empty or null arguments as no arguments, and anything else wrapped
// as {"raw_arguments": "..."}.
func toolArgs(args json.RawMessage) (obj map[string]any, wrapped bool) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, false
	}
	if trimmed[0] == '{' {
		if err := decodeJSON(trimmed, &obj); err == nil {
			return obj, false
		}
	}
	return map[string]any{rawArgumentsKey: string(args)}, true
}

// decodeJSON decodes JSON keeping numbers as json.Number, so that they go
// out as they came in.
func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}

// functionResponse maps a tool result to a function response part, plus
// an inline part for each image it holds, each after a text part that
// says which call it belongs to. The response is {"output": ...} or, for a
// failed call, {"error": ...}, as the API documents: the JSON of a result
// that is one JSON block, the text of anything else.
func functionResponse(r *toolloop.ToolResult, names map[string]string) []*genai.Part {
	name := wire.FirstNonEmpty(r.Name, names[r.CallID])
	var media []*genai.Part
	var text strings.Builder
	var value any
	for _, c := range r.Content {
		if c.Type == toolloop.ContentReasoning {
			continue
		}
		if p := mediaPart(c); p != nil && c.Type != toolloop.ContentResource {
			media = append(media, p)
			continue
		}
		if c.Type == toolloop.ContentJSON && len(r.Content) == 1 {
			var v any
			if decodeJSON(c.JSON, &v) == nil {
				value = v
				continue
			}
		}
		if text.Len() > 0 && c.Type != toolloop.ContentText {
			text.WriteByte('\n')
		}
		text.WriteString(wire.AsText(c))
	}
	if value == nil {
		s := text.String()
		if s == "" && r.Error != nil {
			s = r.Error.Message
		}
		value = s
	}
	key := "output"
	if r.IsError() {
		key = "error"
	}
	fr := &genai.FunctionResponse{Name: name, Response: map[string]any{key: value}}
	if !generatedID(r.CallID) {
		fr.ID = r.CallID
	}
	parts := []*genai.Part{{FunctionResponse: fr}}
	for _, p := range media {
		parts = append(parts, &genai.Part{Text: fmt.Sprintf("Image output of tool call %s (%s):", r.CallID, name)}, p)
	}
	return parts
}
