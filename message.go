package toolloop

import (
	"encoding/json"
	"strings"
)

// Role is who wrote a [Message].
type Role string

// The roles of a transcript.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool marks a message that carries one [ToolResult].
	RoleTool Role = "tool"
)

// ContentType says which fields of a [Content] are set.
type ContentType string

// The content types. Providers map each to their own wire shape.
const (
	// ContentText is UTF-8 text in Content.Text.
	ContentText ContentType = "text"
	// ContentImage is an image: bytes in Content.Data with Content.MIMEType,
	// or a URL in Content.URI.
	ContentImage ContentType = "image"
	// ContentAudio is audio bytes in Content.Data with Content.MIMEType.
	ContentAudio ContentType = "audio"
	// ContentJSON is a JSON value in Content.JSON.
	ContentJSON ContentType = "json"
	// ContentResource is a resource named by Content.URI, with its text in
	// Content.Text or its bytes in Content.Data when the resource is embedded.
	ContentResource ContentType = "resource"
	// ContentReasoning is the model's reasoning, in an assistant message:
	// its visible or summarized text in Content.Text (empty when the
	// provider withheld it) and what the provider needs back to continue
	// the conversation in Content.Reasoning. It is never part of
	// [Message.Text] or a run's final text.
	ContentReasoning ContentType = "reasoning"
)

// Content is one block of a message or of a tool result. Build it with
// [TextContent], [ImageContent] or [JSONContent] rather than by hand.
type Content struct {
	Type ContentType `json:"type"`
	// Text is the text of a text block, or of an embedded text resource.
	Text string `json:"text,omitempty"`
	// Data holds image, audio or binary resource bytes (base64 in JSON).
	Data []byte `json:"data,omitempty"`
	// MIMEType describes Data, or the resource named by URI.
	MIMEType string `json:"mime_type,omitempty"`
	// URI is an image URL or a resource URI.
	URI string `json:"uri,omitempty"`
	// JSON is the value of a JSON block.
	JSON json.RawMessage `json:"json,omitempty"`
	// Reasoning is set on a reasoning block.
	Reasoning *Reasoning `json:"reasoning,omitempty"`
}

// Reasoning is the provider's part of a reasoning block: what it must be
// sent back, exactly, for the conversation to continue. Several providers
// reject a turn whose earlier reasoning is missing or altered (Anthropic's
// extended thinking with tools, DeepSeek's reasoner, Gemini's thought
// signatures); the Responses API uses it to carry reasoning between turns
// without storing it.
//
// A provider sends a reasoning block back, in its place, only when
// Provider names it; it drops every other provider's blocks, whose
// signatures it could not verify. Nothing but the provider that made it
// should build or change one.
type Reasoning struct {
	// Provider names the API that produced the block: each provider
	// package documents the name it writes, such as "anthropic".
	Provider string `json:"provider"`
	// ID is the provider's identifier of the block, where it has one.
	ID string `json:"id,omitempty"`
	// Signature is an opaque token that vouches for the reasoning text
	// (Anthropic's thinking signature, Gemini's thought signature).
	Signature string `json:"signature,omitempty"`
	// Encrypted is reasoning the provider encrypted for itself: Anthropic's
	// redacted thinking, the Responses API's encrypted content.
	Encrypted string `json:"encrypted,omitempty"`
	// Redacted reports that the provider withheld the reasoning text; it
	// travels in Encrypted only.
	Redacted bool `json:"redacted,omitempty"`
	// Summary reports that the block's text is a summary of the reasoning,
	// not the reasoning itself.
	Summary bool `json:"summary,omitempty"`
	// CallID ties the block to a tool call of the same message: the
	// provider sends it back with that call, or just before it (Gemini
	// attaches thought signatures to function calls; Anthropic's
	// interleaved thinking precedes a tool_use). Empty means the block
	// keeps its place among the message's content.
	CallID string `json:"call_id,omitempty"`
	// Extra is anything else the provider needs to send the block back,
	// in its own JSON.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// ReasoningContent returns a reasoning block with the given visible text
// (which may be empty) and provider data. Providers call it; agents only
// carry what they get back.
func ReasoningContent(text string, r Reasoning) Content {
	return Content{Type: ContentReasoning, Text: text, Reasoning: &r}
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: ContentText, Text: text} }

// ImageContent returns an image block holding data of the given MIME type.
func ImageContent(mimeType string, data []byte) Content {
	return Content{Type: ContentImage, MIMEType: mimeType, Data: data}
}

// JSONContent returns a JSON block. raw must be valid JSON.
func JSONContent(raw json.RawMessage) Content { return Content{Type: ContentJSON, JSON: raw} }

// StopReason says why the model ended its turn.
type StopReason string

// The stop reasons. Providers map theirs onto these.
const (
	// StopEnd: the model finished its answer.
	StopEnd StopReason = "stop"
	// StopToolUse: the model wants its tool calls run.
	StopToolUse StopReason = "tool_use"
	// StopLength: the output hit the token limit; the turn is cut off.
	StopLength StopReason = "length"
	// StopRefusal: the provider refused or filtered the answer. The
	// message's text says so; it is never an empty answer.
	StopRefusal StopReason = "refusal"
	// StopError: the provider reported an error for this turn.
	StopError StopReason = "error"
	// StopAborted: the turn was cancelled before it ended.
	StopAborted StopReason = "aborted"
	// StopInterrupted: an [Inbox.Interrupt] stopped the run, or cut the
	// model's turn short (on the assistant message holding the text it
	// had streamed).
	StopInterrupted StopReason = "interrupted"
)

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CacheReadTokens and CacheWriteTokens are the parts of InputTokens
	// served from or written to a provider's prompt cache, where reported.
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens the model spent
	// reasoning, where reported. Providers that report reasoning apart
	// from the answer have it added into OutputTokens, so OutputTokens is
	// always every token billed as output.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// CacheHitRatio is the part of the input tokens served from the
// provider's prompt cache: CacheReadTokens over InputTokens, 0 when there
// were none. On a run's Accounting (RunResult.Usage) it is the ratio of
// the whole run: cached input is billed at a fraction of the price, so it
// says most of what the run's input cost.
func (u *Usage) CacheHitRatio() float64 {
	if u.InputTokens <= 0 {
		return 0
	}
	return float64(u.CacheReadTokens) / float64(u.InputTokens)
}

// ToolCall is a model's request to run a tool. ID is echoed back verbatim
// in the [ToolResult] that answers it.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments are the arguments exactly as the model sent them. They may
	// be malformed; the loop's validation stage deals with that.
	Arguments json.RawMessage `json:"arguments"`
}

// toolCallJSON is the wire form of ToolCall. Arguments that are not valid
// JSON cannot be carried in a json.RawMessage, nor can JSON nested deeper
// than MaxJSONDepth be read back inside a transcript, so such arguments
// travel as a string in RawArguments and the transcript still round-trips
// without loss.
type toolCallJSON struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	RawArguments *string         `json:"raw_arguments,omitempty"`
}

// MarshalJSON implements [json.Marshaler].
func (c ToolCall) MarshalJSON() ([]byte, error) {
	w := toolCallJSON{ID: c.ID, Name: c.Name}
	if json.Valid(c.Arguments) && !tooDeep(c.Arguments) {
		w.Arguments = c.Arguments
	} else {
		s := string(c.Arguments)
		w.RawArguments = &s
	}
	return json.Marshal(w)
}

// UnmarshalJSON implements [json.Unmarshaler].
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var w toolCallJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	c.ID, c.Name, c.Arguments = w.ID, w.Name, w.Arguments
	if w.RawArguments != nil {
		c.Arguments = json.RawMessage(*w.RawArguments)
	}
	return nil
}

// Message is one entry of a provider-neutral transcript.
//
// System and user messages carry Content. Assistant messages carry Content
// and ToolCalls, and the loop stamps them with the turn's StopReason, Usage
// and Model. A tool message carries exactly one Result, answering one call
// of the assistant message before it.
type Message struct {
	Role      Role        `json:"role"`
	Content   []Content   `json:"content,omitempty"`
	ToolCalls []ToolCall  `json:"tool_calls,omitempty"`
	Result    *ToolResult `json:"result,omitempty"`

	StopReason StopReason `json:"stop_reason,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
	Model      string     `json:"model,omitempty"`
}

// UserMessage returns a user message with one text block.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Content: []Content{TextContent(text)}}
}

// SystemMessage returns a system message with one text block.
func SystemMessage(text string) Message {
	return Message{Role: RoleSystem, Content: []Content{TextContent(text)}}
}

// ToolMessage returns the tool message that carries r.
func ToolMessage(r *ToolResult) Message { return Message{Role: RoleTool, Result: r} }

// Text returns the message's text blocks joined, in order.
func (m *Message) Text() string { return joinText(m.Content) }

func joinText(cs []Content) string {
	switch n := countText(cs); n {
	case 0:
		return ""
	case 1:
		for _, c := range cs {
			if c.Type == ContentText {
				return c.Text
			}
		}
	}
	var b strings.Builder
	for _, c := range cs {
		if c.Type == ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func countText(cs []Content) int {
	n := 0
	for _, c := range cs {
		if c.Type == ContentText {
			n++
		}
	}
	return n
}

// The tool choice modes.
const (
	// ToolChoiceAuto lets the model choose whether to call tools.
	ToolChoiceAuto ToolChoiceMode = ""
	// ToolChoiceNone forbids tool calls: the model answers in text. The
	// tools are still sent, as providers require for a transcript that
	// holds calls.
	ToolChoiceNone ToolChoiceMode = "none"
	// ToolChoiceRequired makes the model call at least one tool: the one
	// ToolChoice.Name names, or any.
	ToolChoiceRequired ToolChoiceMode = "required"
)
