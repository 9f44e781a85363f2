package telemetry_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errBoom = errors.New("boom")

type harness struct {
	obs    *telemetry.Observer
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
}

func newHarness(t *testing.T, opts telemetry.Options) *harness {
	h := &harness{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	t.Cleanup(func() {
		_ = h.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	obs, err := telemetry.New(h.tp, mp, opts)
	require.NoError(t, err)
	h.obs = obs
	return h
}

// named returns the ended spans with the given name.
func (h *harness) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func (h *harness) names() []string {
	var out []string
	for _, s := range h.spans.Ended() {
		out = append(out, s.Name())
	}
	slices.Sort(out)
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	set := attribute.NewSet(s.Attributes()...)
	v, _ := set.Value(attribute.Key(key))
	return v
}

type echoArgs struct {
	Text string `json:"text"`
}

// toolSpans records the span each tool run saw in its context.
type toolSpans struct {
	mu  sync.Mutex
	ctx map[string]trace.SpanContext
}

func registry(seen *toolSpans) *toolloop.ToolRegistry {
	note := func(ctx context.Context, name string) {
		seen.mu.Lock()
		defer seen.mu.Unlock()
		if seen.ctx == nil {
			seen.ctx = make(map[string]trace.SpanContext)
		}
		seen.ctx[name] = trace.SpanContextFromContext(ctx)
	}
	echo := toolloop.NewTool("echo", "Echoes.", func(ctx context.Context, in echoArgs) (any, error) {
		note(ctx, "echo")
		return in.Text, nil
	})
	fail := toolloop.NewTool("fail", "Fails.", func(ctx context.Context, in echoArgs) (any, error) {
		note(ctx, "fail")
		return nil, errBoom
	})
	rm := toolloop.NewTool("rm", "Deletes.", func(ctx context.Context, in echoArgs) (any, error) {
		note(ctx, "rm")
		return "gone", nil
	})
	rm.Annotations.Destructive = true
	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(echo, fail, rm)
	return reg
}

func reply(r *toolloop.Response, in, out int64) *toolloop.Response {
	r.Usage = toolloop.Usage{InputTokens: in, OutputTokens: out}
	r.Model = "scripted-1"
	return r
}

// TestTwoTurnRun checks span names, attributes, parent-child links and
// metrics for a run of two model turns: two calls (one fails), then an
// answer.
func TestTwoTurnRun(t *testing.T) {
	h := newHarness(t, telemetry.Options{AgentName: "tester", Provider: "openai"})
	seen := new(toolSpans)
	model := looptest.NewModel(t,
		looptest.Turn{Reply: reply(looptest.Calls(
			looptest.Call("call_1", "echo", `{"text":"hi"}`),
			looptest.Call("call_2", "fail", `{"text":"x"}`)), 10, 2)},
		looptest.Turn{Reply: reply(looptest.Text("done"), 30, 4)},
	)
	loop := &toolloop.AgentLoop{Model: model, Tools: registry(seen), Guard: &toolloop.RuleGuard{},
		OnEvent: h.obs.Record, Hooks: toolloop.Hooks{Middleware: []toolloop.Middleware{h.obs.Middleware}}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)

	assert.Equal(t, []string{"chat scripted-1", "chat scripted-1", "execute_tool echo", "execute_tool fail", "invoke_agent tester"}, h.names())

	runs := h.named("invoke_agent tester")
	require.Len(t, runs, 1)
	run := runs[0]
	assert.False(t, run.Parent().IsValid(), "the run span is a root")
	assert.Equal(t, trace.SpanKindInternal, run.SpanKind())
	assert.Equal(t, "invoke_agent", attr(run, "gen_ai.operation.name").AsString())
	assert.Equal(t, "tester", attr(run, "gen_ai.agent.name").AsString())
	assert.Equal(t, "openai", attr(run, "gen_ai.provider.name").AsString())
	assert.Equal(t, res.RunID, attr(run, "toolloop.run.id").AsString())
	assert.Equal(t, int64(40), attr(run, "gen_ai.usage.input_tokens").AsInt64())
	assert.Equal(t, int64(2), attr(run, "toolloop.run.turns").AsInt64())
	assert.Equal(t, codes.Unset, run.Status().Code)

	for _, s := range h.spans.Ended() {
		if s.Name() == run.Name() {
			continue
		}
		assert.Equal(t, run.SpanContext().SpanID(), s.Parent().SpanID(), "%s is a child of the run span", s.Name())
		assert.Equal(t, run.SpanContext().TraceID(), s.SpanContext().TraceID())
	}

	chats := h.named("chat scripted-1")
	require.Len(t, chats, 2)
	slices.SortFunc(chats, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	for i, want := range []struct {
		finish  string
		in, out int64
	}{{"tool_use", 10, 2}, {"stop", 30, 4}} {
		c := chats[i]
		assert.Equal(t, trace.SpanKindClient, c.SpanKind())
		assert.Equal(t, "chat", attr(c, "gen_ai.operation.name").AsString())
		assert.Equal(t, "scripted-1", attr(c, "gen_ai.response.model").AsString())
		assert.Equal(t, []string{want.finish}, attr(c, "gen_ai.response.finish_reasons").AsStringSlice())
		assert.Equal(t, want.in, attr(c, "gen_ai.usage.input_tokens").AsInt64())
		assert.Equal(t, want.out, attr(c, "gen_ai.usage.output_tokens").AsInt64())
	}

	tools := map[string]sdktrace.ReadOnlySpan{}
	for _, name := range []string{"echo", "fail"} {
		spans := h.named("execute_tool " + name)
		require.Len(t, spans, 1)
		s := spans[0]
		tools[name] = s
		assert.Equal(t, "execute_tool", attr(s, "gen_ai.operation.name").AsString())
		assert.Equal(t, name, attr(s, "gen_ai.tool.name").AsString())
		assert.Equal(t, "function", attr(s, "gen_ai.tool.type").AsString())
		assert.False(t, s.StartTime().Before(chats[0].EndTime()), "the calls run after the first turn")
		assert.False(t, s.EndTime().After(chats[1].StartTime()), "and before the second")
		require.Len(t, s.Events(), 1)
		assert.Equal(t, string(toolloop.EventGuardVerdict), s.Events()[0].Name)
		assert.Equal(t, s.SpanContext(), seen.ctx[name], "the tool ran with its span in its context")
	}
	assert.Equal(t, "call_1", attr(tools["echo"], "gen_ai.tool.call.id").AsString())
	assert.Equal(t, "call_2", attr(tools["fail"], "gen_ai.tool.call.id").AsString())
	assert.False(t, attr(tools["echo"], "error.type").AsString() != "", "no error type on success")
	assert.Equal(t, codes.Unset, tools["echo"].Status().Code)
	assert.Equal(t, "execution_failed", attr(tools["fail"], "error.type").AsString())
	assert.Equal(t, codes.Error, tools["fail"].Status().Code)
	assert.Empty(t, attr(tools["echo"], "gen_ai.tool.call.arguments").AsString(), "no content unless asked")

	checkMetrics(t, h)
}

func checkMetrics(t *testing.T, h *harness) {
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	metrics := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, telemetry.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			metrics[m.Name] = m
		}
	}
	key := func(attrs attribute.Set, keys ...string) string {
		var out string
		for _, k := range keys {
			v, _ := attrs.Value(attribute.Key(k))
			out += v.String() + "|"
		}
		return out
	}

	dur, ok := metrics["gen_ai.client.operation.duration"].Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	counts := map[string]uint64{}
	for _, dp := range dur.DataPoints {
		counts[key(dp.Attributes, "gen_ai.operation.name", "gen_ai.provider.name")] += dp.Count
	}
	assert.Equal(t, map[string]uint64{"chat|openai|": 2, "invoke_agent|openai|": 1}, counts)
	assert.Equal(t, "s", metrics["gen_ai.client.operation.duration"].Unit)

	tokens, ok := metrics["gen_ai.client.token.usage"].Data.(metricdata.Histogram[int64])
	require.True(t, ok)
	sums := map[string]int64{}
	for _, dp := range tokens.DataPoints {
		sums[key(dp.Attributes, "gen_ai.token.type")] += dp.Sum
	}
	assert.Equal(t, map[string]int64{"input|": 40, "output|": 6}, sums)

	toolDur, ok := metrics["toolloop.tool.duration"].Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	counts = map[string]uint64{}
	for _, dp := range toolDur.DataPoints {
		counts[key(dp.Attributes, "gen_ai.tool.name", "error.type")] += dp.Count
	}
	assert.Equal(t, map[string]uint64{"echo||": 1, "fail|execution_failed|": 1}, counts)

	calls, ok := metrics["toolloop.tool.calls"].Data.(metricdata.Sum[int64])
	require.True(t, ok)
	callSums := map[string]int64{}
	for _, dp := range calls.DataPoints {
		callSums[key(dp.Attributes, "gen_ai.tool.name", "toolloop.tool.status")] += dp.Value
	}
	assert.Equal(t, map[string]int64{"echo|ok|": 1, "fail|error|": 1}, callSums)
}

func TestWithin(t *testing.T) {
	h := newHarness(t, telemetry.Options{Model: "gpt-test", RecordContent: true})
	ctx, parent := h.tp.Tracer("test").Start(context.Background(), "handle request")
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "echo", `{"text":"hi"}`))},
		looptest.Turn{Reply: looptest.Text("done")})
	loop := &toolloop.AgentLoop{Model: model, Tools: registry(new(toolSpans)), OnEvent: h.obs.Within(ctx)}
	_, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	parent.End()

	runs := h.named("invoke_agent")
	require.Len(t, runs, 1)
	assert.Equal(t, parent.SpanContext().SpanID(), runs[0].Parent().SpanID())
	chats := h.named("chat gpt-test")
	require.Len(t, chats, 2, "chat spans are named after the requested model")
	assert.Equal(t, "gpt-test", attr(chats[0], "gen_ai.request.model").AsString())
	tool := h.named("execute_tool echo")
	require.Len(t, tool, 1)
	assert.JSONEq(t, `{"text":"hi"}`, attr(tool[0], "gen_ai.tool.call.arguments").AsString())
	assert.Equal(t, "hi", attr(tool[0], "gen_ai.tool.call.result").AsString())
}

func TestPauseAndResume(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(
			looptest.Call("call_1", "echo", `{"text":"a"}`),
			looptest.Call("call_2", "rm", `{"text":"f"}`))},
		looptest.Turn{Reply: looptest.Text("done")})
	guard := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask}}}
	loop := &toolloop.AgentLoop{Model: model, Tools: registry(new(toolSpans)), Guard: guard, PauseForApproval: true, OnEvent: h.obs.Record}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	_, err = loop.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"call_2": {Approved: true}})
	require.NoError(t, err)

	runs := h.named("invoke_agent")
	require.Len(t, runs, 2)
	slices.SortFunc(runs, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	paused, resumed := runs[0], runs[1]
	assert.True(t, attr(paused, "toolloop.paused").AsBool())
	assert.Equal(t, codes.Unset, paused.Status().Code, "a pause is not an error")
	assert.True(t, attr(resumed, "toolloop.run.resumed").AsBool())
	assert.Equal(t, res.RunID, attr(resumed, "toolloop.run.id").AsString())

	rm := h.named("execute_tool rm")
	require.Len(t, rm, 2, "the wait, and the run after approval")
	slices.SortFunc(rm, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	assert.Equal(t, paused.SpanContext().SpanID(), rm[0].Parent().SpanID())
	assert.True(t, attr(rm[0], "toolloop.paused").AsBool())
	assert.Equal(t, resumed.SpanContext().SpanID(), rm[1].Parent().SpanID())
	assert.Equal(t, "ok", attr(rm[1], "toolloop.tool.status").AsString())
	assert.Equal(t, "call_2", attr(rm[1], "gen_ai.tool.call.id").AsString())
	require.Len(t, rm[1].Events(), 1)
	assert.Equal(t, string(toolloop.EventPermissionCompleted), rm[1].Events()[0].Name)
}

func TestModelError(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	model := looptest.NewModel(t, looptest.Turn{Err: errBoom})
	loop := &toolloop.AgentLoop{Model: model, OnEvent: h.obs.Record}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.ErrorIs(t, err, errBoom)

	runs := h.named("invoke_agent")
	require.Len(t, runs, 1)
	assert.Equal(t, codes.Error, runs[0].Status().Code)
	assert.Equal(t, "_OTHER", attr(runs[0], "error.type").AsString())
	chats := h.named("chat")
	require.Len(t, chats, 1)
	assert.Equal(t, codes.Error, chats[0].Status().Code)
	assert.Equal(t, runs[0].SpanContext().SpanID(), chats[0].Parent().SpanID())
}

func TestConcurrentRuns(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
				if len(req.Messages) > 1 {
					return looptest.Text("done"), nil
				}
				return looptest.Calls(looptest.Call("call_1", "echo", `{"text":"a"}`), looptest.Call("call_2", "echo", `{"text":"b"}`)), nil
			})
			loop := &toolloop.AgentLoop{Model: model, Tools: registry(new(toolSpans)), OnEvent: h.obs.Record}
			_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	runs := h.named("invoke_agent")
	require.Len(t, runs, 4)
	ids := map[trace.SpanID]bool{}
	for _, r := range runs {
		ids[r.SpanContext().SpanID()] = true
	}
	tools := h.named("execute_tool echo")
	require.Len(t, tools, 8)
	perRun := map[trace.SpanID]int{}
	for _, s := range tools {
		require.True(t, ids[s.Parent().SpanID()], "each call belongs to one of the runs")
		perRun[s.Parent().SpanID()]++
	}
	for _, n := range perRun {
		assert.Equal(t, 2, n)
	}
}

// TestSteeredRun: a delivered message and an interrupt are span events
// of the run (the message's text is content, left out), and a run that
// ends interrupted says so in error.type.
func TestSteeredRun(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	in := &toolloop.Inbox{}
	in.Send(toolloop.UserMessage("secret steering text"))
	echo := toolloop.NewTool("echo", "Echoes.", func(ctx context.Context, a echoArgs) (any, error) {
		in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterTools})
		return a.Text, nil
	})
	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(echo)
	model := looptest.NewModel(t, looptest.Turn{Reply: reply(looptest.Calls(looptest.Call("c1", "echo", `{"text":"x"}`)), 5, 1)})
	loop := &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: h.obs.Record}
	_, err := loop.Run(toolloop.WithInbox(context.Background(), in), []toolloop.Message{toolloop.UserMessage("go")})
	require.ErrorIs(t, err, toolloop.ErrInterrupted)

	runs := h.named("invoke_agent")
	require.Len(t, runs, 1)
	assert.Equal(t, "interrupted", attr(runs[0], "error.type").AsString())
	var names []string
	for _, ev := range runs[0].Events() {
		names = append(names, ev.Name)
		for _, a := range ev.Attributes {
			assert.NotContains(t, a.Value.String(), "secret")
		}
		if ev.Name == "run.interrupted" {
			assert.Contains(t, ev.Attributes, attribute.String("toolloop.interrupt.mode", "after_tools"))
		}
	}
	assert.Equal(t, []string{"user.message", "run.interrupted"}, names)
}

// TestApprovalWait: a call an approver kept waiting says how long on its
// span, apart from the time it ran.
func TestApprovalWait(t *testing.T) {
	h := newHarness(t, telemetry.Options{})
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "rm", `{"text":"f"}`), looptest.Call("call_2", "echo", `{"text":"a"}`))},
		looptest.Turn{Reply: looptest.Text("done")})
	guard := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask}}}
	loop := &toolloop.AgentLoop{Model: model, Tools: registry(new(toolSpans)), Guard: guard, OnEvent: h.obs.Record,
		Approver: toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
			time.Sleep(50 * time.Millisecond)
			return toolloop.Approval{Approved: true}, nil
		})}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	rm := h.named("execute_tool rm")
	require.Len(t, rm, 1)
	assert.GreaterOrEqual(t, attr(rm[0], "toolloop.tool.approval_wait").AsFloat64(), 0.05)
	echo := h.named("execute_tool echo")
	require.Len(t, echo, 1)
	assert.Equal(t, attribute.EMPTY, attr(echo[0], "toolloop.tool.approval_wait").Type(), "a call nobody approved waited for nothing")
}
