package openai

import (
	"encoding/json"
	"strings"

	oai "github.com/openai/openai-go/v3"
)

// Content as a list of chunks. OpenAI's types say a message's content is a
// string; some OpenAI-compatible servers send a list of typed chunks
// instead: Mistral's reasoning models (magistral) answer with
//
//	"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "..."}]},
//	            {"type": "text", "text": "..."}]
//
// and stream delta.content the same way while they think, then as plain
// strings. The SDK reads such a list as its raw JSON text, which would
// show the reasoning as the answer; these functions read it instead.

// fieldContent is the Field of a reasoning block whose text came as
// chunks of the message's content; it goes back the same way.
const fieldContent = "content"

// The chunk types read from a content list. Any other type (Mistral's
// reference chunks, say) is skipped and logged at debug level.
const (
	chunkText     = "text"
	chunkRefusal  = "refusal"
	chunkThinking = "thinking" // Mistral: the text in a list of text chunks
	// Reasoning text in a chunk of its own, as some gateways send it; it
	// is kept but not sent back, since no server is known to take it.
	chunkReasoning     = "reasoning"
	chunkReasoningText = "reasoning_text"
)

// contentChunk is one chunk of a content list.
type contentChunk struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
	// Thinking is Mistral's thinking: a list of text chunks (or, from
	// some servers, a string).
	Thinking json.RawMessage `json:"thinking"`
	// Reasoning is the text of a reasoning chunk that names it so.
	Reasoning string `json:"reasoning"`
}

// chunked is what a content list holds, its chunks of each kind joined.
type chunked struct {
	text, refusal, reasoning string
	// kind is the chunk type the reasoning came in.
	kind string
}

// readChunks reads content given as a list of chunks; ok is false when raw
// (the content's JSON) is not a list, such as a plain string or null.
func (m *Model) readChunks(raw string) (c chunked, ok bool) {
	raw = strings.TrimSpace(raw)
	if !strings.HasPrefix(raw, "[") {
		return c, false
	}
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		m.log.Debug("openai: content that is not a list of chunks was left out", "error", err)
		return c, true
	}
	var text, refusal, reasoning strings.Builder
	for _, item := range list {
		var ch contentChunk
		if err := json.Unmarshal(item, &ch); err != nil {
			m.log.Debug("openai: skipped a content chunk that is not an object", "chunk", string(item))
			continue
		}
		switch ch.Type {
		case chunkText:
			text.WriteString(ch.Text)
		case chunkRefusal:
			refusal.WriteString(ch.Refusal)
		case chunkThinking:
			reasoning.WriteString(thinkingText(ch.Thinking))
			c.kind = chunkThinking
		case chunkReasoning, chunkReasoningText:
			reasoning.WriteString(ch.Text + ch.Reasoning)
			if c.kind == "" {
				c.kind = ch.Type
			}
		default:
			m.log.Debug("openai: skipped a content chunk of unknown type", "type", ch.Type)
		}
	}
	c.text, c.refusal, c.reasoning = text.String(), refusal.String(), reasoning.String()
	return c, true
}

// thinkingText returns the text of Mistral's thinking: the text chunks of
// a list, or a string.
func thinkingText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []contentChunk
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == chunkText || p.Type == "" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// unchunkDelta rewrites a streamed delta whose content is a list of
// chunks: its text becomes the content, its refusal is added to the
// refusal, and its reasoning goes to x and is returned, so that the
// accumulator builds the turn from text alone.
func (m *Model) unchunkDelta(d *oai.ChatCompletionChunkChoiceDelta, x *turnExtras) string {
	c, ok := m.readChunks(d.JSON.Content.Raw())
	if !ok {
		return ""
	}
	d.Content = c.text
	d.Refusal += c.refusal
	x.addChunked(c)
	return c.reasoning
}

// unchunkMessage does for an answer's message what unchunkDelta does for
// a delta.
func (m *Model) unchunkMessage(msg *oai.ChatCompletionMessage, x *turnExtras) {
	c, ok := m.readChunks(msg.JSON.Content.Raw())
	if !ok {
		return
	}
	msg.Content = c.text
	msg.Refusal += c.refusal
	x.addChunked(c)
}

// addChunked adds the reasoning of a content list.
func (x *turnExtras) addChunked(c chunked) {
	if c.reasoning == "" {
		return
	}
	x.reasoning.WriteString(c.reasoning)
	x.field, x.chunk = fieldContent, c.kind
}

// thinkingChunks returns the content a Mistral assistant message goes
// back with: its thinking as a thinking chunk, then its text.
func thinkingChunks(thinking, text string) []any {
	out := []any{map[string]any{
		"type":     chunkThinking,
		"thinking": []any{map[string]any{"type": chunkText, "text": thinking}},
	}}
	if text != "" {
		out = append(out, map[string]any{"type": chunkText, "text": text})
	}
	return out
}
