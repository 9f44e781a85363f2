package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolloop/toolloop"
)

// foreign is reasoning another provider wrote: a model must not send it.
var foreign = toolloop.Reasoning{Provider: "providertest.elsewhere",
	Signature: "cHJvdmlkZXJ0ZXN0LXNpZ25hdHVyZQ==", Encrypted: "cHJvdmlkZXJ0ZXN0LWVuY3J5cHRlZA=="}

// foreignText is the text of the foreign reasoning blocks.
const foreignText = "Another provider's reasoning, which must not be sent."

// reasoning checks, for each reply of the reasoning turn, that the next
// request carries the answer's reasoning blocks back, and not another
// provider's.
func (r *runner) reasoning(t *testing.T) {
	srv, m := r.serve(t, 0)
	req := weatherRequest()
	tn := turn(turnReasoning, req)
	for i, reply := range r.replies(t, tn, "") {
		t.Run(reply.name(i), func(t *testing.T) {
			srv.add(reply)
			a := ask(context.Background(), m, req, false)
			if a.err != nil {
				t.Fatalf("the reasoning turn failed: %v", a.err)
			}
			next := nextRequest(req, a.resp.Message)
			srv.add(r.first(t, turnText, next))
			if b := ask(context.Background(), m, next, false); b.err != nil {
				t.Fatalf("the turn after the reasoning failed: %v", b.err)
			}
			bodies := srv.Bodies()
			report(t, checkSentBack(a.resp.Message, bodies[len(bodies)-1]))
		})
	}
}

// nextRequest is req followed by msg, the model's answer, with another
// provider's reasoning blocks added to it (one tied to its first call),
// and the results of its calls, or a user's message.
func nextRequest(req *toolloop.Request, msg toolloop.Message) *toolloop.Request {
	next := *req
	next.Messages = slices.Clone(req.Messages)
	msg.Content = append([]toolloop.Content{toolloop.ReasoningContent(foreignText, foreign)}, msg.Content...)
	if len(msg.ToolCalls) > 0 {
		tied := foreign
		tied.CallID = msg.ToolCalls[0].ID
		msg.Content = append(msg.Content, toolloop.ReasoningContent(foreignText, tied))
	}
	next.Messages = append(next.Messages, msg)
	for _, c := range msg.ToolCalls {
		next.Messages = append(next.Messages, toolloop.ToolMessage(&toolloop.ToolResult{CallID: c.ID, Name: c.Name,
			Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("18 °C, light rain")}}))
	}
	if len(msg.ToolCalls) == 0 {
		next.Messages = append(next.Messages, toolloop.UserMessage("Go on."))
	}
	return &next
}

// checkSentBack returns what body, the request after msg, lacks of msg's
// reasoning blocks (their signature and encrypted content, or else each
// paragraph of their text), and what it carries of the foreign blocks.
func checkSentBack(msg toolloop.Message, body []byte) []string {
	strs := jsonStrings(body)
	has := func(s string) bool {
		return slices.ContainsFunc(strs, func(x string) bool { return strings.Contains(x, s) })
	}
	var probs []string
	for _, c := range msg.Content {
		if c.Type != toolloop.ContentReasoning || c.Reasoning == nil {
			continue
		}
		var need []string
		for _, s := range []string{c.Reasoning.Signature, c.Reasoning.Encrypted} {
			if s != "" {
				need = append(need, s)
			}
		}
		if len(need) == 0 {
			for _, p := range strings.Split(c.Text, "\n\n") {
				if p = strings.TrimSpace(p); p != "" {
					need = append(need, p)
				}
			}
		}
		for _, s := range need {
			if !has(s) {
				probs = append(probs, fmt.Sprintf("the next request does not send back %q of the reasoning block %q", s, c.Text))
			}
		}
	}
	for _, s := range []string{foreignText, foreign.Signature, foreign.Encrypted} {
		if has(s) || bytes.Contains(body, []byte(s)) {
			probs = append(probs, fmt.Sprintf("the next request sends %q of another provider's reasoning", s))
		}
	}
	return probs
}

// jsonStrings returns every string in the JSON document b, keys
// included, or b itself if it is not JSON.
func jsonStrings(b []byte) []string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return []string{string(b)}
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				out = append(out, k)
				walk(x)
			}
		}
	}
	walk(v)
	return out
}
