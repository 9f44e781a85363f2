package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolloop/toolloop"
)

// answer is what one call of the model gave: the response or the error,
// and for a stream its deltas.
type answer struct {
	resp            *toolloop.Response
	err             error
	text, reasoning []string
	// probs are broken rules of the call itself: a changed request, a
	// chunk after the last.
	probs []string
}

// ask calls m with req, through Stream when stream is set (m must then
// be a toolloop.Streamer).
func ask(ctx context.Context, m toolloop.Model, req *toolloop.Request, stream bool) answer {
	before, _ := json.Marshal(req)
	var a answer
	if !stream {
		a.resp, a.err = m.Generate(ctx, req)
	} else {
		for ch, err := range m.(toolloop.Streamer).Stream(ctx, req) {
			if err != nil {
				a.err = err
				break
			}
			if a.resp != nil {
				a.probs = append(a.probs, "a chunk after the one with the response")
			}
			if ch.Text != "" {
				a.text = append(a.text, ch.Text)
			}
			if ch.Reasoning != "" {
				a.reasoning = append(a.reasoning, ch.Reasoning)
			}
			if ch.Response != nil {
				a.resp = ch.Response
			}
		}
		if a.err == nil && a.resp == nil {
			a.probs = append(a.probs, "the stream ended without a chunk holding the response")
		}
	}
	if after, _ := json.Marshal(req); !bytes.Equal(before, after) {
		a.probs = append(a.probs, "the call changed the request")
	}
	return a
}

// check returns what is wrong with a, the answer to req in the named
// turn, which was to be want.
func (a *answer) check(name string, stream bool, req *toolloop.Request, want *Want, lacks Features) []string {
	probs := a.probs
	if a.err != nil {
		return append(probs, fmt.Sprintf("the call failed: %v", a.err))
	}
	if a.resp == nil {
		return probs
	}
	probs = append(probs, checkAnswer(name, req, a.resp, &want.Response, lacks)...)
	if !stream {
		return probs
	}
	text := strings.Join(a.text, "")
	switch got := a.resp.Message.Text(); {
	case a.resp.StopReason == toolloop.StopRefusal && strings.HasPrefix(got, text):
		// A refusal may add a note to what was streamed.
	case got != text:
		probs = append(probs, fmt.Sprintf("the text deltas add up to %q, the response's text is %q", text, got))
	}
	if got := reasoningText(&a.resp.Message); got != strings.Join(a.reasoning, "") {
		probs = append(probs, fmt.Sprintf("the reasoning deltas add up to %q, the response's reasoning is %q", strings.Join(a.reasoning, ""), got))
	}
	if name == turnStreamText && len(a.text) < 2 {
		probs = append(probs, fmt.Sprintf("the text came in %d delta(s): a stream yields it as it comes", len(a.text)))
	}
	if want.Text != nil && !slices.Equal(a.text, want.Text) {
		probs = append(probs, fmt.Sprintf("text deltas %q, want %q", a.text, want.Text))
	}
	if want.Reasoning != nil && !slices.Equal(a.reasoning, want.Reasoning) {
		probs = append(probs, fmt.Sprintf("reasoning deltas %q, want %q", a.reasoning, want.Reasoning))
	}
	return probs
}
