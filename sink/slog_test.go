package sink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sanitize"
	"github.com/toolloop/toolloop/sink"
)

// logged runs events through an slog sink writing JSON at level Debug,
// and returns the records decoded.
func logged(t *testing.T, opts *sink.SlogOptions, events ...toolloop.Event) []map[string]any {
	t.Helper()
	var b bytes.Buffer
	s := sink.NewSlog(slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), opts)
	for _, e := range events {
		s(e)
	}
	var recs []map[string]any
	dec := json.NewDecoder(&b)
	for dec.More() {
		var r map[string]any
		require.NoError(t, dec.Decode(&r))
		recs = append(recs, r)
	}
	return recs
}

func TestSlogEvents(t *testing.T) {
	ok := toolloop.TextResult("fine")
	ok.Meta.Duration, ok.Meta.Bytes, ok.Meta.Truncated = 1500*time.Microsecond, 70000, true
	panicEnd := complete(failed(toolloop.KindPanic, "tool panicked: boom"))
	panicEnd.Stack = "goroutine 7 [running]:\nmain.tool()"
	toolAttrs := map[string]any{"call_id": "c1", "tool": "read_file", "source": "builtin", "source_name": "local"}
	with := func(m map[string]any, extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name  string
		opts  *sink.SlogOptions
		event toolloop.Event
		level string
		attrs map[string]any // a subset of the record's attributes
	}{
		{"run.start", nil, runStart(toolloop.SystemMessage("s"), toolloop.UserMessage("u")), "INFO", map[string]any{"turn": 0.0, "messages": 2.0}},
		{"run.resumed", nil, resumed(true, false, true), "INFO", map[string]any{"approvals": 3.0, "approved": 2.0}},
		{"run.paused", nil, paused("rm", "mv"), "INFO", map[string]any{"pending": 2.0, "tools": []any{"rm", "mv"}, "tool_calls": 1.0}},
		{"run.end", nil, runEnd(toolloop.StopEnd, ""), "INFO", map[string]any{
			"stop_reason": "stop", "input_tokens": 300.0, "output_tokens": 50.0, "cost_usd": 0.0123, "tool_calls": 2.0}},
		{"run.end with an error", nil, runEnd(toolloop.StopError, "provider: 500"), "ERROR", map[string]any{"stop_reason": "error", "error": "provider: 500"}},
		{"run.end aborted", nil, runEnd(toolloop.StopAborted, "context canceled"), "WARN", map[string]any{"stop_reason": "aborted", "error": "context canceled"}},
		{"transcript.repaired", nil, repaired("a", "b"), "WARN", map[string]any{"repairs": 2.0}},
		{"transcript.edited", nil, edited(), "INFO", map[string]any{
			"strategy": "clear_tool_results", "reason": "threshold", "tokens_before": 12000.0, "tokens_after": 3000.0, "cleared": 2.0}},
		{"cache.bust", nil, bust(), "INFO", map[string]any{
			"turn": 3.0, "reason": "edit", "detail": "clear_tool_results", "kept": 3.0, "previous": 4.0}},
		{"run.end with cached input", nil, cachedEnd(), "INFO", map[string]any{
			"input_tokens": 300.0, "cache_read_tokens": 270.0, "cache_hit_ratio": 0.9}},
		{"run.limit", nil, limit("budget spent"), "WARN", map[string]any{"error": "budget spent", "tool_calls": 5.0}},
		{"model.request", nil, ev(toolloop.EventModelRequest), "DEBUG", map[string]any{"run_id": runID, "turn": 1.0}},
		{"model.delta", &sink.SlogOptions{Deltas: true}, delta(toolloop.EventModelDelta, "Hello"), "DEBUG", map[string]any{"bytes": 5.0}},
		{"model.reasoning_delta", &sink.SlogOptions{Deltas: true}, delta(toolloop.EventModelReasoningDelta, "Hmm"), "DEBUG", map[string]any{"bytes": 3.0}},
		{"model.response", nil, response("Sure.", toolloop.StopToolUse, toolloop.ToolCall{ID: "c1", Name: "read_file"}), "INFO", map[string]any{
			"stop_reason": "tool_use", "model": "m-1", "input_tokens": 120.0, "output_tokens": 30.0, "tool_calls": 1.0, "tools": []any{"read_file"}}},
		{"model.response cut off", nil, response("Sure", toolloop.StopLength), "WARN", map[string]any{"stop_reason": "length"}},
		{"tool.execution_start", nil, start(`{"path":"a"}`), "DEBUG", toolAttrs},
		{"tool.arguments_repaired", nil, argsRepaired(`{}`, "x", "y"), "DEBUG", with(toolAttrs, map[string]any{"repairs": 2.0})},
		{"guard.verdict allow", nil, verdict(toolloop.Allow, "", "reads"), "DEBUG", map[string]any{"decision": "allow", "rule": "reads"}},
		{"guard.verdict modify", nil, verdict(toolloop.Modify, "r", "jail"), "INFO", map[string]any{"decision": "modify", "rule": "jail"}},
		{"guard.verdict deny", nil, verdict(toolloop.Deny, "r", "no-env"), "WARN", with(toolAttrs, map[string]any{"decision": "deny", "rule": "no-env"})},
		{"permission.requested", nil, requested("r", "ask-rm"), "INFO", map[string]any{"decision": "ask", "rule": "ask-rm"}},
		{"permission.completed approved", nil, approval(true, ""), "INFO", map[string]any{"approved": true}},
		{"permission.completed refused", nil, approval(false, "no"), "WARN", map[string]any{"approved": false}},
		{"hook.effect context", nil, hook("pre_tool_use", "context", "d"), "DEBUG", map[string]any{"hook": "pre_tool_use", "hook_index": 0.0, "effect": "context"}},
		{"hook.effect transform", nil, hook("post_tool_use", "transform", "d"), "INFO", map[string]any{"effect": "transform"}},
		{"hook.effect reject", nil, hook("post_tool_use", "reject", "d"), "WARN", map[string]any{"effect": "reject"}},
		{"hook.effect panic", nil, hook("pre_tool_use", "panic", "d"), "ERROR", map[string]any{"effect": "panic"}},
		{"tool.execution_progress", nil, progress(3, 10, "files"), "DEBUG", with(toolAttrs, map[string]any{"done": 3.0, "total": 10.0})},
		{"tool.execution_partial_result", &sink.SlogOptions{Deltas: true}, partial("out"), "DEBUG", with(toolAttrs, map[string]any{"bytes": 3.0})},
		{"tool.execution_complete ok", nil, complete(ok), "INFO", with(toolAttrs, map[string]any{
			"status": "ok", "duration_ms": 1.5, "bytes": 70000.0, "truncated": true})},
		{"tool.execution_complete failed", nil, complete(failed(toolloop.KindTimeout, "took too long")), "WARN", map[string]any{
			"status": "error", "error_kind": "timeout"}},
		{"tool.execution_complete panic", nil, panicEnd, "ERROR", map[string]any{
			"status": "error", "error_kind": "panic", "stack": "goroutine 7 [running]:\nmain.tool()"}},
		{"model.retry", nil, attempt(toolloop.EventModelRetry, 1, 0, 1500*time.Millisecond), "WARN", map[string]any{
			"attempt": 1.0, "model": 0.0, "delay": 1.5e9, "error": "openai: 429 Too Many Requests"}},
		{"model.fallback", nil, attempt(toolloop.EventModelFallback, 2, 1, 0), "WARN", map[string]any{"attempt": 2.0, "model": 1.0}},
		{"turn.sent_back", nil, withError(toolloop.EventTurnSentBack, "one file per turn"), "WARN", map[string]any{"error": "one file per turn"}},
		{"output.invalid", nil, withError(toolloop.EventOutputInvalid, "bad severity"), "WARN", map[string]any{"error": "bad severity"}},
		{"user.message", nil, func() toolloop.Event {
			e := ev(toolloop.EventUserMessage)
			e.Origin, e.Messages = toolloop.OriginSteer, []toolloop.Message{toolloop.UserMessage("use staging")}
			return e
		}(), "INFO", map[string]any{"origin": "steer", "text": nil}},
		{"run.interrupted", nil, func() toolloop.Event {
			e := ev(toolloop.EventRunInterrupted)
			e.Interrupt = &toolloop.Interrupt{Mode: toolloop.InterruptNow}
			return e
		}(), "INFO", map[string]any{"mode": "now", "continue": false}},
		{"run.end interrupted", nil, runEnd(toolloop.StopInterrupted, "toolloop: the run was interrupted"), "WARN", map[string]any{"stop_reason": "interrupted"}},
		{"job.started", nil, jobStarted(), "INFO", map[string]any{
			"call_id": "c1", "tool": "exec_shell", "job_id": "job_1", "job_status": "running", "job_turn": 1.0}},
		{"job.output", &sink.SlogOptions{Deltas: true}, jobOutput("PASS\n"), "DEBUG", map[string]any{
			"call_id": "c1", "tool": "exec_shell", "bytes": 5.0, "text": nil}},
		{"job.finished ok", nil, jobFinished(toolloop.JobOK, withExit(toolloop.TextResult("ok"), 0), ""), "INFO", map[string]any{
			"job_id": "job_1", "job_status": "ok", "job_turn": 1.0, "duration_ms": 31000.0, "output_bytes": 4096.0,
			"exit_code": 0.0, "output": nil}},
		{"job.finished error", nil, jobFinished(toolloop.JobError, withExit(failed(toolloop.KindExecutionFailed, "exit status 2"), 2.0), ""),
			"WARN", map[string]any{"job_status": "error", "error_kind": "execution_failed", "exit_code": 2.0, "error_message": nil}},
		{"job.finished panic", nil, jobFinished(toolloop.JobError, failed(toolloop.KindPanic, "boom"), ""), "ERROR", map[string]any{
			"job_status": "error", "error_kind": "panic", "exit_code": nil}},
		{"job.finished canceled", nil, jobFinished(toolloop.JobCanceled, failed(toolloop.KindCanceled, "canceled"), "the run ended"),
			"INFO", map[string]any{"job_status": "canceled", "error_kind": "canceled", "reason": nil}},
		{"job.finished with no call on the event", nil, func() toolloop.Event {
			e := jobFinished(toolloop.JobOK, nil, "")
			e.CallID, e.Tool, e.Source, e.SourceName = "", "", "", ""
			return e
		}(), "INFO", map[string]any{"call_id": "c1", "tool": "exec_shell", "job_id": "job_1"}},
		{"an event type the sink does not know", nil, ev("tool.something_new"), "INFO", map[string]any{"run_id": runID}},
	}
	covered := map[toolloop.EventType]bool{}
	for _, c := range cases {
		covered[c.event.Type] = true
		t.Run(c.name, func(t *testing.T) {
			recs := logged(t, c.opts, c.event)
			require.Len(t, recs, 1)
			r := recs[0]
			assert.Equal(t, c.level, r["level"])
			assert.Equal(t, string(c.event.Type), r["msg"])
			assert.Equal(t, t0.Format(time.RFC3339), r["time"], "the record has the event's time")
			assert.Equal(t, runID, r["run_id"])
			for k, v := range c.attrs {
				assert.Equal(t, v, r[k], k)
			}
		})
	}
	for _, typ := range allTypes {
		assert.True(t, covered[typ], "no case for %s", typ)
	}
}

// Deltas and partial output are many and add up to what other records
// hold: they are left out unless asked for.
func TestSlogLeavesOutDeltasByDefault(t *testing.T) {
	events := []toolloop.Event{
		delta(toolloop.EventModelDelta, "a"), delta(toolloop.EventModelReasoningDelta, "b"), partial("c"),
		ev(toolloop.EventModelRequest),
	}
	recs := logged(t, nil, events...)
	require.Len(t, recs, 1)
	assert.Equal(t, "model.request", recs[0]["msg"])
	assert.Len(t, logged(t, &sink.SlogOptions{Deltas: true}, events...), 4)
}

func TestSlogRunEndAfterPauseIsInfo(t *testing.T) {
	recs := logged(t, nil, paused("rm"), runEnd(toolloop.StopToolUse, "toolloop: the run is paused for approval"),
		runEnd(toolloop.StopToolUse, "toolloop: the model was still calling tools"))
	require.Len(t, recs, 3)
	assert.Equal(t, "INFO", recs[1]["level"], "the pause ended the run")
	assert.Equal(t, "ERROR", recs[2]["level"], "the same run ID later fails: the pause was forgotten at its run.end")
}

const secret = "sk-proj-Zq8vR2nX5tLw9KdY3bHc7FmJ4gPa6Es1"

// secretEvents carry the secret in every field that can hold text from the
// model, a tool, a hook or the user.
func secretEvents() []toolloop.Event {
	res := toolloop.TextResult("key=" + secret)
	bad := failed(toolloop.KindExecutionFailed, "auth failed with "+secret)
	return []toolloop.Event{
		runStart(toolloop.UserMessage("use " + secret)),
		ev(toolloop.EventModelRequest),
		delta(toolloop.EventModelDelta, secret),
		delta(toolloop.EventModelReasoningDelta, secret),
		response("the key is "+secret, toolloop.StopToolUse,
			toolloop.ToolCall{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"token":"` + secret + `"}`)}),
		start(`{"token":"` + secret + `"}`),
		argsRepaired(`{"token":"`+secret+`"}`, "fixed "+secret),
		func() toolloop.Event {
			e := verdict(toolloop.Modify, "rewrote "+secret, "jail")
			e.Verdict.Arguments = json.RawMessage(`{"token":"` + secret + `"}`)
			return e
		}(),
		requested("asks about "+secret, "ask"),
		approval(false, "refused "+secret),
		hook("post_tool_use", "transform", "saw "+secret),
		progress(1, 2, "reading "+secret),
		partial(secret),
		complete(res),
		complete(bad),
		paused("rm"),
		func() toolloop.Event {
			e := paused("rm")
			e.Pending[0].Arguments = json.RawMessage(`{"token":"` + secret + `"}`)
			e.Pending[0].Reason = secret
			return e
		}(),
		resumed(false),
		repaired("note " + secret),
		func() toolloop.Event {
			e := edited()
			e.Edit.Splices = []toolloop.Splice{{Start: 0, End: 1, Messages: []toolloop.Message{toolloop.UserMessage(secret)}}}
			return e
		}(),
		{Type: toolloop.EventUserMessage, RunID: "run_1", Origin: toolloop.OriginSteer,
			Messages: []toolloop.Message{toolloop.UserMessage("steer with " + secret)}},
		func() toolloop.Event {
			e := paused("rm")
			e.Queued = []toolloop.QueuedMessage{{Origin: toolloop.OriginFollowUp, Message: toolloop.UserMessage(secret)}}
			return e
		}(),
		jobStarted(),
		jobOutput("token=" + secret),
		jobFinished(toolloop.JobCanceled, failed(toolloop.KindCanceled, "canceled with "+secret), "asked to by "+secret),
		jobFinished(toolloop.JobOK, toolloop.TextResult("printed "+secret), ""),
	}
}

// By default no argument, output or text reaches the log, whatever the
// event; with the options on, Redact keeps the secret out.
func TestSlogKeepsSecretsOutByDefault(t *testing.T) {
	var b bytes.Buffer
	s := sink.NewSlog(slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &sink.SlogOptions{Deltas: true})
	for _, e := range secretEvents() {
		s(e)
	}
	require.Equal(t, len(secretEvents()), strings.Count(b.String(), "\n"), "every event was logged")
	assert.NotContains(t, b.String(), secret)
	assert.NotContains(t, b.String(), "sk-proj")

	t.Run("content without Redact logs it", func(t *testing.T) {
		b.Reset()
		s := sink.NewSlog(slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})),
			&sink.SlogOptions{Deltas: true, Arguments: true, Content: true})
		for _, e := range secretEvents() {
			s(e)
		}
		// The test is meaningful: the options expose every field above.
		assert.Equal(t, 23, strings.Count(b.String(), secret))
	})
	t.Run("content with a Redactor", func(t *testing.T) {
		b.Reset()
		var r sanitize.Redactor
		s := sink.NewSlog(slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})),
			&sink.SlogOptions{Deltas: true, Arguments: true, Content: true, Redact: r.RedactEvent})
		for _, e := range secretEvents() {
			s(e)
		}
		assert.NotContains(t, b.String(), secret)
		assert.Contains(t, b.String(), "[REDACTED:")
	})
}

func TestSlogContentAttributes(t *testing.T) {
	recs := logged(t, &sink.SlogOptions{Arguments: true, Content: true},
		runStart(toolloop.SystemMessage("sys"), toolloop.UserMessage("fix it")),
		response("On it.", toolloop.StopToolUse),
		start(`{"path":"a.go"}`),
		complete(toolloop.TextResult("package a")),
		complete(failed(toolloop.KindExecutionFailed, "exit 1")),
		verdict(toolloop.Deny, "no", "r"),
		approval(false, "nope"),
		hook("pre_tool_use", "deny", "blocked"),
		progress(1, 2, "half"),
		toolloop.Event{Type: toolloop.EventUserMessage, Origin: toolloop.OriginFollowUp, Messages: []toolloop.Message{toolloop.UserMessage("then test")}},
		toolloop.Event{Type: toolloop.EventRunInterrupted, Interrupt: &toolloop.Interrupt{Mode: toolloop.InterruptAfterModel, Continue: true}},
		jobFinished(toolloop.JobCanceled, failed(toolloop.KindCanceled, "context canceled"), "the model canceled it"),
		jobFinished(toolloop.JobOK, toolloop.TextResult("PASS"), ""),
	)
	require.Len(t, recs, 13)
	assert.Equal(t, "the model canceled it", recs[11]["reason"])
	assert.Equal(t, "context canceled", recs[11]["error_message"])
	assert.Equal(t, "PASS", recs[12]["output"])
	assert.Equal(t, "then test", recs[9]["text"])
	assert.Equal(t, "follow_up", recs[9]["origin"])
	assert.Equal(t, "after_model", recs[10]["mode"])
	assert.Equal(t, true, recs[10]["continue"])
	assert.Equal(t, "fix it", recs[0]["prompt"])
	assert.Equal(t, "On it.", recs[1]["text"])
	assert.Equal(t, `{"path":"a.go"}`, recs[2]["arguments"])
	assert.Equal(t, "package a", recs[3]["output"])
	assert.Equal(t, "exit 1", recs[4]["error_message"])
	assert.Equal(t, "no", recs[5]["reason"])
	assert.Equal(t, "nope", recs[6]["reason"])
	assert.Equal(t, "blocked", recs[7]["detail"])
	assert.Equal(t, "half", recs[8]["message"])
}

func TestSlogBoundsValues(t *testing.T) {
	recs := logged(t, &sink.SlogOptions{Content: true, MaxBytes: 10}, complete(toolloop.TextResult("é"+strings.Repeat("x", 5000))))
	require.Len(t, recs, 1)
	assert.Equal(t, "éxxxxxxxx…[4992 bytes more]", recs[0]["output"])

	huge := complete(toolloop.TextResult(strings.Repeat("x", 8<<20)))
	huge.Stack = strings.Repeat("frame\n", 1<<20)
	var b bytes.Buffer
	sink.NewSlog(slog.New(slog.NewJSONHandler(&b, nil)), &sink.SlogOptions{Content: true})(huge)
	assert.Less(t, b.Len(), 3000, "MaxBytes 1024 for each of output and stack")
}

// A record below the handler's level costs no more than the check: Redact
// is not called.
func TestSlogSkipsDisabledLevels(t *testing.T) {
	var calls atomic.Int32
	var b bytes.Buffer
	s := sink.NewSlog(slog.New(slog.NewJSONHandler(&b, nil)), &sink.SlogOptions{Redact: func(e toolloop.Event) toolloop.Event {
		calls.Add(1)
		return e
	}})
	s(start(`{}`))
	s(ev(toolloop.EventModelRequest))
	assert.Zero(t, b.Len())
	assert.Zero(t, calls.Load())
	s(complete(toolloop.TextResult("x")))
	assert.Equal(t, int32(1), calls.Load())
}

// Redact sees a copy: the event the loop passes is never changed, and
// fields the options leave out never reach it.
func TestSlogRedactSeesOnlyWhatIsLogged(t *testing.T) {
	var seen []toolloop.Event
	var mu sync.Mutex
	s := sink.NewSlog(slog.New(slog.NewJSONHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		&sink.SlogOptions{Redact: func(e toolloop.Event) toolloop.Event {
			mu.Lock()
			seen = append(seen, e)
			mu.Unlock()
			e.Tool = "changed"
			return e
		}})
	for _, e := range secretEvents() {
		s(e)
	}
	for _, e := range seen {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		assert.NotContains(t, string(b), secret, e.Type)
	}
	e := start(`{}`)
	s(e)
	assert.Equal(t, "read_file", e.Tool)
}

func TestSlogNilLoggerUsesDefault(t *testing.T) {
	var b bytes.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(slog.NewJSONHandler(&b, nil)))
	sink.NewSlog(nil, nil)(runEnd(toolloop.StopEnd, ""))
	assert.Contains(t, b.String(), `"msg":"run.end"`)
}

// Through a real loop, concurrently: the records of two runs, whole.
func TestSlogLoop(t *testing.T) {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("echo", "Echo.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (any, error) {
		return in.Text, nil
	}))
	var b lockedBuffer
	s := sink.NewSlog(slog.New(slog.NewJSONHandler(&b, nil)), nil)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			loop := &toolloop.AgentLoop{
				Model: looptest.Script(looptest.Calls(looptest.Call("c1", "echo", `{"text":"`+secret+`"}`)), looptest.Text("ok")),
				Tools: &tools, OnEvent: s,
			}
			_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("echo")})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	out := b.String()
	assert.NotContains(t, out, secret)
	var msgs []string
	for line := range strings.Lines(out) {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		msgs = append(msgs, r["msg"].(string))
	}
	assert.ElementsMatch(t, []string{
		"run.start", "model.response", "tool.execution_complete", "model.response", "run.end",
		"run.start", "model.response", "tool.execution_complete", "model.response", "run.end",
	}, msgs)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
