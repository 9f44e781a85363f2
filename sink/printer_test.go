package sink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sanitize"
	"github.com/toolloop/toolloop/sink"
)

// printed runs events through a printer without colour and returns what
// it wrote.
func printed(opts sink.PrinterOptions, events ...toolloop.Event) string {
	var b bytes.Buffer
	if opts.Color == sink.ColorAuto {
		opts.Color = sink.ColorNever
	}
	p := sink.NewPrinter(&b, &opts)
	for _, e := range events {
		p(e)
	}
	return b.String()
}

var verbose = sink.PrinterOptions{Verbose: true}

func TestPrinterEvents(t *testing.T) {
	panicked := failed(toolloop.KindPanic, "tool read_file panicked: boom")
	slow := toolloop.TextResult("done")
	slow.Meta.Duration = 2345 * time.Millisecond
	truncated := toolloop.TextResult("line one\nline two\n")
	truncated.Meta.Truncated, truncated.Meta.Bytes = true, 2_500_000
	image := &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.ImageContent("image/png", make([]byte, 2048))}}
	panicEnd := complete(panicked)
	panicEnd.Stack = "goroutine 7 [running]:\nmain.tool()"
	shellStart := jobEv(toolloop.EventStart)
	shellStart.Arguments = json.RawMessage(`{"command":"go test ./...","background":true}`)
	shellDone := jobEv(toolloop.EventComplete)
	shellDone.Result = toolloop.TextResult("started job job_1 (exec_shell) in the background")
	const jobLine = `  & job_1 exec_shell command="go test ./..." background=true → started in the background` + "\n"
	cases := []struct {
		name   string
		opts   sink.PrinterOptions
		events []toolloop.Event
		want   string
	}{
		{"run.start is quiet", sink.PrinterOptions{}, []toolloop.Event{runStart(toolloop.UserMessage("hi"))}, ""},
		{"run.start verbose", verbose, []toolloop.Event{runStart(toolloop.UserMessage("hi"))},
			"  · run run_1 started with 1 message\n"},
		{"run.resumed", sink.PrinterOptions{}, []toolloop.Event{resumed(true, false)}, "  · run resumed with 2 decisions\n"},
		{"run.paused", sink.PrinterOptions{}, []toolloop.Event{paused("delete_file", "rm")},
			"  ? paused: 2 calls await approval (delete_file, rm)\n"},
		{"run.end after a pause says nothing more", sink.PrinterOptions{}, []toolloop.Event{
			paused("delete_file"), runEnd(toolloop.StopToolUse, "toolloop: the run is paused for approval")},
			"  ? paused: 1 call await approval (delete_file)\n"},
		{"run.end ok is quiet", sink.PrinterOptions{}, []toolloop.Event{runEnd(toolloop.StopEnd, "")}, ""},
		{"run.end verbose sums up", verbose, []toolloop.Event{runEnd(toolloop.StopEnd, "")},
			"  · done: stop, 300 tokens in, 50 out, 2 tool calls, $0.0123\n"},
		{"run.end with an error prints it in full", sink.PrinterOptions{}, []toolloop.Event{
			runEnd(toolloop.StopError, "provider: 500 Internal Server Error\nretry later")},
			"  ✗ run ended (error): provider: 500 Internal Server Error\n        retry later\n"},
		{"run.end aborted", sink.PrinterOptions{}, []toolloop.Event{runEnd(toolloop.StopAborted, "")}, "  ! run aborted\n"},
		{"transcript.repaired", sink.PrinterOptions{}, []toolloop.Event{repaired("call c9 had no result", "a result without a call was dropped")},
			"  ! transcript repaired: call c9 had no result\n        a result without a call was dropped\n"},
		{"transcript.edited", sink.PrinterOptions{}, []toolloop.Event{edited()},
			"  ~ context: clear_tool_results (threshold), ~12000 → ~3000 tokens, 2 results cleared\n"},
		{"cache.bust is quiet", sink.PrinterOptions{}, []toolloop.Event{bust()}, ""},
		{"cache.bust verbose", verbose, []toolloop.Event{bust()},
			"  · prompt cache busted (turn 3): edit (clear_tool_results), 3 of 4 messages kept\n"},
		{"run.end verbose says how much input was cached", verbose, []toolloop.Event{cachedEnd()},
			"  · done: stop, 300 tokens in, 50 out (90% of input cached), 2 tool calls, $0.0123\n"},
		{"run.limit", sink.PrinterOptions{}, []toolloop.Event{limit("toolloop: the run's budget of 5 tool calls is spent")},
			"  ! limit: toolloop: the run's budget of 5 tool calls is spent\n"},
		{"model.request is quiet", sink.PrinterOptions{}, []toolloop.Event{ev(toolloop.EventModelRequest)}, ""},
		{"model.request verbose", verbose, []toolloop.Event{ev(toolloop.EventModelRequest)}, "  · model request (turn 1)\n"},
		{"model.delta streams", sink.PrinterOptions{}, []toolloop.Event{
			delta(toolloop.EventModelDelta, "Hel"), delta(toolloop.EventModelDelta, "lo\nwor"), delta(toolloop.EventModelDelta, "ld")},
			"Hello\nworld"},
		{"model.reasoning_delta streams under a margin", sink.PrinterOptions{}, []toolloop.Event{
			delta(toolloop.EventModelReasoningDelta, "First, "), delta(toolloop.EventModelReasoningDelta, "look.\nThen"),
			delta(toolloop.EventModelDelta, "Answer")},
			"┊ First, look.\n┊ Then\nAnswer"},
		{"model.reasoning_delta hidden", sink.PrinterOptions{HideReasoning: true}, []toolloop.Event{
			delta(toolloop.EventModelReasoningDelta, "secret thoughts"), delta(toolloop.EventModelDelta, "Answer")},
			"Answer"},
		{"model.response after deltas ends the line only", sink.PrinterOptions{}, []toolloop.Event{
			ev(toolloop.EventModelRequest), delta(toolloop.EventModelDelta, "Hi"), response("Hi", toolloop.StopEnd)},
			"Hi\n"},
		{"model.response without deltas prints the text", sink.PrinterOptions{}, []toolloop.Event{
			ev(toolloop.EventModelRequest), response("Hi there", toolloop.StopEnd)},
			"Hi there\n"},
		{"model.response with a refusal", sink.PrinterOptions{}, []toolloop.Event{response("I can't help with that.", toolloop.StopRefusal)},
			"I can't help with that.\n  ! the model stopped: refusal\n"},
		{"tool.execution_start is quiet", sink.PrinterOptions{}, []toolloop.Event{start(`{"path":"a.go"}`)}, ""},
		{"tool.execution_start verbose", verbose, []toolloop.Event{start(`{"path":"a.go"}`)}, "  … read_file path=a.go\n"},
		{"tool.arguments_repaired verbose", verbose, []toolloop.Event{argsRepaired(`{"path":"b.go"}`, "removed a trailing comma")},
			"  ~ read_file path=b.go → arguments repaired: removed a trailing comma\n"},
		{"tool.arguments_repaired updates the call's line", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"b.go",}`), argsRepaired(`{"path":"b.go"}`, "removed a trailing comma"), complete(toolloop.TextResult("ok"))},
			"  ✓ read_file path=b.go → ok\n"},
		{"guard.verdict allow is quiet", sink.PrinterOptions{}, []toolloop.Event{verdict(toolloop.Allow, "", "")}, ""},
		{"guard.verdict allow verbose", verbose, []toolloop.Event{verdict(toolloop.Allow, "read-only", "reads")},
			"  · read_file → allowed: read-only [reads]\n"},
		{"guard.verdict modify shows on the call's line", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"/etc/passwd"}`), modified(`{"path":"etc/passwd"}`, "kept inside the workspace", "jail"), complete(toolloop.TextResult("root:x:0:0"))},
			"  ✓ read_file path=etc/passwd (args changed by guard: kept inside the workspace [jail]) → root:x:0:0\n"},
		{"guard.verdict modify verbose", verbose, []toolloop.Event{modified(`{"path":"etc/passwd"}`, "kept inside the workspace", "jail")},
			"  ~ read_file path=etc/passwd → args changed by guard: kept inside the workspace [jail]\n"},
		{"guard.verdict deny shows on the call's line", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":".env"}`), verdict(toolloop.Deny, "secrets", "no-env"), complete(failed(toolloop.KindDenied, "denied by policy: secrets"))},
			"  ✗ read_file path=.env → denied by policy: secrets\n"},
		{"guard.verdict deny verbose", verbose, []toolloop.Event{verdict(toolloop.Deny, "secrets", "no-env")},
			"  ✗ read_file → denied by policy: secrets [no-env]\n"},
		{"guard.verdict ask waits for permission.requested", sink.PrinterOptions{}, []toolloop.Event{verdict(toolloop.Ask, "x", "y")}, ""},
		{"permission.requested", sink.PrinterOptions{}, []toolloop.Event{start(`{"path":"x"}`), requested("deletes a file", "ask-delete")},
			"  ? read_file path=x → needs approval: deletes a file [ask-delete]\n"},
		{"permission.completed approved shows on the call's line", sink.PrinterOptions{}, []toolloop.Event{approval(true, "")}, ""},
		{"permission.completed approved verbose", verbose, []toolloop.Event{approval(true, "ok")}, "  ✓ read_file → approved: ok\n"},
		{"permission.completed refused shows on the call's line", sink.PrinterOptions{}, []toolloop.Event{approval(false, "no")}, ""},
		{"permission.completed refused verbose", verbose, []toolloop.Event{approval(false, "no")}, "  ✗ read_file → not approved: no\n"},
		{"hook.effect context is quiet", sink.PrinterOptions{}, []toolloop.Event{hook("pre_tool_use", "context", "added a note")}, ""},
		{"hook.effect context verbose", verbose, []toolloop.Event{hook("pre_tool_use", "context", "added a note")},
			"  ! read_file → pre_tool_use hook 0: context: added a note\n"},
		{"hook.effect reject", sink.PrinterOptions{}, []toolloop.Event{hook("post_tool_use", "reject", "output too large")},
			"  ! read_file → post_tool_use hook 0: reject: output too large\n"},
		{"hook.effect panic", sink.PrinterOptions{}, []toolloop.Event{hook("pre_tool_use", "panic", "")},
			"  ! read_file → pre_tool_use hook 0: panic\n"},
		{"tool.execution_progress is quiet", sink.PrinterOptions{}, []toolloop.Event{progress(3, 10, "files")}, ""},
		{"tool.execution_progress verbose", verbose, []toolloop.Event{progress(3, 10, "files"), progress(0, 0, "warming up")},
			"  … read_file → 3/10 files\n  … read_file → warming up\n"},
		{"tool.execution_partial_result is quiet", sink.PrinterOptions{}, []toolloop.Event{partial("building...\n")}, ""},
		{"tool.execution_partial_result verbose", verbose, []toolloop.Event{partial("\nbuilding...\nmore")},
			"  … read_file → │ building...\n  … read_file → │ more\n"},
		{"tool.execution_partial_result joined", verbose, []toolloop.Event{partial("1\n2\n3\n4\n5\n6\n7\n")},
			"  … read_file → │ 1\n  … read_file → │ 2\n  … read_file → │ 3\n  … read_file → │ 4\n  … read_file → │ 5\n  … read_file → │ … (+2 lines)\n"},
		{"tool.execution_complete ok", sink.PrinterOptions{}, []toolloop.Event{start(`{"path":"main.go"}`), complete(toolloop.TextResult("package main\n\nfunc main() {}\n"))},
			"  ✓ read_file path=main.go → package main … (+2 lines)\n"},
		{"tool.execution_complete with no output", sink.PrinterOptions{}, []toolloop.Event{complete(&toolloop.ToolResult{Status: toolloop.StatusOK})},
			"  ✓ read_file → (no output)\n"},
		{"tool.execution_complete image", sink.PrinterOptions{}, []toolloop.Event{complete(image)},
			"  ✓ read_file → [image (image/png, 2048 bytes)]\n"},
		{"tool.execution_complete slow", sink.PrinterOptions{}, []toolloop.Event{complete(slow)}, "  ✓ read_file (2.3s) → done\n"},
		{"tool.execution_complete durations off", sink.PrinterOptions{SlowCall: -1}, []toolloop.Event{complete(slow)}, "  ✓ read_file → done\n"},
		{"tool.execution_complete truncated", sink.PrinterOptions{}, []toolloop.Event{complete(truncated)},
			"  ✓ read_file → line one … (+1 line) [truncated from 2.5 MB]\n"},
		{"tool.execution_complete error in full", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"x"}`), complete(failed(toolloop.KindExecutionFailed, "exit status 1\n--- FAIL: TestX\n    x_test.go:9: want 1, got 2"))},
			"  ✗ read_file path=x → execution_failed: exit status 1\n        --- FAIL: TestX\n            x_test.go:9: want 1, got 2\n"},
		{"tool.execution_complete panic", sink.PrinterOptions{}, []toolloop.Event{panicEnd},
			"  ✗ read_file → panic: tool read_file panicked: boom\n"},
		{"tool.execution_complete panic verbose shows the stack", verbose, []toolloop.Event{panicEnd},
			"  ✗ read_file → panic: tool read_file panicked: boom\n        stack: goroutine 7 [running]:\n        main.tool()\n"},
		{"a call's arguments come from the model's turn too", sink.PrinterOptions{}, []toolloop.Event{
			response("", toolloop.StopToolUse, toolloop.ToolCall{ID: "c1", Name: "read_file", Arguments: []byte(`{"path":"z"}`)}),
			requested("r", ""), complete(failed(toolloop.KindInvalidArgs, "bad"))},
			"  ? read_file path=z → needs approval: r\n  ✗ read_file path=z → invalid_args: bad\n"},
		{"model.retry", sink.PrinterOptions{}, []toolloop.Event{attempt(toolloop.EventModelRetry, 1, 0, 1500*time.Millisecond)},
			"  ! model attempt 1 failed; retrying in 1.5s: openai: 429 Too Many Requests\n"},
		{"model.fallback", sink.PrinterOptions{}, []toolloop.Event{attempt(toolloop.EventModelFallback, 2, 0, 0)},
			"  ! model 0 failed; trying the next: openai: 429 Too Many Requests\n"},
		{"turn.sent_back", sink.PrinterOptions{}, []toolloop.Event{withError(toolloop.EventTurnSentBack, "one file per turn")},
			"  ! turn sent back: one file per turn\n"},
		{"output.invalid", sink.PrinterOptions{}, []toolloop.Event{withError(toolloop.EventOutputInvalid, "at /severity: value must be one of")},
			"  ! answer rejected: at /severity: value must be one of\n"},
		{"user.message", sink.PrinterOptions{}, []toolloop.Event{userMessage(toolloop.OriginSteer, "use the staging database")},
			"  » delivered: use the staging database\n"},
		{"user.message follow-up, two lines", sink.PrinterOptions{}, []toolloop.Event{userMessage(toolloop.OriginFollowUp, "then\nrun the tests")},
			"  » delivered (follow-up): then\n        run the tests\n"},
		{"user.message ends the streamed line", sink.PrinterOptions{}, []toolloop.Event{
			delta(toolloop.EventModelDelta, "Working"), userMessage(toolloop.OriginSteer, "stop")},
			"Working\n  » delivered: stop\n"},
		{"job.started stands for its call's line", sink.PrinterOptions{}, []toolloop.Event{shellStart, jobStarted(), shellDone}, jobLine},
		{"job.started verbose keeps its call's line", verbose, []toolloop.Event{shellStart, jobStarted(), shellDone},
			`  … exec_shell command="go test ./..." background=true` + "\n" + jobLine +
				`  ✓ exec_shell command="go test ./..." background=true → started job job_1 (exec_shell) in the background` + "\n"},
		{"job.started's call failing shows", sink.PrinterOptions{}, []toolloop.Event{shellStart, jobStarted(), func() toolloop.Event {
			e := jobEv(toolloop.EventComplete)
			e.Result = failed(toolloop.KindExecutionFailed, "no shell")
			return e
		}()}, jobLine + `  ✗ exec_shell command="go test ./..." background=true → execution_failed: no shell` + "\n"},
		{"job.output is quiet", sink.PrinterOptions{}, []toolloop.Event{jobOutput("PASS\n")}, ""},
		{"job.output verbose", verbose, []toolloop.Event{jobOutput("=== RUN TestA\n--- PASS: TestA\n")},
			"  … exec_shell → │ === RUN TestA\n  … exec_shell → │ --- PASS: TestA\n"},
		{"job.finished ok, with its exit code and arguments", sink.PrinterOptions{}, []toolloop.Event{
			shellStart, jobStarted(), shellDone, jobFinished(toolloop.JobOK, withExit(toolloop.TextResult("ok  pkg/a\nok  pkg/b\n"), 0), "")},
			jobLine + `  ✓ job_1 exec_shell command="go test ./..." background=true (31s) → ok, exit code 0: ok  pkg/a … (+1 line)` + "\n"},
		{"job.finished error in full, exit code as decoded from JSON", sink.PrinterOptions{}, []toolloop.Event{
			jobFinished(toolloop.JobError, withExit(failed(toolloop.KindExecutionFailed, "exit status 2\n--- FAIL: TestB"), 2.0), "")},
			"  ✗ job_1 exec_shell (31s) → error (execution_failed), exit code 2: exit status 2\n        --- FAIL: TestB\n"},
		{"job.finished timeout", sink.PrinterOptions{}, []toolloop.Event{
			jobFinished(toolloop.JobError, failed(toolloop.KindTimeout, "the job ran past 30m0s"), "")},
			"  ✗ job_1 exec_shell (31s) → error (timeout): the job ran past 30m0s\n"},
		{"job.finished canceled says why", sink.PrinterOptions{}, []toolloop.Event{
			jobFinished(toolloop.JobCanceled, failed(toolloop.KindCanceled, "context canceled"), "the run ended")},
			"  ! job_1 exec_shell (31s) → canceled: the run ended\n"},
		{"job.finished without times takes the result's duration", sink.PrinterOptions{}, []toolloop.Event{func() toolloop.Event {
			r := toolloop.TextResult("done")
			r.Meta.Duration = 1500 * time.Millisecond
			e := jobFinished(toolloop.JobOK, r, "")
			e.Job.Started = time.Time{}
			return e
		}()}, "  ✓ job_1 exec_shell (1.5s) → ok: done\n"},
		{"user.message of a job's end", sink.PrinterOptions{}, []toolloop.Event{
			userMessage(toolloop.OriginJob, "[Job job_1 (exec_shell) ended: ok after 31s]\nok  pkg/a\n")},
			"  » job end delivered: [Job job_1 (exec_shell) ended: ok after 31s] …\n"},
		{"user.message of two jobs' ends", sink.PrinterOptions{}, []toolloop.Event{func() toolloop.Event {
			e := userMessage(toolloop.OriginJob, "[Job job_1 (exec_shell) ended: ok after 31s]")
			e.Messages = append(e.Messages, toolloop.UserMessage("[Job job_2 (exec_shell) ended: error after 2s]"))
			return e
		}()}, "  » job ends delivered: [Job job_1 (exec_shell) ended: ok after 31s]\n        [Job job_2 (exec_shell) ended: error after 2s]\n"},
		{"run.interrupted", sink.PrinterOptions{}, []toolloop.Event{interrupted(toolloop.Interrupt{Mode: toolloop.InterruptNow})},
			"  ! interrupted (now)\n"},
		{"run.interrupted going on", sink.PrinterOptions{}, []toolloop.Event{interrupted(toolloop.Interrupt{Mode: toolloop.InterruptAfterTools, Continue: true})},
			"  ! interrupted (after_tools); going on with the queued messages\n"},
		{"an interrupted turn, then the run's end, says it once", sink.PrinterOptions{}, []toolloop.Event{
			ev(toolloop.EventModelRequest), delta(toolloop.EventModelDelta, "I will fir"), response("I will fir", toolloop.StopInterrupted),
			interrupted(toolloop.Interrupt{}), runEnd(toolloop.StopInterrupted, "toolloop: the run was interrupted")},
			"I will fir\n  ! interrupted (now)\n"},
		{"text, then calls, then text", sink.PrinterOptions{}, []toolloop.Event{
			ev(toolloop.EventModelRequest), delta(toolloop.EventModelDelta, "Let me look."),
			response("Let me look.", toolloop.StopToolUse, toolloop.ToolCall{ID: "c1", Name: "read_file"}),
			start(`{"path":"a"}`), complete(toolloop.TextResult("A")),
			ev(toolloop.EventModelRequest), delta(toolloop.EventModelDelta, "Done."), response("Done.", toolloop.StopEnd),
			runEnd(toolloop.StopEnd, "")},
			"Let me look.\n  ✓ read_file path=a → A\nDone.\n"},
	}
	covered := map[toolloop.EventType]bool{}
	for _, c := range cases {
		for _, e := range c.events {
			covered[e.Type] = true
		}
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, printed(c.opts, c.events...))
		})
	}
	for _, typ := range allTypes {
		assert.True(t, covered[typ], "no case for %s", typ)
	}
}

func TestPrinterUnknownEventType(t *testing.T) {
	e := ev("tool.something_new")
	assert.Empty(t, printed(sink.PrinterOptions{}, e))
	assert.Equal(t, "  · tool.something_new\n", printed(verbose, e))
}

func TestPrinterArgumentSummaries(t *testing.T) {
	cases := []struct{ args, want string }{
		{`{}`, "  ✓ read_file → ok\n"},
		{``, "  ✓ read_file → ok\n"},
		{`{"path":"a b.go","n":3,"deep":{"x":[1, 2]},"ok":true}`, `  ✓ read_file path="a b.go" n=3 deep={"x":[1,2]} ok=true → ok` + "\n"},
		{`{"cmd":"echo \"hi\"\nrm -rf /"}`, `  ✓ read_file cmd="echo \"hi\"\nrm -rf /" → ok` + "\n"},
		{`["a","b"]`, `  ✓ read_file ["a","b"] → ok` + "\n"},
		{`{"id":"2","n":2,"b":"true"}`, `  ✓ read_file id="2" n=2 b="true" → ok` + "\n"}, // a string never reads as a number
		{`"not json {"`, `  ✓ read_file "not json {" → ok` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.args, func(t *testing.T) {
			got := printed(sink.PrinterOptions{}, start(c.args), complete(toolloop.TextResult("ok")))
			assert.Equal(t, c.want, got)
		})
	}
	long := `{"path":"x","content":"` + strings.Repeat("y", 500) + `"}`
	got := printed(sink.PrinterOptions{ArgumentBytes: 40}, start(long), complete(toolloop.TextResult("ok")))
	assert.Equal(t, `  ✓ read_file path=x content="`+strings.Repeat("y", 40-len(`path=x content="`))+"… → ok\n", got)
}

// A huge result prints as one bounded line; a huge error is cut at
// ErrorBytes; neither holds on to the output.
func TestPrinterBoundsHugeOutput(t *testing.T) {
	// Beyond the 1 MiB the printer looks into for a first line.
	huge := strings.Repeat("x", 8<<20)
	lines := strings.Repeat("a line of output\n", 1<<19)
	cases := []struct {
		name string
		r    *toolloop.ToolResult
		max  int
	}{
		{"one long line", toolloop.TextResult(huge), 200},
		{"many lines", toolloop.TextResult(lines), 200},
		{"long error", failed(toolloop.KindExecutionFailed, huge), 4096 + 200},
		// ErrorBytes of the message, and the indentation of its lines.
		{"many error lines", failed(toolloop.KindExecutionFailed, lines), 4096 + 8*(4096/17+1) + 200},
		{"huge arguments", toolloop.TextResult("ok"), 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := `{"path":"a.go"}`
			if c.name == "huge arguments" {
				args = `{"content":"` + huge + `"}`
			}
			out := printed(sink.PrinterOptions{}, start(args), complete(c.r))
			assert.Less(t, len(out), c.max, "printed %d bytes", len(out))
			assert.True(t, strings.HasPrefix(out, "  "), out)
		})
	}
	t.Run("error cut mark", func(t *testing.T) {
		out := printed(sink.PrinterOptions{ErrorBytes: 10}, complete(failed(toolloop.KindExecutionFailed, "0123456789abcdef")))
		assert.Equal(t, "  ✗ read_file → execution_failed: 0123456789\n        … (6 B more)\n", out)
	})
}

var escapes = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Nothing a tool, an argument or the model writes can drive the
// terminal; with colour on, the only escapes are the printer's own.
func TestPrinterNeutralizesTerminalControls(t *testing.T) {
	hostile := "a\x1b]0;pwned\x07b\x1b[2Jc\rd\u202ee\u009bf\x7fg\xffh"
	events := []toolloop.Event{
		delta(toolloop.EventModelDelta, hostile),
		delta(toolloop.EventModelReasoningDelta, hostile),
		start(`{"p":"` + strings.ReplaceAll(hostile, "\xff", "") + `"}`),
		complete(toolloop.TextResult(hostile)),
		complete(failed(toolloop.KindExecutionFailed, hostile+"\n"+hostile)),
		requested(hostile, hostile),
		hook("pre_tool_use", "deny", hostile),
		limit(hostile),
		func() toolloop.Event {
			e := jobStarted()
			e.Tool = hostile
			return e
		}(),
		jobOutput(hostile),
		jobFinished(toolloop.JobCanceled, nil, hostile),
		jobFinished(toolloop.JobError, failed(toolloop.KindExecutionFailed, hostile), ""),
		userMessage(toolloop.OriginJob, hostile),
		runEnd(toolloop.StopError, hostile),
	}
	for _, color := range []sink.Color{sink.ColorNever, sink.ColorAlways} {
		out := printed(sink.PrinterOptions{Color: color, Verbose: true}, events...)
		rest := escapes.ReplaceAllString(out, "")
		if color == sink.ColorNever {
			assert.Equal(t, out, rest, "no colour was asked for")
		}
		for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e", "\u009b", "\x7f", "\xff"} {
			assert.NotContains(t, rest, bad)
		}
		assert.Contains(t, rest, `a\x1b]0;pwned\x07b\x1b[2Jcd\u202ee\u009bf\x7fg�h`)
	}
}

// The command prints events redacted (sanitize.Redactor.RedactEvent): a
// secret in a job's tool, output, reason, result or end message does not
// reach the screen.
func TestPrinterJobsRedacted(t *testing.T) {
	var red sanitize.Redactor
	started := jobStarted()
	started.Job.Tool, started.Tool = "exec_shell "+secret, ""
	events := []toolloop.Event{
		started,
		jobOutput("token=" + secret),
		jobFinished(toolloop.JobCanceled, nil, "asked to by "+secret),
		jobFinished(toolloop.JobError, failed(toolloop.KindExecutionFailed, "auth failed: "+secret), ""),
		jobFinished(toolloop.JobOK, toolloop.TextResult(secret), ""),
		userMessage(toolloop.OriginJob, "[Job job_1 ended] "+secret),
	}
	var raw, redacted []toolloop.Event
	for _, e := range events {
		raw = append(raw, e)
		redacted = append(redacted, red.RedactEvent(e))
	}
	require.Equal(t, 6, strings.Count(printed(verbose, raw...), secret), "every event prints the secret unredacted")
	out := printed(verbose, redacted...)
	assert.NotContains(t, out, secret)
	assert.Equal(t, 6, strings.Count(out, "[REDACTED:"), out)
}

func TestPrinterColor(t *testing.T) {
	var b bytes.Buffer
	p := sink.NewPrinter(&b, &sink.PrinterOptions{Color: sink.ColorAlways})
	p(complete(toolloop.TextResult("fine")))
	assert.Equal(t, "  \x1b[32m✓\x1b[0m \x1b[1mread_file\x1b[0m → \x1b[32mfine\x1b[0m\n", b.String())

	// A buffer is not a terminal: auto means no colour.
	b.Reset()
	sink.NewPrinter(&b, nil)(complete(toolloop.TextResult("fine")))
	assert.Equal(t, "  ✓ read_file → fine\n", b.String())
}

// The printer is safe for concurrent use: two runs' events at once (go
// test -race checks it), each event written whole.
func TestPrinterConcurrent(t *testing.T) {
	var b bytes.Buffer
	p := sink.NewPrinter(&b, &sink.PrinterOptions{Color: sink.ColorNever})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				e := complete(toolloop.TextResult("out"))
				e.RunID = string(rune('a' + g))
				e.CallID = e.RunID + string(rune('0'+i%10))
				p(start(`{"i":1}`))
				p(e)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 400)
	for _, l := range lines {
		assert.Regexp(t, `^  ✓ read_file( i=1)? → out$`, l)
	}
}

// A whole run through the loop: a streaming model, calls in parallel, a
// denial, an approval.
func TestPrinterLoop(t *testing.T) {
	var tools toolloop.ToolRegistry
	tools.MustRegister(
		toolloop.NewTool("read_file", "Read.", func(_ context.Context, in struct {
			Path string `json:"path"`
		}) (any, error) {
			return "contents of " + in.Path, nil
		}),
		toolloop.NewTool("rm", "Remove.", func(context.Context, struct {
			Path string `json:"path"`
		}) (any, error) {
			return "removed", nil
		}),
	)
	var b bytes.Buffer
	loop := &toolloop.AgentLoop{
		Model: &streamer{turns: []*toolloop.Response{
			looptest.Calls(looptest.Call("c1", "read_file", `{"path":"a.go"}`), looptest.Call("c2", "rm", `{"path":"/"}`),
				looptest.Call("c3", "rm", `{"path":"tmp"}`)),
			looptest.Text("All done.\nBye."),
		}},
		Tools: &tools,
		Guard: toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			switch {
			case c.Name != "rm":
				return toolloop.Verdict{}
			case strings.Contains(string(c.Arguments), `"/"`):
				return toolloop.Verdict{Decision: toolloop.Deny, Reason: "not the root", Rule: "root"}
			}
			return toolloop.Verdict{Decision: toolloop.Ask, Reason: "removes files", Rule: "ask-rm"}
		}),
		Approver: toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
			return toolloop.Approval{Approved: true}, nil
		}),
		OnEvent: sink.NewPrinter(&b, &sink.PrinterOptions{Color: sink.ColorNever}), Limits: toolloop.Limits{MaxConcurrency: 1},
	}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("clean up")})
	require.NoError(t, err)
	assert.Equal(t, "  ✓ read_file path=a.go → contents of a.go\n"+
		"  ✗ rm path=/ → denied by policy: not the root\n"+
		"  ? rm path=tmp → needs approval: removes files [ask-rm]\n"+
		"  ✓ rm path=tmp (approved) → removed\n"+
		"All done.\nBye.\n", b.String())
}

// streamer is a model that streams each reply's text in pieces of three
// bytes.
type streamer struct {
	mu    sync.Mutex
	turns []*toolloop.Response
}

func (s *streamer) Generate(context.Context, *toolloop.Request) (*toolloop.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.turns[0]
	s.turns = s.turns[1:]
	return r, nil
}

func (s *streamer) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		r, _ := s.Generate(ctx, req)
		text := r.Message.Text()
		for len(text) > 0 {
			n := min(3, len(text))
			if !yield(toolloop.Chunk{Text: text[:n]}, nil) {
				return
			}
			text = text[n:]
		}
		yield(toolloop.Chunk{Response: r}, nil)
	}
}

var _ toolloop.Streamer = (*streamer)(nil)

func TestPrinterChildRun(t *testing.T) {
	child := func(e toolloop.Event) toolloop.Event {
		e.RunID, e.ParentRunID, e.ParentCallID = "run_child", runID, "c9"
		return e
	}
	events := []toolloop.Event{
		child(runStart(toolloop.UserMessage("task"))),
		child(complete(toolloop.TextResult("A"))),
		child(response("child answer", toolloop.StopEnd)),
		child(paused("rm")),
		child(interrupted(toolloop.Interrupt{})),
		child(runEnd(toolloop.StopEnd, "")),
	}
	assert.Equal(t, "  ✓ ↳ read_file → A\n", printed(sink.PrinterOptions{}, events...),
		"a sub-agent's calls show as its own; its text, pause and end are the parent's to tell")
	assert.Contains(t, printed(verbose, events...), "child answer")
	assert.Contains(t, printed(verbose, events...), "interrupted (now)")
}

func timed(e toolloop.Event, t *toolloop.CallTiming) toolloop.Event { e.Timing = t; return e }

func withDuration(r *toolloop.ToolResult, d time.Duration) *toolloop.ToolResult {
	r.Meta.Duration = d
	return r
}

// TestPrinterDecisions checks issue 39's one line per call: its decision,
// the arguments it ran with and who changed them, and the approval's wait
// apart from the time the call ran.
func TestPrinterDecisions(t *testing.T) {
	slow := toolloop.TextResult("wrote 1 byte")
	slow.Meta.Duration = 2100 * time.Millisecond
	editedOK := approval(true, "approved at the terminal with edited arguments")
	editedOK.Approval.Arguments = json.RawMessage(`{"path":"c.txt"}`)
	sameOK := approval(true, "approved at the terminal")
	sameOK.Approval.Arguments = json.RawMessage(`{"path":"b.txt"}`)
	hookMod := hook("pre_tool_use", "modify", `{"path":"safe.txt"}`)
	noted := &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{
		toolloop.TextContent("1 line"),
		toolloop.TextContent("Note: policy changed the arguments before the call ran (x). It ran with: {}"),
	}}
	cases := []struct {
		name   string
		opts   sink.PrinterOptions
		events []toolloop.Event
		want   string
	}{
		{"approved: one line, the wait apart", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"b.txt"}`), verdict(toolloop.Ask, "writes need a human", "ask-write"),
			requested("writes need a human", "ask-write"), at(approval(true, "approved at the terminal"), 12*time.Second),
			complete(slow)},
			"  ? read_file path=b.txt → needs approval: writes need a human [ask-write]\n" +
				"  ✓ read_file path=b.txt (2.1s; approved, waited 12s for approval) → wrote 1 byte\n"},
		{"edited by a person: the edited arguments", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"b.txt"}`), verdict(toolloop.Ask, "writes need a human", "ask-write"), requested("writes need a human", "ask-write"),
			at(editedOK, 4*time.Second), complete(toolloop.TextResult("ok"))},
			"  ? read_file path=b.txt → needs approval: writes need a human [ask-write]\n" +
				"  ✓ read_file path=c.txt (args edited by person, approved, waited 4s for approval) → ok\n"},
		{"an approval that repeats the arguments edits nothing", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"b.txt"}`), requested("writes need a human", ""), sameOK, complete(toolloop.TextResult("ok"))},
			"  ? read_file path=b.txt → needs approval: writes need a human\n" +
				"  ✓ read_file path=b.txt (approved) → ok\n"},
		{"the time the call ran holds no approval wait", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"b.txt"}`), requested("writes need a human", ""), at(approval(true, "ok"), 12*time.Second),
			timed(complete(withDuration(toolloop.TextResult("ok"), 14100*time.Millisecond)), &toolloop.CallTiming{Approval: 12 * time.Second, Tool: 2100 * time.Millisecond})},
			"  ? read_file path=b.txt → needs approval: writes need a human\n" +
				"  ✓ read_file path=b.txt (2.1s; approved, waited 12s for approval) → ok\n"},
		{"changed by a hook", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"b.txt"}`), hookMod, complete(toolloop.TextResult("ok"))},
			"  ✓ read_file path=safe.txt (args changed by hook pre_tool_use[0]) → ok\n"},
		{"denied by a person, the wait shown", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"b.txt"}`), requested("writes need a human", ""), at(approval(false, "the user declined the call at the terminal"), 3*time.Second),
			complete(failed(toolloop.KindDenied, "denied by the approver: the user declined the call at the terminal"))},
			"  ? read_file path=b.txt → needs approval: writes need a human\n" +
				"  ✗ read_file path=b.txt (waited 3s for approval) → denied by the approver: the user declined the call at the terminal\n"},
		{"denied by the guard", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":".env"}`), verdict(toolloop.Deny, "secrets", "no-env"), complete(failed(toolloop.KindDenied, "denied by policy: secrets"))},
			"  ✗ read_file path=.env → denied by policy: secrets\n"},
		{"a quick approval shows no wait", sink.PrinterOptions{}, []toolloop.Event{
			start(`{"path":"b.txt"}`), requested("r", ""), at(approval(true, "approved by -yes"), 5*time.Millisecond), complete(toolloop.TextResult("ok"))},
			"  ? read_file path=b.txt → needs approval: r\n  ✓ read_file path=b.txt (approved) → ok\n"},
		{"a note does not run into the result", sink.PrinterOptions{}, []toolloop.Event{start(`{}`), complete(noted)},
			"  ✓ read_file → 1 line … (+1 line)\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, printed(c.opts, c.events...))
		})
	}
}
