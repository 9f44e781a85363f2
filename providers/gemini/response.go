package gemini

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
)

// generatedIDPrefix starts the IDs this package makes up for function
// calls that came without one. Such IDs are never sent back to the API.
const generatedIDPrefix = "gemini-call-"

// generatedID reports whether id was made up by this package.
func generatedID(id string) bool { return strings.HasPrefix(id, generatedIDPrefix) }

// The texts of refusals and errors that came without one of their own.
const (
	blockedText   = "The prompt was blocked by the provider's content filters (block reason: %s)."
	filteredText  = "The answer was withheld by the provider's content filters (finish reason: %s)."
	filteredNote  = "\n\n[The rest of the answer was withheld by the provider's content filters (finish reason: %s).]"
	malformedText = "The model's function call was rejected by the API (finish reason: %s)."
)

// turn assembles one model turn from a response, or from the chunks of a
// streamed one.
type turn struct {
	m      *Model
	stream bool
	msg    toolloop.Message

	// open is the index in msg.Content of the text or thought block that
	// streamed text is being added to, or -1; openThought says which.
	open        int
	openThought bool

	finish      genai.FinishReason
	finishMsg   string
	blockReason genai.BlockedReason
	blockMsg    string
	usage       *genai.GenerateContentResponseUsageMetadata
	model       string
	responseID  string
	calls       int
}

func (m *Model) newTurn(stream bool) *turn {
	return &turn{m: m, stream: stream, msg: toolloop.Message{Role: toolloop.RoleAssistant}, open: -1}
}

// add adds a response, or one chunk of a stream, to the turn. When emit is
// set, it is called with each text and thought delta; add returns false
// as soon as emit does.
func (t *turn) add(resp *genai.GenerateContentResponse, emit func(toolloop.Chunk) bool) bool {
	if resp == nil {
		return true
	}
	if resp.UsageMetadata != nil {
		t.usage = resp.UsageMetadata
	}
	if resp.ModelVersion != "" {
		t.model = resp.ModelVersion
	}
	if resp.ResponseID != "" {
		t.responseID = resp.ResponseID
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		t.blockReason, t.blockMsg = pf.BlockReason, pf.BlockReasonMessage
	}
	if len(resp.Candidates) == 0 {
		return true
	}
	cand := resp.Candidates[0]
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		t.finish, t.finishMsg = cand.FinishReason, cand.FinishMessage
	}
	if cand.Content == nil {
		return true
	}
	for _, p := range cand.Content.Parts {
		if p == nil {
			continue
		}
		if ch, ok := t.part(p); ok && emit != nil && !emit(ch) {
			return false
		}
	}
	return true
}

// part adds one part to the turn and returns the delta to stream, if any.
func (t *turn) part(p *genai.Part) (toolloop.Chunk, bool) {
	sig := ""
	if len(p.ThoughtSignature) > 0 {
		sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	switch {
	case p.FunctionCall != nil:
		t.open = -1
		t.call(p.FunctionCall, sig)
		return toolloop.Chunk{}, false
	case p.Thought:
		t.appendText(p.Text, sig, true)
		return toolloop.Chunk{Reasoning: p.Text}, p.Text != ""
	case p.InlineData != nil, p.FileData != nil, p.ExecutableCode != nil, p.CodeExecutionResult != nil,
		p.ToolCall != nil, p.ToolResponse != nil, p.FunctionResponse != nil:
		t.open = -1
		t.m.log.Debug("gemini: left out a part of the answer", "kind", partKind(p))
		return toolloop.Chunk{}, false
	}
	t.appendText(p.Text, sig, false)
	return toolloop.Chunk{Text: p.Text}, p.Text != ""
}

// appendText adds a text or thought part. While streaming, consecutive
// pieces of the same kind join one block until one brings a signature,
// which closes it; a signature on a text part becomes a reasoning block
// right after the text it belongs to.
func (t *turn) appendText(text, sig string, thought bool) {
	c := &t.msg.Content
	if t.stream && t.open >= 0 && t.openThought == thought {
		b := &(*c)[t.open]
		b.Text += text
		if thought {
			b.Reasoning.Signature = sig
		}
	} else {
		switch {
		case thought:
			*c = append(*c, toolloop.ReasoningContent(text, toolloop.Reasoning{Provider: ProviderName, Summary: true, Signature: sig}))
		case text != "":
			*c = append(*c, toolloop.TextContent(text))
		}
		t.open, t.openThought = len(*c)-1, thought
		if !thought && text == "" {
			t.open = -1
		}
	}
	if sig != "" {
		if !thought {
			*c = append(*c, toolloop.ReasoningContent("", toolloop.Reasoning{Provider: ProviderName, Signature: sig}))
		}
		t.open = -1
	}
}

// call adds a function call, with its signature as a reasoning block tied
// to it. A call without an ID gets one made up from the response's ID.
func (t *turn) call(fc *genai.FunctionCall, sig string) {
	id := fc.ID
	if id == "" {
		id = t.newID()
	}
	args := json.RawMessage("{}")
	if len(fc.Args) > 0 {
		if b, err := json.Marshal(fc.Args); err == nil {
			args = b
		}
	}
	t.msg.ToolCalls = append(t.msg.ToolCalls, toolloop.ToolCall{ID: id, Name: fc.Name, Arguments: args})
	if sig != "" {
		t.msg.Content = append(t.msg.Content, toolloop.ReasoningContent("", toolloop.Reasoning{Provider: ProviderName, Signature: sig, CallID: id}))
	}
}

// newID returns an ID for the turn's next call that has none: made from
// the response's ID, so the same response gives the same IDs, or random
// when the response has no ID.
func (t *turn) newID() string {
	t.calls++
	if t.responseID != "" {
		return fmt.Sprintf("%s%s-%d", generatedIDPrefix, t.responseID, t.calls)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s%s-%d", generatedIDPrefix, hex.EncodeToString(b[:]), t.calls)
}

// finished reports whether the API said why the turn ended.
func (t *turn) finished() bool { return t.finish != "" || t.blockReason != "" }

// response returns the assembled turn.
func (t *turn) response() *toolloop.Response {
	resp := &toolloop.Response{Message: t.msg, Model: t.model}
	if u := t.usage; u != nil {
		resp.Usage = toolloop.Usage{
			InputTokens:     int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount),
			OutputTokens:    int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			CacheReadTokens: int64(u.CachedContentTokenCount),
			ReasoningTokens: int64(u.ThoughtsTokenCount),
		}
	}
	hasCalls := len(t.msg.ToolCalls) > 0
	switch {
	case t.blockReason != "":
		t.refuse(resp, fmt.Sprintf(blockedText, t.blockReason), t.blockMsg)
	case refused(t.finish):
		t.refuse(resp, fmt.Sprintf(filteredText, t.finish), t.finishMsg)
	case t.finish == genai.FinishReasonMaxTokens:
		resp.StopReason = toolloop.StopLength
	case badCall(t.finish):
		t.dropCalls(resp, "a rejected function call")
		text := fmt.Sprintf(malformedText, t.finish)
		if t.finishMsg != "" {
			text += " " + t.finishMsg
		}
		resp.Message.Content = append(resp.Message.Content, toolloop.TextContent(text))
		resp.StopReason = toolloop.StopError
	default:
		switch t.finish {
		case genai.FinishReasonStop, "":
		default:
			t.m.log.Debug("gemini: unknown finish reason", "finish_reason", t.finish)
		}
		resp.StopReason = toolloop.StopEnd
		if hasCalls {
			resp.StopReason = toolloop.StopToolUse
		}
	}
	return resp
}

// refused reports whether a finish reason says the answer was filtered.
func refused(r genai.FinishReason) bool {
	switch r {
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonProhibitedContent,
		genai.FinishReasonBlocklist, genai.FinishReasonSPII, genai.FinishReasonLanguage,
		genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return true
	}
	return false
}

// badCall reports whether a finish reason says the model's function call
// was rejected.
func badCall(r genai.FinishReason) bool {
	switch r {
	case genai.FinishReasonMalformedFunctionCall, genai.FinishReasonUnexpectedToolCall, genai.FinishReasonTooManyToolCalls:
		return true
	}
	return false
}

// refuse turns resp into a refusal whose text says so, with the API's
// explanation when it gave one. Tool calls of a refused turn are dropped:
// they must not run.
func (t *turn) refuse(resp *toolloop.Response, why, explanation string) {
	t.dropCalls(resp, "a refused turn")
	if explanation != "" {
		why += " " + explanation
	}
	if resp.Message.Text() != "" {
		why = "\n\n[" + why + "]"
	}
	resp.Message.Content = append(resp.Message.Content, toolloop.TextContent(why))
	resp.StopReason = toolloop.StopRefusal
}

// dropCalls drops the tool calls of resp, and the signatures tied to them.
func (t *turn) dropCalls(resp *toolloop.Response, what string) {
	msg := &resp.Message
	if len(msg.ToolCalls) == 0 {
		return
	}
	t.m.log.Debug("gemini: dropped the tool calls of "+what, "calls", len(msg.ToolCalls))
	msg.ToolCalls = nil
	kept := msg.Content[:0:0]
	for _, c := range msg.Content {
		if c.Reasoning == nil || c.Reasoning.CallID == "" {
			kept = append(kept, c)
		}
	}
	msg.Content = kept
}

// partKind names the kind of a part this package leaves out, for logs.
func partKind(p *genai.Part) string {
	switch {
	case p.InlineData != nil:
		return "inline_data"
	case p.FileData != nil:
		return "file_data"
	case p.ExecutableCode != nil:
		return "executable_code"
	case p.CodeExecutionResult != nil:
		return "code_execution_result"
	case p.ToolCall != nil:
		return "tool_call"
	case p.ToolResponse != nil:
		return "tool_response"
	}
	return "function_response"
}
