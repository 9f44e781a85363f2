package sink_test

import (
	"encoding/json"
	"time"

	"github.com/toolloop/toolloop"
)

// allTypes is every event type the core declares. The table tests check
// that they have a case for each; add new types here.
var allTypes = []toolloop.EventType{
	toolloop.EventRunStart, toolloop.EventRunResumed, toolloop.EventRunPaused, toolloop.EventRunEnd,
	toolloop.EventTranscriptRepaired, toolloop.EventTranscriptEdited, toolloop.EventLimit,
	toolloop.EventModelRequest, toolloop.EventModelDelta, toolloop.EventModelReasoningDelta, toolloop.EventModelResponse,
	toolloop.EventStart, toolloop.EventArgumentsRepaired, toolloop.EventGuardVerdict,
	toolloop.EventPermissionRequested, toolloop.EventPermissionCompleted, toolloop.EventHook,
	toolloop.EventProgress, toolloop.EventPartialResult, toolloop.EventComplete,
	toolloop.EventModelRetry, toolloop.EventModelFallback, toolloop.EventTurnSentBack, toolloop.EventOutputInvalid,
	toolloop.EventUserMessage, toolloop.EventRunInterrupted,
	toolloop.EventJobStarted, toolloop.EventJobOutput, toolloop.EventJobFinished,
	toolloop.EventCacheBust,
}

const runID = "run_1"

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// ev returns an event of the run, at turn 1.
func ev(typ toolloop.EventType) toolloop.Event {
	return toolloop.Event{Type: typ, Time: t0, RunID: runID, Turn: 1}
}

// callEv returns an event of call c1 to the tool read_file.
func callEv(typ toolloop.EventType) toolloop.Event {
	e := ev(typ)
	e.CallID, e.Tool, e.Source, e.SourceName = "c1", "read_file", toolloop.SourceBuiltin, "local"
	return e
}

func start(args string) toolloop.Event {
	e := callEv(toolloop.EventStart)
	e.Arguments = json.RawMessage(args)
	return e
}

func complete(r *toolloop.ToolResult) toolloop.Event {
	e := callEv(toolloop.EventComplete)
	r.CallID, r.Name = "c1", "read_file"
	e.Result = r
	return e
}

func failed(kind toolloop.ErrorKind, msg string) *toolloop.ToolResult {
	return toolloop.ErrorResult(toolloop.Errorf(kind, "%s", msg))
}

func verdict(d toolloop.Decision, reason, rule string) toolloop.Event {
	e := callEv(toolloop.EventGuardVerdict)
	e.Verdict = &toolloop.Verdict{Decision: d, Reason: reason, Rule: rule}
	return e
}

// modified is a guard's Modify verdict that rewrote the arguments.
func modified(args, reason, rule string) toolloop.Event {
	e := verdict(toolloop.Modify, reason, rule)
	e.Verdict.Arguments = json.RawMessage(args)
	return e
}

// at is e at t0 plus d.
func at(e toolloop.Event, d time.Duration) toolloop.Event {
	e.Time = t0.Add(d)
	return e
}

func requested(reason, rule string) toolloop.Event {
	e := callEv(toolloop.EventPermissionRequested)
	e.Verdict = &toolloop.Verdict{Decision: toolloop.Ask, Reason: reason, Rule: rule}
	return e
}

func approval(ok bool, reason string) toolloop.Event {
	e := callEv(toolloop.EventPermissionCompleted)
	e.Approval = &toolloop.Approval{Approved: ok, Reason: reason}
	return e
}

func hook(h, effect, detail string) toolloop.Event {
	e := callEv(toolloop.EventHook)
	e.Hook = &toolloop.HookEffect{Hook: h, Index: 0, Effect: effect, Detail: detail}
	return e
}

func delta(typ toolloop.EventType, text string) toolloop.Event {
	e := ev(typ)
	e.Text = text
	return e
}

func partial(text string) toolloop.Event {
	e := callEv(toolloop.EventPartialResult)
	e.Text = text
	return e
}

func progress(done, total float64, msg string) toolloop.Event {
	e := callEv(toolloop.EventProgress)
	e.Progress = &toolloop.Progress{Done: done, Total: total, Message: msg}
	return e
}

func response(text string, stop toolloop.StopReason, calls ...toolloop.ToolCall) toolloop.Event {
	e := ev(toolloop.EventModelResponse)
	m := toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: calls, StopReason: stop}
	if text != "" {
		m.Content = []toolloop.Content{toolloop.TextContent(text)}
	}
	e.Response = &toolloop.Response{Message: m, StopReason: stop, Usage: toolloop.Usage{InputTokens: 120, OutputTokens: 30}, Model: "m-1"}
	return e
}

func runStart(msgs ...toolloop.Message) toolloop.Event {
	e := ev(toolloop.EventRunStart)
	e.Turn = 0
	e.Messages = msgs
	return e
}

func runEnd(stop toolloop.StopReason, err string) toolloop.Event {
	e := ev(toolloop.EventRunEnd)
	e.StopReason, e.Error = stop, err
	acc := toolloop.Accounting{Usage: toolloop.Usage{InputTokens: 300, OutputTokens: 50}, Cost: 0.0123, ToolCalls: 2}
	e.Usage, e.Accounting = &acc.Usage, &acc
	return e
}

// cachedEnd is runEnd whose input was 90% served from the prompt cache.
func cachedEnd() toolloop.Event {
	e := runEnd(toolloop.StopEnd, "")
	e.Accounting.Usage.CacheReadTokens = 270
	return e
}

func userMessage(origin toolloop.Origin, text string) toolloop.Event {
	e := ev(toolloop.EventUserMessage)
	e.Origin, e.Messages = origin, []toolloop.Message{toolloop.UserMessage(text)}
	return e
}

func interrupted(i toolloop.Interrupt) toolloop.Event {
	e := ev(toolloop.EventRunInterrupted)
	e.Interrupt = &i
	return e
}

func paused(names ...string) toolloop.Event {
	e := ev(toolloop.EventRunPaused)
	for i, n := range names {
		e.Pending = append(e.Pending, toolloop.PendingCall{CallID: "p" + string(rune('1'+i)), Name: n,
			Arguments: json.RawMessage(`{"path":"x"}`), Reason: "deletes", Rule: "ask-delete", Index: i})
	}
	e.Accounting = &toolloop.Accounting{ToolCalls: 1}
	return e
}

func resumed(approved ...bool) toolloop.Event {
	e := ev(toolloop.EventRunResumed)
	e.Approvals = map[string]toolloop.Approval{}
	for i, ok := range approved {
		e.Approvals["p"+string(rune('1'+i))] = toolloop.Approval{Approved: ok, Reason: "because"}
	}
	return e
}

func limit(msg string) toolloop.Event {
	e := ev(toolloop.EventLimit)
	e.Error = msg
	e.Accounting = &toolloop.Accounting{ToolCalls: 5}
	return e
}

func repaired(notes ...string) toolloop.Event {
	e := ev(toolloop.EventTranscriptRepaired)
	e.Repairs = notes
	return e
}

func argsRepaired(args string, fixes ...string) toolloop.Event {
	e := callEv(toolloop.EventArgumentsRepaired)
	e.Arguments, e.Repairs = json.RawMessage(args), fixes
	return e
}

func edited() toolloop.Event {
	e := ev(toolloop.EventTranscriptEdited)
	e.Edit = &toolloop.TranscriptEdit{Strategy: "clear_tool_results", Reason: "threshold",
		CallIDs: []string{"c0", "c1"}, TokensBefore: 12000, TokensAfter: 3000}
	return e
}

// bust is a cache bust of turn 3: a clearing changed message 3 of the
// previous request's 4.
func bust() toolloop.Event {
	e := ev(toolloop.EventCacheBust)
	e.Turn = 3
	e.CacheBust = &toolloop.CacheBust{Reason: toolloop.BustEdit, Detail: "clear_tool_results", Kept: 3, Previous: 4}
	return e
}

// attempt is a failed model attempt, retried after delay or given up on
// for the next model.
func attempt(typ toolloop.EventType, n, model int, delay time.Duration) toolloop.Event {
	e := ev(typ)
	e.Attempt = &toolloop.ModelAttempt{Attempt: n, Model: model, Error: "openai: 429 Too Many Requests", Delay: delay}
	return e
}

func withError(typ toolloop.EventType, msg string) toolloop.Event {
	e := ev(typ)
	e.Error = msg
	return e
}

// The background job job_1, started by call c1 to exec_shell in turn 1,
// 31s before t0.
func jobEv(typ toolloop.EventType) toolloop.Event {
	e := ev(typ)
	e.CallID, e.Tool, e.Source, e.SourceName = "c1", "exec_shell", toolloop.SourceBuiltin, "local"
	return e
}

func jobStarted() toolloop.Event {
	e := jobEv(toolloop.EventJobStarted)
	e.Job = &toolloop.Job{ID: "job_1", CallID: "c1", Tool: "exec_shell", Turn: 1, Status: toolloop.JobRunning, Started: t0.Add(-31 * time.Second)}
	return e
}

func jobOutput(text string) toolloop.Event {
	e := jobEv(toolloop.EventJobOutput)
	e.Turn, e.Text = 2, text
	return e
}

// jobFinished is job_1's end at t0, in turn 3, 31s after it started, with
// the result r (nil for none) and reason.
func jobFinished(status toolloop.JobStatus, r *toolloop.ToolResult, reason string) toolloop.Event {
	e := jobEv(toolloop.EventJobFinished)
	e.Turn = 3
	if r != nil {
		r.CallID, r.Name = "c1", "exec_shell"
	}
	e.Job = &toolloop.Job{ID: "job_1", CallID: "c1", Tool: "exec_shell", Turn: 1, Status: status, Started: t0.Add(-31 * time.Second),
		Ended: t0, OutputBytes: 4096, Reason: reason, Result: r}
	return e
}

// withExit returns r with the exit code a shell tool reports.
func withExit(r *toolloop.ToolResult, code any) *toolloop.ToolResult {
	r.Meta.Extra = map[string]any{"exit_code": code}
	return r
}
