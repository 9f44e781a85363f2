package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func user(text string) []toolloop.Message { return []toolloop.Message{toolloop.UserMessage(text)} }

func registry(t *testing.T, tools ...toolloop.Tool) *toolloop.ToolRegistry {
	t.Helper()
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.Register(tools...))
	return &reg
}

// oneTurn runs a loop whose model makes calls once, then stops.
func oneTurn(t *testing.T, l *toolloop.AgentLoop, calls ...toolloop.ToolCall) (*toolloop.RunResult, error) {
	t.Helper()
	l.Model = looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(calls...)}, looptest.Turn{Reply: looptest.Text("done")})
	res, err := l.Run(context.Background(), user("go"))
	if res != nil {
		looptest.AssertValid(t, res.Messages)
	}
	return res, err
}

func resultOf(t *testing.T, res *toolloop.RunResult, id string) *toolloop.ToolResult {
	t.Helper()
	r := looptest.Results(res.Messages)[id]
	require.NotNil(t, r, "no result for %s", id)
	return r
}

func TestRunNeedsModel(t *testing.T) {
	_, err := (&toolloop.AgentLoop{}).Run(context.Background(), user("hi"))
	require.ErrorIs(t, err, toolloop.ErrNoModel)
}

func TestRunDoesNotModifyInput(t *testing.T) {
	in := user("hi")
	in = append(in[:1:1], toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{looptest.Call("x", "missing", `{}`)}})
	before := looptest.Canonical(in)
	l := &toolloop.AgentLoop{Model: looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("ok")})}
	res, err := l.Run(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, before, looptest.Canonical(in))
	assert.Len(t, res.Messages, 4, "input, synthesized result, answer")
}

func TestNoRegistryIsNotFound(t *testing.T) {
	res, err := oneTurn(t, &toolloop.AgentLoop{}, looptest.Call("c1", "anything", `{}`))
	require.NoError(t, err)
	assert.Equal(t, toolloop.KindNotFound, resultOf(t, res, "c1").Error.Kind)
}

func TestDefaultMaxTurns(t *testing.T) {
	turns := make([]looptest.Turn, toolloop.Budget{}.WithDefaults().MaxTurns)
	for i := range turns {
		turns[i] = looptest.Turn{Reply: looptest.Calls(looptest.Call("c", "nope", `{}`))}
	}
	l := &toolloop.AgentLoop{Model: looptest.NewModel(t, turns...)}
	res, err := l.Run(context.Background(), user("loop"))
	require.ErrorIs(t, err, toolloop.ErrBudget)
	assert.Equal(t, toolloop.Budget{}.WithDefaults().MaxTurns, res.Turns)
	looptest.AssertValid(t, res.Messages)
}

func TestModelErrors(t *testing.T) {
	errProvider := errors.New("provider exploded")
	tests := []struct {
		name  string
		model toolloop.Model
		is    error
		stop  toolloop.StopReason
	}{
		{"error is wrapped", toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
			return nil, errProvider
		}), errProvider, toolloop.StopError},
		{"panic becomes an error", toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
			panic("bad provider")
		}), nil, toolloop.StopError},
		{"nil response", toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
			return nil, nil
		}), nil, toolloop.StopError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := (&toolloop.AgentLoop{Model: tt.model}).Run(context.Background(), user("hi"))
			require.Error(t, err)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
			assert.Equal(t, tt.stop, res.StopReason)
			assert.Len(t, res.Messages, 1)
		})
	}
}

func TestCallIDsAreMadeUsable(t *testing.T) {
	reg := registry(t, toolloop.NewTool("echo", "Echo.", func(_ context.Context, in struct {
		S string `json:"s"`
	}) (any, error) {
		return in.S, nil
	}))
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: reg},
		looptest.Call("", "echo", `{"s":"a"}`), looptest.Call("dup", "echo", `{"s":"b"}`), looptest.Call("dup", "echo", `{"s":"c"}`))
	require.NoError(t, err)
	calls := res.Messages[1].ToolCalls
	ids := []string{calls[0].ID, calls[1].ID, calls[2].ID}
	assert.Equal(t, []string{"call_1_0", "dup", "dup_2"}, ids)
	for i, id := range ids {
		assert.Equal(t, []string{"a", "b", "c"}[i], resultOf(t, res, id).Text())
	}
}

// TestHangingToolIsLeftBehind: a tool that ignores its context cannot hang
// the run; the call gets a timeout result shortly after its timeout.
func TestHangingToolIsLeftBehind(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	reg := registry(t, toolloop.NewTool("stuck", "Never looks at its context.", func(context.Context, struct{}) (any, error) {
		<-release
		return "too late", nil
	}))
	start := time.Now()
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: reg, Limits: toolloop.Limits{ToolTimeout: 30 * time.Millisecond}}, looptest.Call("c1", "stuck", `{}`))
	require.NoError(t, err)
	r := resultOf(t, res, "c1")
	assert.Equal(t, toolloop.KindTimeout, r.Error.Kind)
	assert.Less(t, time.Since(start), 10*time.Second, "the run must not wait for the stuck tool")
}

// TestCancelWithHangingTool: cancelling the run returns promptly even if a
// tool ignores the cancellation, and calls not yet started are canceled.
func TestCancelWithHangingTool(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	entered := make(chan struct{})
	reg := registry(t, toolloop.NewTool("stuck", "Never looks at its context.", func(context.Context, struct{}) (any, error) {
		close(entered)
		<-release
		return nil, nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	l := &toolloop.AgentLoop{Tools: reg,
		Model: looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "stuck", `{}`), looptest.Call("c2", "stuck", `{}`))}), Limits: toolloop.Limits{MaxConcurrency: 1},
	}
	res, err := l.Run(ctx, user("go"))
	require.ErrorIs(t, err, context.Canceled)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, toolloop.KindCanceled, resultOf(t, res, "c1").Error.Kind)
	assert.Equal(t, toolloop.KindCanceled, resultOf(t, res, "c2").Error.Kind)
}

func TestConcurrencyLimitAndExclusive(t *testing.T) {
	var mu sync.Mutex
	var running, peak int
	var log []string
	enter := func(name string) {
		mu.Lock()
		running++
		peak = max(peak, running)
		log = append(log, "start "+name)
		mu.Unlock()
	}
	leave := func(name string) {
		mu.Lock()
		running--
		log = append(log, "end "+name)
		mu.Unlock()
	}
	type in struct {
		N string `json:"n"`
	}
	work := toolloop.NewTool("work", "Work a little.", func(_ context.Context, in in) (any, error) {
		enter(in.N)
		time.Sleep(5 * time.Millisecond)
		leave(in.N)
		return nil, nil
	})
	excl := toolloop.NewTool("exclusive", "Must run alone.", func(_ context.Context, in in) (any, error) {
		enter("X")
		mu.Lock()
		alone := running == 1
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		leave("X")
		if !alone {
			return nil, errors.New("ran alongside another call")
		}
		return nil, nil
	})
	excl.Exclusive = true
	reg := registry(t, work, excl)
	calls := []toolloop.ToolCall{
		looptest.Call("1", "work", `{"n":"1"}`), looptest.Call("2", "work", `{"n":"2"}`), looptest.Call("3", "work", `{"n":"3"}`),
		looptest.Call("4", "exclusive", `{"n":"X"}`),
		looptest.Call("5", "work", `{"n":"5"}`), looptest.Call("6", "work", `{"n":"6"}`),
	}
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: reg, Limits: toolloop.Limits{MaxConcurrency: 2}}, calls...)
	require.NoError(t, err)
	for _, c := range calls {
		assert.False(t, resultOf(t, res, c.ID).IsError(), c.ID)
	}
	assert.LessOrEqual(t, peak, 2)
	// Everything before X ended before X started, everything after started after X ended.
	pos := func(s string) int {
		for i, l := range log {
			if l == s {
				return i
			}
		}
		t.Fatalf("%q not in %v", s, log)
		return -1
	}
	for _, n := range []string{"1", "2", "3"} {
		assert.Less(t, pos("end "+n), pos("start X"))
	}
	for _, n := range []string{"5", "6"} {
		assert.Greater(t, pos("start "+n), pos("end X"))
	}
}

func TestProgressAndPartialEvents(t *testing.T) {
	var late *toolloop.Call
	raw := toolFunc{spec: toolloop.ToolSpec{Name: "steps", Description: "Report progress."}, run: func(_ context.Context, c *toolloop.Call) (*toolloop.ToolResult, error) {
		c.ReportProgress(toolloop.Progress{Message: "half", Done: 1, Total: 2})
		c.ReportPartial("line 1\n")
		late = c
		return toolloop.TextResult("ok"), nil
	}}
	rec := &looptest.Recorder{}
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: registry(t, raw), OnEvent: rec.Record}, looptest.Call("c1", "steps", `{}`))
	require.NoError(t, err)
	assert.Equal(t, "ok", resultOf(t, res, "c1").Text())
	prog := rec.Of(toolloop.EventProgress)
	require.Len(t, prog, 1)
	assert.Equal(t, "half", prog[0].Progress.Message)
	assert.Equal(t, "c1", prog[0].CallID)
	assert.Equal(t, toolloop.SourceLocal, prog[0].Source)
	require.Len(t, rec.Of(toolloop.EventPartialResult), 1)

	late.ReportProgress(toolloop.Progress{Message: "after the end"})
	assert.Len(t, rec.Of(toolloop.EventProgress), 1, "reports after completion are dropped")
}

type toolFunc struct {
	spec toolloop.ToolSpec
	run  func(context.Context, *toolloop.Call) (*toolloop.ToolResult, error)
}

func (f toolFunc) Spec() toolloop.ToolSpec { return f.spec }
func (f toolFunc) Run(ctx context.Context, c *toolloop.Call) (*toolloop.ToolResult, error) {
	return f.run(ctx, c)
}

func TestToolResultShapes(t *testing.T) {
	mk := func(name string, res *toolloop.ToolResult, err error) toolloop.Tool {
		return toolFunc{spec: toolloop.ToolSpec{Name: name, Description: name}, run: func(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) {
			return res, err
		}}
	}
	shared := toolloop.TextResult("shared")
	reg := registry(t,
		mk("nil_nil", nil, nil),
		mk("status_error", &toolloop.ToolResult{Status: toolloop.StatusError, Content: []toolloop.Content{toolloop.TextContent("exit 1")}}, nil),
		mk("tool_error", nil, toolloop.Errorf(toolloop.KindDenied, "outside the workspace")),
		mk("plain_error", nil, errors.New("disk full")),
		mk("shared", shared, nil),
	)
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: reg},
		looptest.Call("1", "nil_nil", `{}`), looptest.Call("2", "status_error", `{}`),
		looptest.Call("3", "tool_error", `{}`), looptest.Call("4", "plain_error", `{}`), looptest.Call("5", "shared", `{}`))
	require.NoError(t, err)
	assert.Equal(t, toolloop.StatusOK, resultOf(t, res, "1").Status)
	r2 := resultOf(t, res, "2")
	assert.Equal(t, toolloop.KindExecutionFailed, r2.Error.Kind)
	assert.Equal(t, "exit 1", r2.Text())
	assert.Equal(t, toolloop.KindDenied, resultOf(t, res, "3").Error.Kind)
	r4 := resultOf(t, res, "4")
	assert.Equal(t, toolloop.KindExecutionFailed, r4.Error.Kind)
	assert.Equal(t, "disk full", r4.Text())
	assert.Equal(t, "5", resultOf(t, res, "5").CallID)
	assert.Empty(t, shared.CallID, "the loop must not modify a result the tool returned")
}

func TestGuardAndApproverFailuresDeny(t *testing.T) {
	reg := registry(t, toolloop.NewTool("op", "An operation.", func(context.Context, struct{}) (any, error) { return "ran", nil }))
	tests := []struct {
		name string
		loop toolloop.AgentLoop
	}{
		{"guard panics", toolloop.AgentLoop{Guard: toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict { panic("guard bug") })}},
		{"unknown decision", toolloop.AgentLoop{Guard: toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
			return toolloop.Verdict{Decision: "maybe"}
		})}},
		{"modify to invalid arguments", toolloop.AgentLoop{Guard: toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
			return toolloop.Verdict{Decision: toolloop.Modify, Arguments: json.RawMessage(`{"extra":1}`)}
		})}},
		{"approver errors", toolloop.AgentLoop{Guard: toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
			return toolloop.Verdict{Decision: toolloop.Ask}
		}), Approver: toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
			return toolloop.Approval{Approved: true}, errors.New("approval service down")
		})}},
		{"approver panics", toolloop.AgentLoop{Guard: toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
			return toolloop.Verdict{Decision: toolloop.Ask}
		}), Approver: toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
			panic("approver bug")
		})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.loop
			l.Tools = reg
			res, err := oneTurn(t, &l, looptest.Call("c1", "op", `{}`))
			require.NoError(t, err)
			r := resultOf(t, res, "c1")
			require.True(t, r.IsError())
			assert.Contains(t, []toolloop.ErrorKind{toolloop.KindDenied, toolloop.KindInvalidArgs}, r.Error.Kind)
			assert.NotEqual(t, "ran", r.Text())
		})
	}
}

func TestPreHooksCompose(t *testing.T) {
	type in struct {
		A int `json:"a"`
		B int `json:"b,omitempty"`
	}
	var ran atomic.Int32
	var got in
	tool := toolloop.NewTool("op", "An operation.", func(_ context.Context, v in) (any, error) {
		ran.Add(1)
		got = v
		return "ok", nil
	})
	setA := func(_ context.Context, c *toolloop.Call) (toolloop.PreToolUse, error) {
		return toolloop.PreToolUse{Arguments: json.RawMessage(`{"a":7}`)}, nil
	}
	addB := func(_ context.Context, c *toolloop.Call) (toolloop.PreToolUse, error) {
		var v map[string]any
		_ = json.Unmarshal(c.Arguments, &v) // sees the first hook's rewrite
		v["b"] = 9
		b, _ := json.Marshal(v)
		return toolloop.PreToolUse{Arguments: b, Context: "b was added"}, nil
	}
	deny := func(context.Context, *toolloop.Call) (toolloop.PreToolUse, error) {
		return toolloop.PreToolUse{Deny: true, Reason: "not now"}, nil
	}
	var after atomic.Int32
	counter := func(context.Context, *toolloop.Call) (toolloop.PreToolUse, error) {
		after.Add(1)
		return toolloop.PreToolUse{}, nil
	}
	failing := func(context.Context, *toolloop.Call) (toolloop.PreToolUse, error) {
		return toolloop.PreToolUse{}, errors.New("hook service down")
	}
	panicking := func(context.Context, *toolloop.Call) (toolloop.PreToolUse, error) { panic("hook bug") }
	invalid := func(context.Context, *toolloop.Call) (toolloop.PreToolUse, error) {
		return toolloop.PreToolUse{Arguments: json.RawMessage(`{"a":"x"}`)}, nil
	}

	tests := []struct {
		name  string
		hooks []toolloop.PreToolUseHook
		kind  toolloop.ErrorKind // "" for success
		want  in
		ran   int32
		after int32
	}{
		{"no modification is dropped", []toolloop.PreToolUseHook{setA, addB, counter}, "", in{A: 7, B: 9}, 1, 1},
		{"deny ends the chain", []toolloop.PreToolUseHook{setA, deny, counter}, toolloop.KindDenied, in{}, 0, 0},
		{"error fails the call", []toolloop.PreToolUseHook{failing, counter}, toolloop.KindExecutionFailed, in{}, 0, 0},
		{"panic fails the call", []toolloop.PreToolUseHook{panicking}, toolloop.KindPanic, in{}, 0, 0},
		{"rewrite is validated", []toolloop.PreToolUseHook{invalid}, toolloop.KindInvalidArgs, in{}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran.Store(0)
			after.Store(0)
			got = in{}
			l := &toolloop.AgentLoop{Tools: registry(t, tool), Hooks: toolloop.Hooks{PreToolUse: tt.hooks}}
			res, err := oneTurn(t, l, looptest.Call("c1", "op", `{"a":1}`))
			require.NoError(t, err)
			r := resultOf(t, res, "c1")
			if tt.kind == "" {
				require.False(t, r.IsError(), r.Text())
				assert.Equal(t, tt.want, got)
				assert.Equal(t, "ok", r.Content[0].Text)
				assert.Equal(t, "b was added", r.Content[1].Text)
				assert.Len(t, r.Meta.Modified, 2)
			} else {
				require.True(t, r.IsError())
				assert.Equal(t, tt.kind, r.Error.Kind)
			}
			assert.Equal(t, tt.ran, ran.Load())
			assert.Equal(t, tt.after, after.Load())
		})
	}
}

func TestPostHooksAndMiddleware(t *testing.T) {
	var order []string
	var mu sync.Mutex
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	tool := toolloop.NewTool("op", "An operation.", func(context.Context, struct{}) (any, error) {
		note("tool")
		return "secret output", nil
	})
	mw := func(name string) toolloop.Middleware {
		return func(next toolloop.Handler) toolloop.Handler {
			return func(ctx context.Context, c *toolloop.Call) (*toolloop.ToolResult, error) {
				note(name + " in")
				r, err := next(ctx, c)
				note(name + " out")
				return r, err
			}
		}
	}
	upper := func(_ context.Context, _ *toolloop.Call, r *toolloop.ToolResult) (*toolloop.ToolResult, error) {
		return toolloop.TextResult("[" + r.Text() + "]"), nil
	}
	reject := func(context.Context, *toolloop.Call, *toolloop.ToolResult) (*toolloop.ToolResult, error) {
		return nil, toolloop.Errorf(toolloop.KindDenied, "output withheld: it contains secrets")
	}
	observe := func(context.Context, *toolloop.Call, *toolloop.ToolResult) (*toolloop.ToolResult, error) {
		return nil, nil // keep the result
	}

	l := &toolloop.AgentLoop{Tools: registry(t, tool), Hooks: toolloop.Hooks{
		Middleware:  []toolloop.Middleware{mw("outer"), mw("inner")},
		PostToolUse: []toolloop.PostToolUseHook{observe, upper, upper},
	}}
	res, err := oneTurn(t, l, looptest.Call("c1", "op", `{}`))
	require.NoError(t, err)
	assert.Equal(t, "[[secret output]]", resultOf(t, res, "c1").Text())
	assert.Equal(t, []string{"outer in", "inner in", "tool", "inner out", "outer out"}, order)

	l.Hooks = toolloop.Hooks{PostToolUse: []toolloop.PostToolUseHook{reject}}
	res, err = oneTurn(t, l, looptest.Call("c1", "op", `{}`))
	require.NoError(t, err)
	r := resultOf(t, res, "c1")
	assert.Equal(t, toolloop.KindDenied, r.Error.Kind)
	assert.NotContains(t, r.Text(), "secret output")
}

// streamer is a Model that streams its reasoning in two deltas, then its
// text in three.
type streamer struct{}

func (s *streamer) Generate(context.Context, *toolloop.Request) (*toolloop.Response, error) {
	return nil, errors.New("Generate must not be called when Stream exists")
}

func (s *streamer) Stream(ctx context.Context, _ *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		for _, d := range []string{"Greet ", "them."} {
			if !yield(toolloop.Chunk{Reasoning: d}, nil) {
				return
			}
		}
		for _, d := range []string{"Hel", "lo", "!"} {
			if !yield(toolloop.Chunk{Text: d}, nil) {
				return
			}
		}
		resp := looptest.Text("Hello!")
		resp.Message.Content = append([]toolloop.Content{
			toolloop.ReasoningContent("Greet them.", toolloop.Reasoning{Provider: "test", Signature: "sig"}),
		}, resp.Message.Content...)
		yield(toolloop.Chunk{Response: resp}, nil)
	}
}

func TestStreamingModel(t *testing.T) {
	rec := &looptest.Recorder{}
	res, err := (&toolloop.AgentLoop{Model: &streamer{}, OnEvent: rec.Record}).Run(context.Background(), user("hi"))
	require.NoError(t, err)
	// Reasoning is kept in the transcript, never in the final text.
	assert.Equal(t, "Hello!", res.FinalText)
	last := res.Messages[len(res.Messages)-1]
	require.Len(t, last.Content, 2)
	assert.Equal(t, toolloop.ContentReasoning, last.Content[0].Type)
	assert.Equal(t, "sig", last.Content[0].Reasoning.Signature)
	assert.Equal(t, "Hello!", last.Text())
	var deltas, reasoning string
	for _, e := range rec.Of(toolloop.EventModelDelta) {
		deltas += e.Text
	}
	for _, e := range rec.Of(toolloop.EventModelReasoningDelta) {
		reasoning += e.Text
	}
	assert.Equal(t, "Hello!", deltas)
	assert.Equal(t, "Greet them.", reasoning)
	assert.True(t, toolloop.EventModelReasoningDelta.Transient())
}

func TestPanickingObserverDoesNotBreakTheRun(t *testing.T) {
	l := &toolloop.AgentLoop{
		Model:   looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("fine")}),
		OnEvent: func(toolloop.Event) { panic("observer bug") },
	}
	res, err := l.Run(context.Background(), user("hi"))
	require.NoError(t, err)
	assert.Equal(t, "fine", res.FinalText)
}

func TestExecutionsRecord(t *testing.T) {
	reg := registry(t, toolloop.NewTool("op", "An operation.", func(context.Context, struct{}) (any, error) { return "out", nil }))
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: reg}, looptest.Call("c1", "op", `{}`), looptest.Call("c2", "nope", `{}`))
	require.NoError(t, err)
	require.Len(t, res.Executions, 2)
	assert.Equal(t, toolloop.ToolExecution{Name: "op", CallID: "c1", Turn: 1, Success: true, Output: "out", Latency: res.Executions[0].Latency}, res.Executions[0])
	assert.False(t, res.Executions[1].Success)
	assert.Equal(t, toolloop.KindNotFound, res.Executions[1].Error.Kind)
	assert.Equal(t, "done", res.FinalText)
	assert.Equal(t, 2, res.Turns)
}
