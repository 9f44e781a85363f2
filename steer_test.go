package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// stepModel answers each turn with its function, given the turn (from 1)
// and the request; it streams the reply's text in two halves first, and
// a function that returns nil waits for the context instead (a model cut
// short after streaming "partial ").
type stepModel struct {
	mu    sync.Mutex
	turn  int
	reqs  [][]toolloop.Message
	reply func(turn int, req *toolloop.Request) *toolloop.Response
	// streamed, if set, is told when the model has streamed its first
	// half (or "partial ", for a turn that waits).
	streamed func(turn int)
}

func (m *stepModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	return nil, errors.New("stepModel streams")
}

func (m *stepModel) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	m.mu.Lock()
	m.turn++
	n := m.turn
	m.reqs = append(m.reqs, append([]toolloop.Message(nil), req.Messages...))
	m.mu.Unlock()
	return func(yield func(toolloop.Chunk, error) bool) {
		resp := m.reply(n, req)
		if resp == nil {
			if !yield(toolloop.Chunk{Text: "partial "}, nil) {
				return
			}
			if m.streamed != nil {
				m.streamed(n)
			}
			<-ctx.Done()
			yield(toolloop.Chunk{}, ctx.Err())
			return
		}
		text := resp.Message.Text()
		if text != "" {
			if !yield(toolloop.Chunk{Text: text[:len(text)/2]}, nil) {
				return
			}
		}
		if m.streamed != nil {
			m.streamed(n)
		}
		if text != "" && !yield(toolloop.Chunk{Text: text[len(text)/2:]}, nil) {
			return
		}
		yield(toolloop.Chunk{Response: resp}, nil)
	}
}

// requests returns the transcripts the model was sent.
func (m *stepModel) requests() [][]toolloop.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reqs
}

// hold is a tool that signals it started and waits for its context or
// for release.
type hold struct {
	started chan string
	release chan struct{}
	ran     sync.Map
}

func newHold() *hold { return &hold{started: make(chan string, 16), release: make(chan struct{})} }

func (h *hold) tool() toolloop.Tool {
	return toolloop.NewTool("hold", "waits", func(ctx context.Context, in struct {
		ID string `json:"id"`
	}) (any, error) {
		h.ran.Store(in.ID, true)
		h.started <- in.ID
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.release:
			return "done " + in.ID, nil
		}
	})
}

func holdCalls(ids ...string) *toolloop.Response {
	var calls []toolloop.ToolCall
	for _, id := range ids {
		calls = append(calls, looptest.Call(id, "hold", `{"id":"`+id+`"}`))
	}
	return looptest.Calls(calls...)
}

func userTexts(msgs []toolloop.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == toolloop.RoleUser {
			out = append(out, m.Text())
		}
	}
	return out
}

func TestSteerMessageDeliveredBeforeNextRequest(t *testing.T) {
	h := newHold()
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return holdCalls("c1")
		}
		return looptest.Text("ok")
	}}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool()), OnEvent: rec.Record}
	go func() {
		<-h.started
		in.Send(toolloop.UserMessage("use staging"), toolloop.UserMessage("not prod"))
		close(h.release)
	}()
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("deploy"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	reqs := m.requests()
	require.Len(t, reqs, 2)
	second := reqs[1]
	assert.Equal(t, []string{"deploy", "use staging", "not prod"}, userTexts(second))
	// After the call's result, never between the call and its result.
	assert.Equal(t, toolloop.RoleTool, second[2].Role)
	assert.Equal(t, toolloop.RoleUser, second[3].Role)
	ev := rec.Of(toolloop.EventUserMessage)
	require.Len(t, ev, 2)
	assert.Equal(t, toolloop.OriginSteer, ev[0].Origin)
	assert.Equal(t, "not prod", ev[1].Messages[0].Text())
	assert.Empty(t, res.Undelivered)
	assert.Zero(t, in.Len())
}

func TestFollowUpContinuesTheRun(t *testing.T) {
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		return looptest.Text("answer " + string(rune('0'+turn)))
	}}
	m.streamed = func(turn int) {
		if turn == 1 {
			in.FollowUp(toolloop.UserMessage("and then?"))
		}
	}
	l := &toolloop.AgentLoop{Model: m}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("go"))
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "and then?"}, userTexts(res.Messages))
	assert.Equal(t, "answer 2", res.FinalText)
	assert.Equal(t, 2, res.Turns)
}

func TestFollowUpWaitsForTheEnd(t *testing.T) {
	h := newHold()
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		switch turn {
		case 1:
			return holdCalls("c1")
		case 2:
			return holdCalls("c2")
		}
		return looptest.Text("done")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool())}
	go func() {
		<-h.started
		in.FollowUp(toolloop.UserMessage("later"))
		in.Send(toolloop.UserMessage("now"))
		h.release <- struct{}{}
		<-h.started
		h.release <- struct{}{}
	}()
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.NoError(t, err)
	reqs := m.requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []string{"task", "now"}, userTexts(reqs[1]))
	assert.Equal(t, []string{"task", "now"}, userTexts(reqs[2]))
	assert.Equal(t, []string{"task", "now", "later"}, userTexts(reqs[3]))
	looptest.AssertValid(t, res.Messages)
}

func TestInterruptNowDuringModel(t *testing.T) {
	for _, cont := range []bool{false, true} {
		in := &toolloop.Inbox{}
		m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
			if turn == 1 {
				return nil // streams "partial " and waits
			}
			return looptest.Text("redirected")
		}}
		m.streamed = func(turn int) {
			if turn == 1 {
				in.Send(toolloop.UserMessage("stop, do this instead"))
				assert.True(t, in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow, Continue: cont}))
			}
		}
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: m, OnEvent: rec.Record}
		res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
		looptest.AssertValid(t, res.Messages)
		cut := res.Messages[1]
		assert.Equal(t, toolloop.RoleAssistant, cut.Role)
		assert.Equal(t, "partial", cut.Text(), "kept, trailing space trimmed")
		assert.Equal(t, toolloop.StopInterrupted, cut.StopReason)
		ev := rec.Of(toolloop.EventRunInterrupted)
		require.Len(t, ev, 1)
		assert.Equal(t, toolloop.InterruptNow, ev[0].Interrupt.Mode)
		if !cont {
			require.ErrorIs(t, err, toolloop.ErrInterrupted)
			assert.Equal(t, toolloop.StopInterrupted, res.StopReason)
			require.Len(t, res.Undelivered, 1, "the queued message is returned")
			assert.Equal(t, "stop, do this instead", res.Undelivered[0].Text())
			assert.Len(t, res.Messages, 2)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, "redirected", res.FinalText)
		assert.Equal(t, []string{"task", "stop, do this instead"}, userTexts(res.Messages))
		assert.Empty(t, res.Undelivered)
	}
}

func TestInterruptNowCancelsRunningCalls(t *testing.T) {
	h := newHold()
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		return holdCalls("c1", "c2")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool())}
	go func() {
		<-h.started
		<-h.started
		in.Interrupt(toolloop.Interrupt{})
	}()
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	looptest.AssertValid(t, res.Messages)
	for _, id := range []string{"c1", "c2"} {
		r := resultOf(t, res, id)
		assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
		assert.Contains(t, r.Text(), "interrupted")
	}
	assert.Equal(t, 1, res.Turns)
}

func TestInterruptAfterModelRunsNoCall(t *testing.T) {
	h := newHold()
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			resp := holdCalls("c1", "c2")
			resp.Message.Content = []toolloop.Content{toolloop.TextContent("calling")}
			return resp
		}
		return looptest.Text("fine")
	}}
	m.streamed = func(turn int) {
		if turn == 1 {
			in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterModel, Continue: true})
			in.Send(toolloop.UserMessage("never mind"))
		}
	}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool())}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	for _, id := range []string{"c1", "c2"} {
		_, ran := h.ran.Load(id)
		assert.False(t, ran, id)
		assert.Contains(t, resultOf(t, res, id).Text(), "interrupted before this call started")
	}
	assert.Equal(t, "calling", res.Messages[1].Text(), "the model's turn was finished")
	assert.Equal(t, []string{"task", "never mind"}, userTexts(res.Messages))
	assert.Equal(t, "fine", res.FinalText)
}

func TestInterruptAfterToolsLetsCallsFinish(t *testing.T) {
	h := newHold()
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		return holdCalls("c1")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool())}
	go func() {
		<-h.started
		in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterTools})
		close(h.release)
	}()
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "done c1", resultOf(t, res, "c1").Text())
	assert.Len(t, m.requests(), 1)
}

func TestInterruptWithNoRunDoesNothing(t *testing.T) {
	var in toolloop.Inbox
	assert.False(t, in.Interrupt(toolloop.Interrupt{}))
	in.Send(toolloop.UserMessage("first"))
	in.Send(toolloop.Message{}) // no content: ignored
	assert.Equal(t, 1, in.Len())
	m := &stepModel{reply: func(int, *toolloop.Request) *toolloop.Response { return looptest.Text("hi") }}
	res, err := (&toolloop.AgentLoop{Model: m}).Run(toolloop.WithInbox(context.Background(), &in), user("task"))
	require.NoError(t, err)
	assert.Equal(t, []string{"task", "first"}, userTexts(m.requests()[0]), "queued before the run: delivered before its first request")
	assert.Equal(t, "hi", res.FinalText)
}

func TestInboxBusy(t *testing.T) {
	h := newHold()
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return holdCalls("c1")
		}
		return looptest.Text("ok")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool())}
	ctx := toolloop.WithInbox(context.Background(), in)
	done := make(chan error)
	go func() {
		_, err := l.Run(ctx, user("task"))
		done <- err
	}()
	<-h.started
	res, err := l.Run(ctx, user("other"))
	require.ErrorIs(t, err, toolloop.ErrInboxBusy)
	assert.Nil(t, res)
	close(h.release)
	require.NoError(t, <-done)
}

func TestUndeliveredOnLimit(t *testing.T) {
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		return looptest.Calls(looptest.Call("c"+string(rune('0'+turn)), "echo", `{}`))
	}}
	m.streamed = func(turn int) {
		if turn == 2 {
			in.Send(toolloop.UserMessage("too late"))
		}
	}
	echo := toolloop.NewTool("echo", "echo", func(context.Context, struct{}) (any, error) { return "ok", nil })
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, echo), Budget: toolloop.Budget{MaxTurns: 2}}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.ErrorIs(t, err, toolloop.ErrBudget)
	require.Len(t, res.Undelivered, 1)
	assert.Equal(t, "too late", res.Undelivered[0].Text())
	assert.Zero(t, in.Len())
	in.Send(toolloop.UserMessage("after"))
	assert.Equal(t, []string{"after"}, userTexts(in.Take()), "sent after the run: left in the inbox")
}

func TestPausedRunKeepsQueuedMessages(t *testing.T) {
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return looptest.Calls(looptest.Call("c1", "rm", `{}`))
		}
		return looptest.Text("removed")
	}}
	m.streamed = func(turn int) {
		if turn == 1 {
			in.Send(toolloop.UserMessage("careful"))
			in.FollowUp(toolloop.UserMessage("then report"))
		}
	}
	rm := toolloop.NewTool("rm", "removes", func(context.Context, struct{}) (any, error) { return "gone", nil })
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, rm), PauseForApproval: true, OnEvent: rec.Record,
		Guard: &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "rm", Decision: toolloop.Ask}}}}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("clean"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.Len(t, res.Paused.Queued, 2)
	assert.Empty(t, res.Undelivered)
	assert.Equal(t, toolloop.OriginFollowUp, res.Paused.Queued[1].Origin)

	// The pause survives JSON and a log: resume it from the replayed log.
	var rp eventlog.Replay
	for _, e := range rec.Events() {
		rp.Add(e)
	}
	require.NotNil(t, rp.Paused)
	assert.Equal(t, res.Paused.Queued, rp.Paused.Queued)
	b, err := json.Marshal(res.Paused)
	require.NoError(t, err)
	var st toolloop.PauseState
	require.NoError(t, json.Unmarshal(b, &st))
	st.Queued = append(st.Queued, toolloop.QueuedMessage{Origin: toolloop.OriginSteer, Message: toolloop.UserMessage("while paused")})

	res, err = l.Resume(context.Background(), &st, map[string]toolloop.Approval{"c1": {Approved: true}})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	reqs := m.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"clean", "careful", "while paused"}, userTexts(reqs[1]))
	assert.Equal(t, []string{"clean", "careful", "while paused", "then report"}, userTexts(reqs[2]))
}

func TestStreamInbox(t *testing.T) {
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return nil
		}
		return looptest.Text("second")
	}}
	l := &toolloop.AgentLoop{Model: m}
	s := l.RunStream(context.Background(), user("task"))
	var types []toolloop.EventType
	for e := range s.Events() {
		types = append(types, e.Type)
		if e.Type == toolloop.EventModelDelta && e.Turn == 1 {
			s.Inbox().Send(toolloop.UserMessage("go on"))
			s.Inbox().Interrupt(toolloop.Interrupt{Continue: true})
		}
	}
	res, err := s.Result()
	require.NoError(t, err)
	assert.Equal(t, "second", res.FinalText)
	assert.Contains(t, types, toolloop.EventRunInterrupted)
	assert.Contains(t, types, toolloop.EventUserMessage)
	looptest.AssertValid(t, res.Messages)

	// The log replays to what the model saw.
	var rp eventlog.Replay
	_ = rp
}

func TestSubAgentDoesNotTakeTheInbox(t *testing.T) {
	in := &toolloop.Inbox{}
	childModel := &stepModel{reply: func(int, *toolloop.Request) *toolloop.Response { return looptest.Text("child done") }}
	child := toolloop.NewAgentTool("helper", "helps", &toolloop.AgentLoop{Model: childModel})
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return looptest.Calls(looptest.Call("a1", "helper", `{"task":"x"}`))
		}
		return looptest.Text("parent done")
	}}
	m.streamed = func(turn int) {
		if turn == 1 {
			in.Send(toolloop.UserMessage("for the parent"))
		}
	}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, child)}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.NoError(t, err)
	assert.Equal(t, "child done", resultOf(t, res, "a1").Text())
	assert.Equal(t, []string{"x"}, userTexts(childModel.requests()[0]))
	assert.Equal(t, []string{"task", "for the parent"}, userTexts(res.Messages))
}

func TestInterruptStopsTheWrapUpTurn(t *testing.T) {
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return looptest.Calls(looptest.Call("c1", "echo", `{}`))
		}
		return nil // the wrap-up turn streams and waits
	}}
	m.streamed = func(turn int) {
		if turn == 2 {
			in.Interrupt(toolloop.Interrupt{})
		}
	}
	echo := toolloop.NewTool("echo", "echo", func(context.Context, struct{}) (any, error) { return "ok", nil })
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, echo), OnEvent: rec.Record,
		Budget: toolloop.Budget{MaxTurns: 1, WrapUp: true}}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.ErrorIs(t, err, toolloop.ErrBudget)
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	looptest.AssertValid(t, res.Messages)
	last := res.Messages[len(res.Messages)-1]
	assert.Equal(t, "partial", last.Text())
	assert.Equal(t, toolloop.StopInterrupted, last.StopReason)
	require.Len(t, rec.Of(toolloop.EventRunInterrupted), 1)
}

// An interrupt after the tools that is pending when the turn pauses for
// approval is kept in the pause state: the resumed turn finishes, and
// the run stops before its next model request.
func TestInterruptAfterToolsSurvivesPause(t *testing.T) {
	h := newHold()
	in := &toolloop.Inbox{}
	rm := toolloop.NewTool("rm", "removes", func(context.Context, struct{}) (any, error) { return "gone", nil })
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return looptest.Calls(looptest.Call("c1", "hold", `{"id":"c1"}`), looptest.Call("c2", "rm", `{}`))
		}
		return looptest.Text("done")
	}}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool(), rm), PauseForApproval: true, OnEvent: rec.Record,
		Limits: toolloop.Limits{MaxConcurrency: 2},
		Guard:  &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "confirm-rm", Tools: []string{"rm"}, Decision: toolloop.Ask}}}}
	go func() {
		<-h.started
		in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterTools})
		close(h.release)
	}()
	ctx := toolloop.WithInbox(context.Background(), in)
	res, err := l.Run(ctx, user("clean up"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.NotNil(t, res.Paused.Interrupt)
	assert.Equal(t, toolloop.InterruptAfterTools, res.Paused.Interrupt.Mode)

	var rp eventlog.Replay
	for _, e := range rec.Events() {
		rp.Add(e)
	}
	require.NotNil(t, rp.Paused)
	assert.Equal(t, res.Paused.Interrupt, rp.Paused.Interrupt, "a log keeps it")

	res, err = l.Resume(ctx, res.Paused, map[string]toolloop.Approval{"c2": {Approved: true}})
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	assert.Equal(t, "gone", resultOf(t, res, "c2").Text(), "the paused turn finished")
	assert.Len(t, m.requests(), 1, "and the run stopped before its next request")
	looptest.AssertValid(t, res.Messages)
}

// An interrupt now pending when a turn would pause answers the held call
// as not run and acts instead of pausing.
func TestInterruptNowInsteadOfPause(t *testing.T) {
	h := newHold()
	in := &toolloop.Inbox{}
	var rmRan bool
	rm := toolloop.NewTool("rm", "removes", func(context.Context, struct{}) (any, error) { rmRan = true; return "gone", nil })
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		return looptest.Calls(looptest.Call("c1", "hold", `{"id":"c1"}`), looptest.Call("c2", "rm", `{}`))
	}}
	held := make(chan struct{})
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, h.tool(), rm), PauseForApproval: true,
		Limits: toolloop.Limits{MaxConcurrency: 2},
		Guard:  &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "confirm-rm", Tools: []string{"rm"}, Decision: toolloop.Ask}}},
		OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventGuardVerdict && e.CallID == "c2" {
				close(held) // c2 waits for approval now
			}
		}}
	go func() {
		<-h.started
		<-held
		in.Interrupt(toolloop.Interrupt{})
	}()
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("clean up"))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	assert.Nil(t, res.Paused)
	assert.False(t, rmRan)
	assert.Contains(t, resultOf(t, res, "c2").Text(), "interrupted while this call waited for approval")
	assert.Equal(t, toolloop.KindCanceled, resultOf(t, res, "c1").Error.Kind)
	looptest.AssertValid(t, res.Messages)
}

// Going on from a cut turn with nothing queued: the loop says why in a
// user message, so that no request ends with the assistant's message.
func TestInterruptContinueWithNothingQueued(t *testing.T) {
	in := &toolloop.Inbox{}
	m := &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return nil
		}
		return looptest.Text("again")
	}}
	m.streamed = func(turn int) {
		if turn == 1 {
			in.Interrupt(toolloop.Interrupt{Continue: true})
		}
	}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, OnEvent: rec.Record}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), user("task"))
	require.NoError(t, err)
	reqs := m.requests()
	require.Len(t, reqs, 2)
	last := reqs[1][len(reqs[1])-1]
	assert.Equal(t, toolloop.RoleUser, last.Role)
	assert.Equal(t, toolloop.InterruptedNote, last.Text())
	ev := rec.Of(toolloop.EventUserMessage)
	require.Len(t, ev, 1)
	assert.Equal(t, toolloop.OriginInterrupt, ev[0].Origin)
	assert.Equal(t, "again", res.FinalText)
}
