package toolloop_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// waitTool reports progress once it runs, then blocks until its context
// is done and fails with the context's error.
func waitTool() toolloop.Tool {
	return toolFunc{spec: toolloop.ToolSpec{Name: "wait", Description: "Wait until cancelled."},
		run: func(ctx context.Context, c *toolloop.Call) (*toolloop.ToolResult, error) {
			c.ReportProgress(toolloop.Progress{Message: "waiting"})
			<-ctx.Done()
			return nil, ctx.Err()
		}}
}

func pingTool() toolloop.Tool {
	return toolloop.NewTool("ping", "Ping.", func(context.Context, struct{}) (any, error) { return "pong", nil })
}

// The stream yields the events OnEvent gets, in the same order, and its
// result is Run's.
func TestStreamYieldsEveryEventAndTheResult(t *testing.T) {
	script := func() toolloop.Model {
		return looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "ping", `{}`), looptest.Call("c2", "ping", `{}`))},
			looptest.Turn{Reply: looptest.Text("pong twice")})
	}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: script(), Tools: registry(t, pingTool()), OnEvent: rec.Record}
	s := l.RunStream(context.Background(), user("ping twice"))
	var got []toolloop.EventType
	for e := range s.Events() {
		got = append(got, e.Type)
	}
	res, err := s.Result()
	require.NoError(t, err)
	assert.Equal(t, rec.Types(), got, "OnEvent and the stream see the same events, in order")
	assert.Equal(t, toolloop.EventRunStart, got[0])
	assert.Equal(t, toolloop.EventRunEnd, got[len(got)-1])

	want, err := (&toolloop.AgentLoop{Model: script(), Tools: registry(t, pingTool())}).Run(context.Background(), user("ping twice"))
	require.NoError(t, err)
	assert.Equal(t, "pong twice", res.FinalText)
	assert.Equal(t, looptest.Canonical(want.Messages), looptest.Canonical(res.Messages))

	// Ranging again yields nothing; the result stays.
	for range s.Events() {
		t.Fatal("a second range over a stream's events yielded an event")
	}
	again, err := s.Result()
	require.NoError(t, err)
	assert.Same(t, res, again)
}

// The run waits while the loop body handles an event: OnEvent, which the
// loop calls just before the body, is never ahead of it, even with calls
// running in parallel and a body that takes its time.
func TestStreamBackPressure(t *testing.T) {
	rec := &looptest.Recorder{}
	calls := []toolloop.ToolCall{looptest.Call("c1", "ping", `{}`), looptest.Call("c2", "ping", `{}`), looptest.Call("c3", "ping", `{}`)}
	l := &toolloop.AgentLoop{
		Model:   looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(calls...)}, looptest.Turn{Reply: looptest.Text("done")}),
		Tools:   registry(t, pingTool()),
		OnEvent: rec.Record,
	}
	s := l.RunStream(context.Background(), user("go"))
	n := 0
	for e := range s.Events() {
		n++
		require.Len(t, rec.Events(), n, "the run went on while the body handled %s", e.Type)
		time.Sleep(time.Millisecond) // give a run that does not wait the chance to go ahead
		require.Len(t, rec.Events(), n, "the run went on while the body handled %s", e.Type)
	}
	_, err := s.Result()
	require.NoError(t, err)
	assert.Len(t, rec.Events(), n)
}

// Breaking out of the loop cancels the run; every call still gets its
// result, OnEvent still sees the rest of the run, and no goroutine is
// left behind once the range statement returns.
func TestStreamBreakCancelsTheRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{
		Model: looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(
			looptest.Call("c1", "ping", `{}`), looptest.Call("c2", "wait", `{}`), looptest.Call("c3", "ping", `{}`))}),
		Tools:   registry(t, pingTool(), waitTool()),
		OnEvent: rec.Record, Limits: toolloop.Limits{MaxConcurrency: 2},
	}
	s := l.RunStream(context.Background(), user("go"))
	var seen []toolloop.EventType
	for e := range s.Events() {
		seen = append(seen, e.Type)
		if e.Type == toolloop.EventProgress && e.CallID == "c2" {
			break // the tool is running; stop reading
		}
	}
	assert.NotContains(t, seen, toolloop.EventRunEnd)

	res, err := s.Result()
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	looptest.AssertValid(t, res.Messages)
	results := looptest.Results(res.Messages)
	require.Len(t, results, 3, "every call has its result")
	assert.Equal(t, toolloop.KindCanceled, results["c2"].Error.Kind)
	assert.Equal(t, toolloop.StopAborted, res.StopReason)

	ends := rec.Of(toolloop.EventRunEnd)
	require.Len(t, ends, 1, "OnEvent sees the run to its end")
}

// A panic in the loop body stops the run the same way, and propagates.
func TestStreamBodyPanic(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := &toolloop.AgentLoop{
		Model: looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "wait", `{}`))}),
		Tools: registry(t, waitTool()),
	}
	s := l.RunStream(context.Background(), user("go"))
	assert.PanicsWithValue(t, "body bug", func() {
		for e := range s.Events() {
			if e.Type == toolloop.EventProgress {
				panic("body bug")
			}
		}
	})
	res, err := s.Result()
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, toolloop.KindCanceled, looptest.Results(res.Messages)["c1"].Error.Kind)
}

// Breaking on the last event does not turn a finished run into a
// cancelled one.
func TestStreamBreakAfterTheEnd(t *testing.T) {
	l := &toolloop.AgentLoop{Model: looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("hi")})}
	s := l.RunStream(context.Background(), user("hi"))
	for e := range s.Events() {
		if e.Type == toolloop.EventRunEnd {
			break
		}
	}
	res, err := s.Result()
	require.NoError(t, err)
	assert.Equal(t, "hi", res.FinalText)
}

// Result without ranging runs the run, as Run does; called inside the
// range loop it refuses.
func TestStreamResultAlone(t *testing.T) {
	var events atomic.Int32
	l := &toolloop.AgentLoop{
		Model:   looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("hi")}),
		OnEvent: func(toolloop.Event) { events.Add(1) },
	}
	res, err := l.RunStream(context.Background(), user("hi")).Result()
	require.NoError(t, err)
	assert.Equal(t, "hi", res.FinalText)
	assert.NotZero(t, events.Load(), "OnEvent still gets the events")

	l = &toolloop.AgentLoop{Model: looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("hi")})}
	s := l.RunStream(context.Background(), user("hi"))
	for range s.Events() {
		inner, err := s.Result()
		require.Error(t, err)
		assert.Nil(t, inner)
	}
	res, err = s.Result()
	require.NoError(t, err)
	assert.Equal(t, "hi", res.FinalText)
}

// ResumeStream continues a paused run, its events streamed.
func TestResumeStream(t *testing.T) {
	deploy := toolloop.NewTool("deploy", "Deploy.", func(context.Context, struct{}) (any, error) { return "deployed", nil })
	deploy.Annotations.Destructive = true
	l := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "deploy", `{}`))},
			looptest.Turn{Reply: looptest.Text("Deployed.")}),
		Tools:            registry(t, deploy),
		Guard:            &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask}}},
		PauseForApproval: true,
	}
	s := l.RunStream(context.Background(), user("ship"))
	var first []toolloop.EventType
	for e := range s.Events() {
		first = append(first, e.Type)
	}
	paused, err := s.Result()
	require.ErrorIs(t, err, toolloop.ErrPaused)
	assert.Contains(t, first, toolloop.EventRunPaused)

	s = l.ResumeStream(context.Background(), paused.Paused, map[string]toolloop.Approval{"c1": {Approved: true}})
	var second []toolloop.EventType
	var output string
	for e := range s.Events() {
		second = append(second, e.Type)
		if e.Type == toolloop.EventComplete {
			output = e.Result.Text()
		}
	}
	res, err := s.Result()
	require.NoError(t, err)
	assert.Equal(t, toolloop.EventRunResumed, second[0])
	assert.Equal(t, "deployed", output)
	assert.Equal(t, "Deployed.", res.FinalText)
}

// A run that cannot start yields no events; Result says why.
func TestStreamSetupError(t *testing.T) {
	s := (&toolloop.AgentLoop{}).RunStream(context.Background(), user("hi"))
	for range s.Events() {
		t.Fatal("a run with no model yielded an event")
	}
	_, err := s.Result()
	require.ErrorIs(t, err, toolloop.ErrNoModel)
}

// A streaming model's text deltas reach the loop body as they come.
func TestStreamModelDeltas(t *testing.T) {
	s := (&toolloop.AgentLoop{Model: &streamer{}}).RunStream(context.Background(), user("hi"))
	var text string
	for e := range s.Events() {
		if e.Type == toolloop.EventModelDelta {
			text += e.Text
		}
	}
	res, err := s.Result()
	require.NoError(t, err)
	assert.Equal(t, "Hello!", text)
	assert.Equal(t, res.FinalText, text)
}

// BenchmarkRunStreamOneCall is BenchmarkRunOneCall with its events read
// through RunStream; BenchmarkRunOneCallOnEvent reads them through
// OnEvent, for comparison. The difference is the cost of handing each
// event to the range loop's goroutine and waiting for it.
func BenchmarkRunStreamOneCall(b *testing.B) {
	l := benchLoop()
	in := []toolloop.Message{toolloop.UserMessage("go")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s := l.RunStream(ctx, in)
		n := 0
		for range s.Events() {
			n++
		}
		if _, err := s.Result(); err != nil || n == 0 {
			b.Fatal(err, n)
		}
	}
}

func BenchmarkRunOneCallOnEvent(b *testing.B) {
	l := benchLoop()
	n := 0
	l.OnEvent = func(toolloop.Event) { n++ }
	in := []toolloop.Message{toolloop.UserMessage("go")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Run(ctx, in); err != nil || n == 0 {
			b.Fatal(err, n)
		}
	}
}

func benchLoop() *toolloop.AgentLoop {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("read", "reads", func(_ context.Context, in pathCount) (any, error) { return in.Path, nil }))
	return &toolloop.AgentLoop{
		Model: &cycle{calls: []toolloop.ToolCall{{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"src/main.go","count":3}`)}}},
		Tools: &reg,
	}
}
