package sink

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
)

// SlogOptions configures [NewSlog]. The zero value, like a nil
// *SlogOptions, is the documented default of every field: no deltas, no
// arguments, no content, no redaction.
type SlogOptions struct {
	// Deltas also logs model text and reasoning deltas, tools' partial
	// output and background jobs' output, one Debug record each. They are left out by default: a
	// streamed turn makes hundreds of them, and the model.response and
	// tool.execution_complete records hold what they add up to.
	Deltas bool
	// Arguments adds the arguments of tool calls (attribute "arguments")
	// to the records of tool.execution_start, tool.arguments_repaired and
	// guard.verdict (a rewrite), and the pending calls' to run.paused.
	// Arguments can hold secrets: set Redact too.
	Arguments bool
	// Content adds what the model, the tools and the user wrote: the
	// prompt ("prompt", the last user message of run.start), the model's
	// text and reasoning ("text", "reasoning"), a result's text or a
	// failed call's message ("output", "error_message"), partial output,
	// progress messages, jobs' output and results, and the reasons and
	// details of guards, approvals, hooks, repairs and canceled jobs
	// ("reason", "detail", "repairs"). Each can hold secrets: set Redact
	// too.
	Content bool
	// MaxBytes bounds each text attribute (arguments, content, errors,
	// stacks); 0 means 1024. A longer value is cut on a rune boundary and
	// ends with "…[N bytes more]".
	MaxBytes int
	// Redact, if set, is applied to each event, reduced to the fields the
	// record will show, before the record is made: set it to a
	// sanitize.Redactor's RedactEvent to keep secrets out of the log, as
	// for eventlog.Options.Redact. It must not change the event it is
	// given, and must be safe for concurrent use.
	Redact func(toolloop.Event) toolloop.Event
}

// NewSlog returns an event sink that writes one [slog.Record] per event to
// logger (nil means slog.Default()), with the event's time, its type as
// the message, and flat attributes that log processors can index. Set it
// as AgentLoop.OnEvent, or pass it to toolloop.MultiSink with other sinks.
//
// Every record has run_id and turn; records of tool events have call_id,
// tool, source and source_name (when known). Then, by event:
//
//   - tool.execution_complete: status, error_kind, duration_ms, bytes,
//     truncated, and stack for a panic;
//   - model.response: stop_reason, model, input_tokens, output_tokens,
//     cache_read_tokens, cache_write_tokens, reasoning_tokens, tool_calls
//     (the number the turn made) and tools (their names);
//   - run.end, run.limit and run.paused: stop_reason, error, the run's
//     token counts as above, cost_usd and tool_calls (the run's count);
//   - guard.verdict and permission.requested: decision and rule;
//     permission.completed: approved; hook.effect: hook, hook_index and
//     effect; tool.execution_progress: done and total;
//   - transcript.edited: strategy, reason, tokens_before, tokens_after,
//     cleared (results removed), model and the edit's tokens;
//   - job.started: job_id, job_status, job_turn (the starting call's);
//     job.finished: job_id, job_status, job_turn, duration_ms,
//     output_bytes, error_kind and exit_code (a result's
//     Meta.Extra["exit_code"]) when it has them; job.output: job's
//     output bytes, as partial output;
//   - run.start: messages (how many); run.resumed: approvals and
//     approved (how many of each);
//     transcript.repaired: repairs (how many); deltas and partial output:
//     bytes.
//
// Levels follow severity: deltas, job output, model requests, call
// starts, progress, argument repairs, allowed verdicts and hooks that
// added context or guidance are Debug; completions, responses, guard
// rewrites and asks, approvals, hooks that modified or transformed,
// transcript edits, jobs that started, ended ok or were canceled, and the
// start, pause and end of runs are Info; failed calls and jobs, denials,
// refused approvals, hooks that denied or rejected, limits, transcript
// repairs, turns cut off or refused, and aborted runs are Warn; panics
// (of a call or a job), failing hooks and runs that ended in an error
// are Error. A run.end after
// run.paused is Info: the pause is not a failure.
//
// Nothing secret is logged by default: no arguments, no tool output and
// no model or user text, unless Arguments or Content say so, and then
// through Redact if set. What is always logged is identifiers, names,
// enumerations, numbers, a panic's stack (code locations), the guard
// rule's name, and the error a run or a limit ended with, which the loop
// or the provider wrote; Redact applies to them too.
//
// Model deltas, partial output and job output are left out unless Deltas
// is set. The
// returned function is safe for concurrent use; it remembers only which
// runs are paused, until their run.end.
func NewSlog(logger *slog.Logger, opts *SlogOptions) func(toolloop.Event) {
	if logger == nil {
		logger = slog.Default()
	}
	s := &slogSink{h: logger.Handler(), paused: map[string]bool{}}
	if opts != nil {
		s.o = *opts
	}
	s.o.MaxBytes = orInt(s.o.MaxBytes, 1024)
	return s.event
}

type slogSink struct {
	h  slog.Handler
	o  SlogOptions
	mu sync.Mutex
	// paused holds the runs whose run.paused came and run.end not yet.
	paused map[string]bool
}

func (s *slogSink) event(e toolloop.Event) {
	switch e.Type {
	case toolloop.EventModelDelta, toolloop.EventModelReasoningDelta, toolloop.EventPartialResult, toolloop.EventJobOutput:
		if !s.o.Deltas {
			return
		}
	}
	pausedEnd := s.track(e)
	level := eventLevel(e, pausedEnd)
	ctx := context.Background()
	if !s.h.Enabled(ctx, level) {
		return
	}
	textBytes := len(e.Text)
	e = s.slim(e)
	if s.o.Redact != nil {
		e = s.o.Redact(e)
	}
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	r := slog.NewRecord(t, level, string(e.Type), 0)
	r.AddAttrs(s.attrs(e, textBytes)...)
	_ = s.h.Handle(ctx, r)
}

// track remembers paused runs; it reports whether e ends a paused run.
func (s *slogSink) track(e toolloop.Event) bool {
	switch e.Type {
	case toolloop.EventRunPaused:
		s.mu.Lock()
		s.paused[e.RunID] = true
		s.mu.Unlock()
	case toolloop.EventRunEnd:
		s.mu.Lock()
		p := s.paused[e.RunID]
		delete(s.paused, e.RunID)
		s.mu.Unlock()
		return p
	}
	return false
}

// eventLevel is the level of e's record.
func eventLevel(e toolloop.Event, pausedEnd bool) slog.Level {
	switch e.Type {
	case toolloop.EventModelDelta, toolloop.EventModelReasoningDelta, toolloop.EventPartialResult, toolloop.EventJobOutput,
		toolloop.EventModelRequest, toolloop.EventStart, toolloop.EventProgress, toolloop.EventArgumentsRepaired:
		return slog.LevelDebug
	case toolloop.EventComplete:
		switch {
		case e.Result == nil || !e.Result.IsError():
			return slog.LevelInfo
		case e.Result.Error != nil && e.Result.Error.Kind == toolloop.KindPanic:
			return slog.LevelError
		}
		return slog.LevelWarn
	case toolloop.EventJobFinished:
		switch {
		case e.Job == nil || e.Job.Status != toolloop.JobError:
			return slog.LevelInfo
		case e.Job.Result != nil && e.Job.Result.Error != nil && e.Job.Result.Error.Kind == toolloop.KindPanic:
			return slog.LevelError
		}
		return slog.LevelWarn
	case toolloop.EventGuardVerdict:
		if e.Verdict == nil {
			return slog.LevelDebug
		}
		switch e.Verdict.Decision {
		case toolloop.Deny:
			return slog.LevelWarn
		case toolloop.Modify, toolloop.Ask:
			return slog.LevelInfo
		}
		return slog.LevelDebug
	case toolloop.EventPermissionCompleted:
		if e.Approval != nil && !e.Approval.Approved {
			return slog.LevelWarn
		}
		return slog.LevelInfo
	case toolloop.EventHook:
		if e.Hook == nil {
			return slog.LevelDebug
		}
		switch e.Hook.Effect {
		case "error", "panic":
			return slog.LevelError
		case "deny", "reject":
			return slog.LevelWarn
		case "modify", "transform":
			return slog.LevelInfo
		}
		return slog.LevelDebug
	case toolloop.EventLimit, toolloop.EventTranscriptRepaired, toolloop.EventModelRetry, toolloop.EventModelFallback,
		toolloop.EventTurnSentBack, toolloop.EventOutputInvalid:
		return slog.LevelWarn
	case toolloop.EventModelResponse:
		if e.Response != nil {
			switch e.Response.StopReason {
			case toolloop.StopLength, toolloop.StopRefusal, toolloop.StopError:
				return slog.LevelWarn
			}
		}
		return slog.LevelInfo
	case toolloop.EventRunEnd:
		switch {
		case e.Error == "" && e.StopReason != toolloop.StopAborted, pausedEnd:
			return slog.LevelInfo
		case e.StopReason == toolloop.StopAborted, e.StopReason == toolloop.StopInterrupted:
			return slog.LevelWarn
		}
		return slog.LevelError
	}
	return slog.LevelInfo
}

// slim returns the part of e that the record shows, so that Redact walks
// no more than it must and nothing left out by the options can leak
// through it. The pointers it keeps are to copies.
func (s *slogSink) slim(e toolloop.Event) toolloop.Event {
	out := toolloop.Event{
		Type: e.Type, Time: e.Time, RunID: e.RunID, Turn: e.Turn,
		CallID: e.CallID, Tool: e.Tool, Source: e.Source, SourceName: e.SourceName,
		Stack: e.Stack, StopReason: e.StopReason, Usage: e.Usage, Accounting: e.Accounting,
		Error: e.Error, Progress: e.Progress, Hook: e.Hook, Approval: e.Approval, Attempt: e.Attempt,
		Origin: e.Origin, Interrupt: e.Interrupt, CacheBust: e.CacheBust,
	}
	if e.Type == toolloop.EventUserMessage && s.o.Content {
		for _, m := range e.Messages {
			out.Messages = append(out.Messages, toolloop.UserMessage(m.Text()))
		}
	}
	if s.o.Arguments {
		out.Arguments = e.Arguments
	}
	if s.o.Content {
		out.Text, out.Repairs = e.Text, e.Repairs
	} else {
		out.Repairs = make([]string, len(e.Repairs)) // the count, not the notes
	}
	if !s.o.Content {
		if e.Progress != nil {
			out.Progress = &toolloop.Progress{Done: e.Progress.Done, Total: e.Progress.Total}
		}
		if e.Hook != nil {
			out.Hook = &toolloop.HookEffect{Hook: e.Hook.Hook, Index: e.Hook.Index, Effect: e.Hook.Effect}
		}
		if e.Approval != nil {
			out.Approval = &toolloop.Approval{Approved: e.Approval.Approved}
		}
	}
	if v := e.Verdict; v != nil {
		vv := toolloop.Verdict{Decision: v.Decision, Rule: v.Rule}
		if s.o.Content {
			vv.Reason = v.Reason
		}
		if s.o.Arguments {
			vv.Arguments = v.Arguments
		}
		out.Verdict = &vv
	}
	out.Result = s.slimResult(e.Result)
	if j := e.Job; j != nil {
		jj := toolloop.Job{ID: j.ID, CallID: j.CallID, Tool: j.Tool, Turn: j.Turn, Status: j.Status,
			Started: j.Started, Ended: j.Ended, OutputBytes: j.OutputBytes, Reported: j.Reported}
		if s.o.Content {
			jj.Reason = j.Reason
		}
		jj.Result = s.slimResult(j.Result)
		if c, ok := exitCode(j.Result); ok {
			// A number: logged whatever Content says.
			jj.Result.Meta.Extra = map[string]any{"exit_code": c}
		}
		out.Job = &jj
	}
	if resp := e.Response; resp != nil {
		m := toolloop.Message{Role: resp.Message.Role}
		for _, tc := range resp.Message.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, toolloop.ToolCall{ID: tc.ID, Name: tc.Name})
		}
		if s.o.Content {
			m.Content = []toolloop.Content{toolloop.TextContent(resp.Message.Text())}
			if r := reasoningText(resp.Message.Content); r != "" {
				m.Content = append(m.Content, toolloop.Content{Type: toolloop.ContentReasoning, Text: r})
			}
		}
		out.Response = &toolloop.Response{Message: m, StopReason: resp.StopReason, Usage: resp.Usage, Model: resp.Model}
	}
	if e.Type == toolloop.EventRunStart {
		// The count of messages, and the prompt if Content says so.
		out.Messages = make([]toolloop.Message, len(e.Messages))
		if s.o.Content {
			for i := len(e.Messages) - 1; i >= 0; i-- {
				if e.Messages[i].Role == toolloop.RoleUser {
					out.Messages[len(out.Messages)-1] = toolloop.UserMessage(e.Messages[i].Text())
					break
				}
			}
		}
	}
	if len(e.Pending) > 0 {
		out.Pending = make([]toolloop.PendingCall, len(e.Pending))
		for i, pc := range e.Pending {
			out.Pending[i] = toolloop.PendingCall{CallID: pc.CallID, Name: pc.Name, Rule: pc.Rule, Index: pc.Index}
			if s.o.Arguments {
				out.Pending[i].Arguments = pc.Arguments
			}
			if s.o.Content {
				out.Pending[i].Reason = pc.Reason
			}
		}
	}
	if len(e.Approvals) > 0 {
		out.Approvals = make(map[string]toolloop.Approval, len(e.Approvals))
		for id, a := range e.Approvals {
			out.Approvals[id] = toolloop.Approval{Approved: a.Approved}
		}
	}
	if ed := e.Edit; ed != nil {
		out.Edit = &toolloop.TranscriptEdit{
			Strategy: ed.Strategy, Reason: ed.Reason, CallIDs: ed.CallIDs,
			TokensBefore: ed.TokensBefore, TokensAfter: ed.TokensAfter, Usage: ed.Usage, Model: ed.Model,
		}
	}
	return out
}

// slimResult is the part of a result a record shows, as a copy.
func (s *slogSink) slimResult(r *toolloop.ToolResult) *toolloop.ToolResult {
	if r == nil {
		return nil
	}
	rr := toolloop.ToolResult{CallID: r.CallID, Name: r.Name, Status: r.Status, Meta: toolloop.ResultMeta{
		Bytes: r.Meta.Bytes, Truncated: r.Meta.Truncated, Duration: r.Meta.Duration,
		Source: r.Meta.Source, SourceName: r.Meta.SourceName,
	}}
	if r.Error != nil {
		rr.Error = &toolloop.ToolError{Kind: r.Error.Kind}
		if s.o.Content {
			rr.Error.Message = r.Error.Message
		}
	}
	if s.o.Content {
		rr.Content = []toolloop.Content{toolloop.TextContent(r.Text())}
	}
	return &rr
}

func reasoningText(cs []toolloop.Content) string {
	var s string
	for _, c := range cs {
		if c.Type == toolloop.ContentReasoning {
			s += c.Text
		}
	}
	return s
}

// attrs builds the record's attributes from a slimmed event; textBytes is
// the length of the event's Text before it was slimmed.
func (s *slogSink) attrs(e toolloop.Event, textBytes int) []slog.Attr {
	a := make([]slog.Attr, 0, 12)
	a = append(a, slog.String("run_id", e.RunID), slog.Int("turn", e.Turn))
	if e.CallID != "" || e.Tool != "" {
		a = append(a, slog.String("call_id", e.CallID), slog.String("tool", e.Tool))
		if e.Source != "" {
			a = append(a, slog.String("source", string(e.Source)))
		}
		if e.SourceName != "" {
			a = append(a, slog.String("source_name", e.SourceName))
		}
	}
	text := func(key, v string) {
		if v != "" {
			a = append(a, slog.String(key, s.bound(v)))
		}
	}
	if len(e.Arguments) > 0 {
		text("arguments", string(e.Arguments))
	}
	switch e.Type {
	case toolloop.EventRunStart:
		a = append(a, slog.Int("messages", len(e.Messages)))
		if n := len(e.Messages); n > 0 {
			text("prompt", e.Messages[n-1].Text())
		}
	case toolloop.EventUserMessage:
		a = append(a, slog.String("origin", string(e.Origin)))
		for _, m := range e.Messages {
			text("text", m.Text())
		}
	case toolloop.EventRunInterrupted:
		if i := e.Interrupt; i != nil {
			a = append(a, slog.String("mode", string(i.Mode)), slog.Bool("continue", i.Continue))
		}
	case toolloop.EventRunResumed:
		approved := 0
		for _, ap := range e.Approvals {
			if ap.Approved {
				approved++
			}
		}
		a = append(a, slog.Int("approvals", len(e.Approvals)), slog.Int("approved", approved))
	case toolloop.EventRunPaused:
		tools := make([]string, len(e.Pending))
		for i, pc := range e.Pending {
			tools[i] = pc.Name
		}
		a = append(a, slog.Int("pending", len(e.Pending)), slog.Any("tools", tools))
		if s.o.Arguments {
			args := make([]string, len(e.Pending))
			for i, pc := range e.Pending {
				args[i] = s.bound(string(pc.Arguments))
			}
			a = append(a, slog.Any("pending_arguments", args))
		}
	case toolloop.EventTranscriptRepaired, toolloop.EventArgumentsRepaired:
		a = append(a, slog.Int("repairs", len(e.Repairs)))
		if s.o.Content && len(e.Repairs) > 0 {
			text("detail", strings.Join(e.Repairs, "\n"))
		}
	case toolloop.EventTranscriptEdited:
		if ed := e.Edit; ed != nil {
			a = append(a, slog.String("strategy", ed.Strategy), slog.String("reason", ed.Reason),
				slog.Int("tokens_before", ed.TokensBefore), slog.Int("tokens_after", ed.TokensAfter),
				slog.Int("cleared", len(ed.CallIDs)))
			if ed.Model != "" {
				a = append(a, slog.String("model", ed.Model))
			}
			if ed.Usage != (toolloop.Usage{}) {
				a = usageAttrs(a, &ed.Usage)
			}
		}
	case toolloop.EventCacheBust:
		if b := e.CacheBust; b != nil {
			a = append(a, slog.String("reason", string(b.Reason)), slog.Int("kept", b.Kept), slog.Int("previous", b.Previous))
			text("detail", b.Detail)
		}
	case toolloop.EventModelRetry, toolloop.EventModelFallback:
		if at := e.Attempt; at != nil {
			a = append(a, slog.Int("attempt", at.Attempt), slog.Int("model", at.Model), slog.Duration("delay", at.Delay))
			text("error", at.Error)
		}
	case toolloop.EventModelDelta, toolloop.EventModelReasoningDelta, toolloop.EventPartialResult, toolloop.EventJobOutput:
		a = append(a, slog.Int("bytes", textBytes))
		text("text", e.Text)
	case toolloop.EventJobStarted, toolloop.EventJobFinished:
		if j := e.Job; j != nil {
			if e.CallID == "" && e.Tool == "" {
				a = append(a, slog.String("call_id", j.CallID), slog.String("tool", j.Tool))
			}
			a = append(a, slog.String("job_id", j.ID), slog.String("job_status", string(j.Status)), slog.Int("job_turn", j.Turn))
			if e.Type == toolloop.EventJobStarted {
				break
			}
			if !j.Started.IsZero() && !j.Ended.IsZero() {
				a = append(a, slog.Float64("duration_ms", float64(j.Ended.Sub(j.Started))/float64(time.Millisecond)))
			}
			a = append(a, slog.Int64("output_bytes", j.OutputBytes))
			text("reason", j.Reason)
			if r := j.Result; r != nil {
				if r.Error != nil {
					a = append(a, slog.String("error_kind", string(r.Error.Kind)))
				}
				if c, ok := exitCode(r); ok {
					a = append(a, slog.Int64("exit_code", c))
				}
				switch {
				case r.Error != nil:
					text("error_message", r.Error.Message)
				case len(r.Content) > 0:
					text("output", r.Content[0].Text)
				}
			}
		}
	case toolloop.EventModelResponse:
		if r := e.Response; r != nil {
			a = append(a, slog.String("stop_reason", string(r.StopReason)))
			if r.Model != "" {
				a = append(a, slog.String("model", r.Model))
			}
			a = usageAttrs(a, &r.Usage)
			tools := make([]string, len(r.Message.ToolCalls))
			for i, tc := range r.Message.ToolCalls {
				tools[i] = tc.Name
			}
			a = append(a, slog.Int("tool_calls", len(tools)))
			if len(tools) > 0 {
				a = append(a, slog.Any("tools", tools))
			}
			text("text", r.Message.Text())
			text("reasoning", reasoningText(r.Message.Content))
		}
	case toolloop.EventGuardVerdict, toolloop.EventPermissionRequested:
		if v := e.Verdict; v != nil {
			a = append(a, slog.String("decision", string(v.Decision)))
			if v.Rule != "" {
				a = append(a, slog.String("rule", v.Rule))
			}
			text("reason", v.Reason)
			if len(v.Arguments) > 0 {
				text("arguments", string(v.Arguments))
			}
		}
	case toolloop.EventPermissionCompleted:
		if ap := e.Approval; ap != nil {
			a = append(a, slog.Bool("approved", ap.Approved))
			text("reason", ap.Reason)
		}
	case toolloop.EventHook:
		if h := e.Hook; h != nil {
			a = append(a, slog.String("hook", h.Hook), slog.Int("hook_index", h.Index), slog.String("effect", h.Effect))
			text("detail", h.Detail)
		}
	case toolloop.EventProgress:
		if p := e.Progress; p != nil {
			a = append(a, slog.Float64("done", p.Done), slog.Float64("total", p.Total))
			text("message", p.Message)
		}
	case toolloop.EventComplete:
		if r := e.Result; r != nil {
			a = append(a, slog.String("status", string(r.Status)))
			if r.Error != nil {
				a = append(a, slog.String("error_kind", string(r.Error.Kind)))
			}
			a = append(a, slog.Float64("duration_ms", float64(r.Meta.Duration)/float64(time.Millisecond)),
				slog.Int("bytes", r.Meta.Bytes), slog.Bool("truncated", r.Meta.Truncated))
			if e.Source == "" && r.Meta.Source != "" {
				a = append(a, slog.String("source", string(r.Meta.Source)))
			}
			switch {
			case r.Error != nil:
				text("error_message", r.Error.Message) // the output repeats it
			case len(r.Content) > 0:
				text("output", r.Content[0].Text)
			}
		}
		text("stack", e.Stack)
	}
	switch e.Type {
	case toolloop.EventRunEnd, toolloop.EventLimit, toolloop.EventRunPaused:
		if e.StopReason != "" {
			a = append(a, slog.String("stop_reason", string(e.StopReason)))
		}
		text("error", e.Error)
		if acc := e.Accounting; acc != nil {
			a = usageAttrs(a, &acc.Usage)
			a = append(a, slog.Float64("cost_usd", acc.Cost), slog.Int("tool_calls", acc.ToolCalls))
		} else if e.Usage != nil {
			a = usageAttrs(a, e.Usage)
		}
	default:
		text("error", e.Error)
	}
	return a
}

// usageAttrs appends token counts; the optional ones only when non-zero.
func usageAttrs(a []slog.Attr, u *toolloop.Usage) []slog.Attr {
	a = append(a, slog.Int64("input_tokens", u.InputTokens), slog.Int64("output_tokens", u.OutputTokens))
	for _, c := range []struct {
		key string
		n   int64
	}{{"cache_read_tokens", u.CacheReadTokens}, {"cache_write_tokens", u.CacheWriteTokens}, {"reasoning_tokens", u.ReasoningTokens}} {
		if c.n != 0 {
			a = append(a, slog.Int64(c.key, c.n))
		}
	}
	if u.CacheReadTokens > 0 {
		a = append(a, slog.Float64("cache_hit_ratio", u.CacheHitRatio()))
	}
	return a
}

// bound cuts v to MaxBytes.
func (s *slogSink) bound(v string) string {
	v, cut := clip(v, s.o.MaxBytes)
	if cut > 0 {
		v += "…[" + strconv.Itoa(cut) + " bytes more]"
	}
	return v
}
