package openai

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// chatReasoning is the Reasoning.Provider of the blocks this package
// writes.
const chatReasoning = "openai.chat"

// Field names of what Chat Completions servers send beyond OpenAI's
// types: DeepSeek and vLLM's reasoning text (vLLM and OpenRouter also call
// it reasoning), and Gemini's thought signatures.
const (
	fieldReasoningContent = "reasoning_content"
	fieldReasoning        = "reasoning"
	fieldExtraContent     = "extra_content"
)

// chatExtra is the Extra of the reasoning blocks this package writes.
type chatExtra struct {
	// Server is the server that wrote the block (see serverOf): the block
	// goes back to it only.
	Server string `json:"server"`
	// Field is the message field the reasoning text came in, when it was
	// not reasoning_content; it goes back in the same field. "content"
	// means chunks of the message's content (see chunks.go).
	Field string `json:"field,omitempty"`
	// Chunk is the type of the content chunks the text came in, with
	// Field "content": "thinking" (Mistral) goes back as a thinking chunk;
	// other types are not sent back.
	Chunk string `json:"chunk,omitempty"`
}

// serverOf names the server a model talks to, for reasoning blocks: the
// host (with its port) and path of the base URL, lowercased host, no
// trailing slash. Empty base means the SDK's default: OPENAI_BASE_URL, else
// OpenAI's API.
func serverOf(base string) string {
	if base == "" {
		base = os.Getenv("OPENAI_BASE_URL")
	}
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return strings.TrimRight(base, "/")
	}
	return strings.ToLower(u.Host) + strings.TrimRight(u.Path, "/")
}

// googleExtra is Gemini's extra_content, on a tool call or a message.
type googleExtra struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature,omitempty"`
	} `json:"google"`
}

func googleSignature(sig string) googleExtra {
	var g googleExtra
	g.Google.ThoughtSignature = sig
	return g
}

// turnExtras is what a turn carries beyond the SDK's types: the model's
// reasoning text and Gemini's thought signatures. Streams build it from
// deltas; answers, from the message.
type turnExtras struct {
	reasoning strings.Builder
	field     string         // fieldReasoning or fieldContent if the server used those
	chunk     string         // the type of content chunk, with fieldContent
	signature string         // the message's thought signature
	callSigs  map[int]string // thought signatures by tool call position
}

// addReasoning adds the reasoning text in fields, if any, and returns it.
// reasoning_content wins over reasoning when a server sends both.
func (x *turnExtras) addReasoning(fields map[string]respjson.Field) string {
	if len(fields) == 0 {
		return ""
	}
	for _, name := range [...]string{fieldReasoningContent, fieldReasoning} {
		if s := rawString(fields[name]); s != "" {
			if name == fieldReasoning {
				x.field = fieldReasoning
			}
			x.reasoning.WriteString(s)
			return s
		}
	}
	return ""
}

// addSignature keeps the thought signature in fields, of the message
// (call < 0) or of the tool call at position call.
func (x *turnExtras) addSignature(fields map[string]respjson.Field, call int) {
	f, ok := fields[fieldExtraContent]
	if !ok {
		return
	}
	var g googleExtra
	if json.Unmarshal([]byte(f.Raw()), &g) != nil || g.Google.ThoughtSignature == "" {
		return
	}
	if call < 0 {
		x.signature = g.Google.ThoughtSignature
		return
	}
	if x.callSigs == nil {
		x.callSigs = map[int]string{}
	}
	x.callSigs[call] = g.Google.ThoughtSignature
}

// messageExtras reads the extras of an answer's message, and rewrites
// its content if it came as a list of chunks.
func (m *Model) messageExtras(msg *oai.ChatCompletionMessage) *turnExtras {
	x := new(turnExtras)
	x.addReasoning(msg.JSON.ExtraFields)
	m.unchunkMessage(msg, x)
	x.addSignature(msg.JSON.ExtraFields, -1)
	for i, tc := range msg.ToolCalls {
		if strings.Contains(tc.RawJSON(), fieldExtraContent) {
			x.addSignature(tc.AsFunction().JSON.ExtraFields, i)
		}
	}
	return x
}

// rawString decodes a JSON string; anything else is "".
func rawString(f respjson.Field) string {
	raw := f.Raw()
	if !strings.HasPrefix(raw, `"`) {
		return ""
	}
	var s string
	_ = json.Unmarshal([]byte(raw), &s)
	return s
}

// blocks returns the turn's reasoning blocks, to go before its text: one
// for the message (reasoning text and thought signature), then one per
// tool call of calls with a thought signature (sigs, by call ID).
func (m *Model) blocks(x *turnExtras, calls []toolloop.ToolCall, sigs map[string]string) []toolloop.Content {
	var out []toolloop.Content
	if x.reasoning.Len() > 0 || x.signature != "" {
		out = append(out, toolloop.ReasoningContent(x.reasoning.String(), toolloop.Reasoning{
			Provider: chatReasoning, Signature: x.signature, Extra: m.extra(x.field, x.chunk)}))
	}
	for _, c := range calls {
		if sig := sigs[c.ID]; sig != "" {
			out = append(out, toolloop.ReasoningContent("", toolloop.Reasoning{
				Provider: chatReasoning, Signature: sig, CallID: c.ID, Extra: m.extra("", "")}))
		}
	}
	return out
}

// extra returns the Extra of a block this model writes.
func (m *Model) extra(field, chunk string) json.RawMessage {
	if field == "" {
		return m.serverExtra
	}
	b, _ := json.Marshal(chatExtra{Server: m.server, Field: field, Chunk: chunk})
	return b
}

// ownReasoning reports whether c is a reasoning block this package wrote
// talking to this model's server, and the field its text goes back in:
// fieldContent only for thinking chunks, and "" for text that does not
// go back.
func (m *Model) ownReasoning(c toolloop.Content) (field string, ok bool) {
	if !wire.OwnReasoning(c, chatReasoning) {
		return "", false
	}
	if bytes.Equal(c.Reasoning.Extra, m.serverExtra) {
		return fieldReasoningContent, true
	}
	var e chatExtra
	if json.Unmarshal(c.Reasoning.Extra, &e) != nil || e.Server != m.server {
		return "", false
	}
	if e.Field == fieldContent && e.Chunk != chunkThinking {
		return "", true
	}
	return wire.FirstNonEmpty(e.Field, fieldReasoningContent), true
}

// outgoingReasoning is what an assistant message sends back of its own
// reasoning blocks.
type outgoingReasoning struct {
	text      string
	field     string
	signature string
	callSigs  map[string]string
}

// reasoningOf collects the reasoning an assistant message sends back: the
// blocks this model's server wrote; every other reasoning block is
// dropped.
func (m *Model) reasoningOf(cs []toolloop.Content) outgoingReasoning {
	var out outgoingReasoning
	var text strings.Builder
	for _, c := range cs {
		if c.Type != toolloop.ContentReasoning {
			continue
		}
		field, ok := m.ownReasoning(c)
		if !ok {
			continue
		}
		r := c.Reasoning
		if r.CallID != "" {
			if r.Signature != "" {
				if out.callSigs == nil {
					out.callSigs = map[string]string{}
				}
				out.callSigs[r.CallID] = r.Signature
			}
			continue
		}
		if c.Text != "" && field != "" {
			text.WriteString(c.Text)
			out.field = field
		}
		if r.Signature != "" {
			out.signature = r.Signature
		}
	}
	out.text = text.String()
	return out
}

// set sets the message's reasoning on a, whose text is text, and the
// tool calls' thought signatures on its calls. Reasoning that came as
// thinking chunks goes back as the first chunk of a content list.
func (o *outgoingReasoning) set(a *oai.ChatCompletionAssistantMessageParam, text string) {
	var extras map[string]any
	switch {
	case o.text != "" && o.field == fieldContent:
		extras = map[string]any{fieldContent: thinkingChunks(o.text, text)}
	case o.text != "":
		extras = map[string]any{o.field: o.text}
	}
	if o.signature != "" {
		if extras == nil {
			extras = map[string]any{}
		}
		extras[fieldExtraContent] = googleSignature(o.signature)
	}
	if extras != nil {
		a.SetExtraFields(extras)
	}
	for _, tc := range a.ToolCalls {
		if f := tc.OfFunction; f != nil && o.callSigs[f.ID] != "" {
			f.SetExtraFields(map[string]any{fieldExtraContent: googleSignature(o.callSigs[f.ID])})
		}
	}
}
