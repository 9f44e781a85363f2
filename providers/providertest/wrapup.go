package providertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
)

// wrapUpMark is in the message of every wrap-up turn.
const wrapUpMark = "reached its limit"

// tools returns the kit's tools, which answer any city.
func tools() *toolloop.ToolRegistry {
	var reg toolloop.ToolRegistry
	reg.MustRegister(
		toolloop.NewTool(weatherTool.Name, weatherTool.Description, func(_ context.Context, in struct {
			City string `json:"city"`
		}) (any, error) {
			return "18 °C and light rain in " + in.City, nil
		}),
		toolloop.NewTool(convertTool.Name, convertTool.Description, func(_ context.Context, in struct {
			Celsius float64 `json:"celsius"`
		}) (any, error) {
			return fmt.Sprintf("%.1f°F", in.Celsius*9/5+32), nil
		}),
	)
	return &reg
}

// wrapUp runs a loop whose tool-call budget ends it after the first
// turn's calls, and whose wrap-up turn is answered with long, a
// context-length error: once, after which the loop leaves the tool turn
// out and gets its answer; or, when nothingFits, every time.
func (r *runner) wrapUp(t *testing.T, long ErrorCase, nothingFits bool) {
	srv, m := r.serve(t, 0)
	calls, answer := turnToolCall, turnText
	if r.streams {
		calls, answer = turnStreamToolCalls, turnStreamText
	}
	task := []toolloop.Message{toolloop.SystemMessage("You are a weather assistant. Use the tools."), toolloop.UserMessage("What's the weather in Paris?")}
	first := r.first(t, calls, weatherRequest())
	want, err := r.want(turn(calls, weatherRequest()), first, srv)
	if err != nil {
		t.Fatal(err)
	}
	tooLong := long.Reply
	tooLong.Contains = append(tooLong.Contains, wrapUpMark)
	srv.add(first, tooLong)
	final := r.first(t, answer, weatherRequest())
	finalWant, err := r.want(turn(answer, weatherRequest()), final, srv)
	if err != nil {
		t.Fatal(err)
	}
	if nothingFits {
		final = tooLong
	}
	final.Contains = append(final.Contains, wrapUpMark, toolloop.WrapUpOmitted)
	srv.add(final)

	var mu sync.Mutex
	trims := 0
	loop := &toolloop.AgentLoop{Model: m, Tools: tools(),
		Budget: toolloop.Budget{MaxToolCalls: len(want.Response.Message.ToolCalls), WrapUp: true},
		OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventTranscriptEdited && e.Edit != nil && e.Edit.Strategy == "wrap_up_trim" {
				mu.Lock()
				trims++
				mu.Unlock()
			}
		}}
	res, err := loop.Run(context.Background(), task)
	var be *toolloop.BudgetError
	if !errors.As(err, &be) {
		t.Errorf("the run ended with %v, want the tool-call budget's *toolloop.BudgetError", err)
	}
	if res == nil {
		t.Fatal("the run has no result")
	}
	if msg := validTranscript(res.Messages); msg != "" {
		t.Errorf("the transcript is not valid: %s", msg)
	}
	if nothingFits {
		if !errors.Is(err, providers.ErrContextLength) {
			t.Errorf("when no wrap-up request fits, the run ends with %v; want the limit's error joined to the context-length error", err)
		}
		if last := res.Messages[len(res.Messages)-1]; last.Role != toolloop.RoleUser || !strings.Contains(last.Text(), wrapUpMark) {
			t.Errorf("when no wrap-up request fits, the transcript ends with a %s message %q; want the unanswered wrap-up message", last.Role, last.Text())
		}
		return
	}
	if errors.Is(err, providers.ErrContextLength) {
		t.Errorf("the run ended with %v: the overflow was not recovered from", err)
	}
	if text := finalWant.Response.Message.Text(); res.FinalText != text || res.StopReason != toolloop.StopEnd {
		t.Errorf("the run's answer %q (stop %q), want %q (stop %q)", res.FinalText, res.StopReason, text, toolloop.StopEnd)
	}
	omitted, kept := 0, false
	for _, msg := range res.Messages {
		omitted += strings.Count(msg.Text(), toolloop.WrapUpOmitted)
		kept = kept || msg.Role == toolloop.RoleUser && msg.Text() == task[1].Text()
	}
	if omitted != 1 || !kept || trims != 1 {
		t.Errorf("the transcript left the old turns out %d time(s), with %d wrap_up_trim edit(s), and the task kept: %v; want once, once, and true", omitted, trims, kept)
	}
}

// validTranscript says why msgs is not a valid transcript (every call
// answered by one result, right after the message that makes it, in
// call order, and no other result), or "".
func validTranscript(msgs []toolloop.Message) string {
	var pending []toolloop.ToolCall
	for i, m := range msgs {
		if m.Role != toolloop.RoleTool {
			if len(pending) > 0 {
				return fmt.Sprintf("message %d: call %s has no result", i, pending[0].ID)
			}
			pending = m.ToolCalls
			continue
		}
		if m.Result == nil || len(pending) == 0 || m.Result.CallID != pending[0].ID {
			return fmt.Sprintf("message %d: a result that answers no call in order", i)
		}
		pending = pending[1:]
	}
	if len(pending) > 0 {
		return fmt.Sprintf("call %s has no result", pending[0].ID)
	}
	return ""
}
