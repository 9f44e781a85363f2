package providertest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolloop/toolloop"
)

// checkAnswer returns what is wrong with resp, the model's answer to
// req in the named turn: against the turn's rules, then against want.
func checkAnswer(name string, req *toolloop.Request, resp *toolloop.Response, want *toolloop.Response, lacks Features) []string {
	if resp == nil {
		return []string{"nil response without an error"}
	}
	probs := rules(name, req, resp, lacks)
	if d := diffAnswer(resp, want, lacks); d != "" {
		probs = append(probs, "the response differs from the one wanted:\n"+d)
	}
	return probs
}

// rules returns how resp breaks the rules of the named turn, and those of
// every answer: an assistant message with a known stop reason, calls
// with distinct IDs naming offered tools, reasoning blocks that name
// their provider and stay out of the text, usage that adds up.
func rules(name string, req *toolloop.Request, resp *toolloop.Response, lacks Features) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	msg := &resp.Message
	if msg.Role != toolloop.RoleAssistant {
		bad("the message's role is %q, want %q", msg.Role, toolloop.RoleAssistant)
	}
	calls, reasoning := len(msg.ToolCalls), 0
	for _, c := range msg.Content {
		if c.Type != toolloop.ContentReasoning {
			continue
		}
		reasoning++
		switch {
		case c.Reasoning == nil:
			bad("a reasoning block has no Reasoning")
		case c.Reasoning.Provider == "":
			bad("a reasoning block names no provider")
		}
		if c.Text != "" && strings.Contains(msg.Text(), c.Text) {
			bad("the reasoning %q is in the message's text", c.Text)
		}
	}
	stop := func(want toolloop.StopReason) {
		if resp.StopReason != want {
			bad("stop reason %q, want %q", resp.StopReason, want)
		}
	}
	if name == turnText && !lacks.Usage && (resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0) {
		bad("usage %+v: want input and output tokens", resp.Usage)
	}
	switch strings.TrimPrefix(name, "stream_") {
	case turnText:
		stop(toolloop.StopEnd)
		if msg.Text() == "" || calls > 0 {
			bad("want a text answer without calls, got text %q and %d calls", msg.Text(), calls)
		}
	case turnToolCall:
		stop(toolloop.StopToolUse)
		if calls != 1 {
			bad("%d tool calls, want 1", calls)
		}
	case turnParallel:
		stop(toolloop.StopToolUse)
		if calls < 2 {
			bad("%d tool calls, want 2 or more", calls)
		}
	case "tool_calls":
		stop(toolloop.StopToolUse)
		if calls == 0 {
			bad("no tool calls")
		}
	case turnLength:
		stop(toolloop.StopLength)
	case turnRefusal:
		stop(toolloop.StopRefusal)
		if msg.Text() == "" {
			bad("a refusal without text: the message must say the answer was refused")
		}
	case turnReasoning:
		if reasoning == 0 {
			bad("no reasoning blocks")
		}
	case turnOutput:
		stop(toolloop.StopEnd)
		var v map[string]any
		if err := json.Unmarshal([]byte(msg.Text()), &v); err != nil {
			bad("the structured answer %q is not a JSON object: %v", msg.Text(), err)
		}
	}
	if resp.StopReason != toolloop.StopLength {
		probs = append(probs, checkCalls(req, msg.ToolCalls)...)
	}
	u := resp.Usage
	switch {
	case lacks.Usage && u != (toolloop.Usage{}):
		bad("usage %+v from a provider that reports none", u)
	case u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 || u.ReasoningTokens < 0:
		bad("usage %+v has a negative count", u)
	case u.CacheReadTokens+u.CacheWriteTokens > u.InputTokens:
		bad("usage %+v: the cached tokens are part of the input tokens", u)
	case u.ReasoningTokens > u.OutputTokens:
		bad("usage %+v: the reasoning tokens are part of the output tokens", u)
	}
	return probs
}

// checkCalls returns what is wrong with calls made in answer to req:
// each needs an ID of its own, the name of an offered tool, and a JSON
// object for arguments.
func checkCalls(req *toolloop.Request, calls []toolloop.ToolCall) []string {
	var probs []string
	seen := map[string]bool{}
	for _, c := range calls {
		if c.ID == "" || seen[c.ID] {
			probs = append(probs, fmt.Sprintf("tool call ID %q is empty or repeated", c.ID))
		}
		seen[c.ID] = true
		if !slices.ContainsFunc(req.Tools, func(s toolloop.ToolSpec) bool { return s.Name == c.Name }) {
			probs = append(probs, fmt.Sprintf("call %s of tool %q, which was not offered", c.ID, c.Name))
		}
		var args map[string]any
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			probs = append(probs, fmt.Sprintf("call %s has arguments that are not a JSON object: %s", c.ID, c.Arguments))
		}
	}
	return probs
}

// diffAnswer compares resp with want as JSON. A reasoning block of want
// without a provider takes the provider of resp's block in its place;
// with lacks.Usage, want's usage is 0.
func diffAnswer(resp, want *toolloop.Response, lacks Features) string {
	w := *want
	w.Message.Content = slices.Clone(w.Message.Content)
	for i, c := range w.Message.Content {
		if c.Reasoning == nil || c.Reasoning.Provider != "" || i >= len(resp.Message.Content) || resp.Message.Content[i].Reasoning == nil {
			continue
		}
		r := *c.Reasoning
		r.Provider = resp.Message.Content[i].Reasoning.Provider
		w.Message.Content[i].Reasoning = &r
	}
	if lacks.Usage {
		w.Usage = toolloop.Usage{}
	}
	wb, err := json.Marshal(w)
	if err != nil {
		return err.Error()
	}
	gb, err := json.Marshal(resp)
	if err != nil {
		return err.Error()
	}
	return diffJSON(wb, gb)
}

// reasoningText joins the text of msg's reasoning blocks.
func reasoningText(msg *toolloop.Message) string {
	var b strings.Builder
	for _, c := range msg.Content {
		if c.Type == toolloop.ContentReasoning {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}
