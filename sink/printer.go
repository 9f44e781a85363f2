package sink

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
)

// PrinterOptions configures [NewPrinter]. The zero value, like a nil
// *PrinterOptions, is the documented default of every field.
type PrinterOptions struct {
	// Color says when to colour the output; the zero value colours it only
	// on a terminal, and never when NO_COLOR is set (see [ColorAuto]).
	Color Color
	// Verbose also prints what is usually noise: each call as it starts,
	// argument repairs, guard verdicts and approvals as they come (the
	// call's line sums them up), every hook effect, model requests and
	// prompt cache busts, progress, partial output, the stack of a panic,
	// the run's start and a summary of its end (with the part of the
	// input the prompt cache served).
	Verbose bool
	// HideReasoning leaves out the model's visible reasoning, which is
	// printed dimmed and marked by default.
	HideReasoning bool
	// ArgumentBytes bounds the summary of a call's arguments; 0 means 80.
	ArgumentBytes int
	// ResultBytes bounds the one-line summary of a call's result; 0 means
	// 100.
	ResultBytes int
	// ErrorBytes bounds the message of a failed call, a failed run or a
	// limit, printed in full up to it; 0 means 4096.
	ErrorBytes int
	// SlowCall is how long a call must take for its line to show its
	// duration (the time it ran, apart from its wait for approval, which
	// the line shows on its own); 0 means one second, and a negative
	// value shows none.
	SlowCall time.Duration
}

// NewPrinter returns an event sink that prints a run for a person at a
// terminal: set it as AgentLoop.OnEvent, pass it to toolloop.MultiSink with
// other sinks, or call it with each event of an iteration over a run.
//
// It writes the model's text as it streams (or, from a model that does not
// stream, when its turn ends), its visible reasoning dimmed under a "┊"
// margin, and one line per tool call when the call completes:
//
//	✓ read_file path=main.go → package main … (+41 lines)
//	✗ bash command="go test ./..." (2.1s) → execution_failed: exit status 1
//	      --- FAIL: TestParse (0.00s)
//
// with the tool, a summary of the arguments it ran with, its duration if
// it was slow, and the first line of its result (its text, each content
// block on a line of its own so that a note the loop added does not run
// into the tool's output, or a label for content that is not text), or
// its error kind and message in full. The line also says how the call was
// decided: who changed its arguments (a guard, with its reason; a hook; a
// person who edited them while approving, see toolloop.Approval), that
// it was approved, and how long the approval was waited for, apart from
// the time it ran, if that was slow too:
//
//	✓ write_file path=c.txt (args edited by person, approved, waited 12s for approval) → ok
//
// A request for approval prints a line when the wait begins:
//
//	? write_file path=c.txt → needs approval: writes need a human [ask-write]
//
// Hooks that denied, rejected or failed, limits, pauses,
// transcript repairs and edits, and a run's error are printed as they
// happen; so are messages sent into the run (see toolloop.Inbox), where
// the loop delivered them, and interrupts, with their mode:
//
//	» delivered: use the staging database
//	! interrupted (now)
//
// Background jobs (see toolloop.Job) print a line when they start, in
// place of their starting call's line, and one when they end, with their
// status, duration, exit code (a result's Meta.Extra["exit_code"]) and
// why a canceled job was canceled; the loop's message that tells the
// model a job ended prints as such, not as steering:
//
//	& job_1 exec_shell command="go test ./..." → started in the background
//	✓ job_1 exec_shell command="go test ./..." (31s) → ok, exit code 0
//	» job end delivered: [Job job_1 (exec_shell) ended: ok after 31s …]
//
// The calls a program makes through the loop (inner calls, see
// toolloop.Inner, as code mode runs them) print indented under a line
// that names the program's call, each by its ID; that line comes again
// when other lines came between. The program's own line counts them:
//
//	… run_code code="const fs = await tools.list_files({})…" → program c1
//	  ✓ ↳ c1/1 list_files → ["doc.go","loop.go"]
//	  ✗ ↳ c1/2 read_file path=gone.go → not_found: no such file
//	✓ run_code code="const fs = await tools.list_files({})…" (2 inner calls) → 1 file
//
// [PrinterOptions] Verbose adds the rest.
//
// Output per event is bounded (see the byte limits of [PrinterOptions])
// except the model's own text, which is the answer and is printed whole.
// Everything printed is cleaned of terminal controls first: escape
// sequences, carriage returns and bidirectional overrides from a tool, an
// argument or the model are shown as escapes, never obeyed. Each event is
// one Write to w; write errors are ignored.
//
// The returned function is safe for concurrent use, and keeps only the
// argument summaries of calls in flight between events. One printer may
// serve several runs, but their lines interleave when they run at once.
func NewPrinter(w io.Writer, opts *PrinterOptions) func(toolloop.Event) {
	p := &printer{w: w, runs: map[string]*runView{}}
	if opts != nil {
		p.o = *opts
	}
	p.c = palette{on: useColor(p.o.Color, w)}
	p.o.ArgumentBytes = orInt(p.o.ArgumentBytes, 80)
	p.o.ResultBytes = orInt(p.o.ResultBytes, 100)
	p.o.ErrorBytes = orInt(p.o.ErrorBytes, 4096)
	if p.o.SlowCall == 0 {
		p.o.SlowCall = time.Second
	}
	return p.event
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

type streamKind int

const (
	streamNone streamKind = iota
	streamText
	streamReasoning
)

// The marks that open a printer's lines.
const (
	markOK     = "✓"
	markFailed = "✗"
	markAsk    = "?"
	markNote   = "!"
	markInfo   = "·"
	markStart  = "…"
	markEdit   = "~"
	markSteer  = "»"
	markJob    = "&"        // a job started: the shell's mark for the background
	markGap    = "        " // indents the lines of a message under a call
	reasonMark = "┊ "
)

type printer struct {
	mu   sync.Mutex
	w    io.Writer
	o    PrinterOptions
	c    palette
	buf  []byte
	open streamKind
	mid  bool // the last line written has no newline yet
	runs map[string]*runView
	// indent and group are the event's being printed: its lines' indent
	// beyond the usual, and, for an inner call, its program's call (see
	// inner); under is the group of the last line written.
	indent, group, under string
	// head writes the line of the group's program, before the group's
	// first line after lines of others.
	head func()
}

// runView is what the printer remembers of a run between its events.
type runView struct {
	// calls holds the argument summaries of calls the model made that
	// have not completed.
	calls map[string]string
	// jobs holds the argument summaries of the run's jobs that have not
	// ended, by job ID; jobCalls the calls that started one and have not
	// completed.
	jobs     map[string]string
	jobCalls map[string]bool
	// tools holds the tool names of calls that have not completed, for
	// the line of a program (see inner).
	tools map[string]string
	// decided holds how calls that have not completed were decided.
	decided map[string]*decision
	// streamed: this turn's text came as deltas.
	streamed, streamedReasoning bool
	paused                      bool
}

func (p *printer) run(id string) *runView {
	v := p.runs[id]
	if v == nil {
		v = &runView{calls: map[string]string{}, jobs: map[string]string{}, jobCalls: map[string]bool{}, tools: map[string]string{}, decided: map[string]*decision{}}
		p.runs[id] = v
	}
	return v
}

func (p *printer) event(e toolloop.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = p.buf[:0]
	p.print(e)
	if len(p.buf) > 0 {
		_, _ = p.w.Write(p.buf)
	}
	if cap(p.buf) > 64<<10 {
		p.buf = nil // a long answer passed; do not keep its buffer
	}
}

func (p *printer) print(e toolloop.Event) {
	if e.ParentRunID != "" && !p.child(&e) {
		return
	}
	v := p.run(e.RunID)
	if parent := innerParent(v, &e); parent != "" {
		defer p.inner(v, &e, parent)()
	}
	switch e.Type {
	case toolloop.EventModelDelta:
		v.streamed = true
		p.stream(streamText, e.Text)
	case toolloop.EventModelReasoningDelta:
		v.streamedReasoning = true
		if !p.o.HideReasoning {
			p.stream(streamReasoning, e.Text)
		}
	case toolloop.EventModelRequest:
		v.streamed, v.streamedReasoning = false, false
		if p.o.Verbose {
			p.line(markInfo, sgrDim, "model request (turn "+strconv.Itoa(e.Turn)+")")
		}
	case toolloop.EventModelResponse:
		p.response(v, e.Response)
		v.streamed, v.streamedReasoning = false, false
	case toolloop.EventStart:
		args := summarizeArgs(e.Arguments, p.o.ArgumentBytes)
		v.calls[e.CallID] = args
		v.tools[e.CallID] = e.Tool
		if !e.Time.IsZero() {
			v.decision(e.CallID).started = e.Time
		}
		if p.o.Verbose {
			p.callLine(markStart, sgrDim, e.Tool, args, "", "")
		}
	case toolloop.EventArgumentsRepaired:
		args := summarizeArgs(e.Arguments, p.o.ArgumentBytes)
		v.calls[e.CallID] = args
		if p.o.Verbose {
			p.callLine(markEdit, sgrDim, e.Tool, args, "", "arguments repaired: "+strings.Join(e.Repairs, "; "))
		}
	case toolloop.EventGuardVerdict:
		p.verdict(v, e)
	case toolloop.EventPermissionRequested:
		v.asked(e)
		why := "needs approval"
		if e.Verdict != nil {
			why += reasonAndRule(e.Verdict.Reason, e.Verdict.Rule)
		}
		p.callLine(markAsk, sgrYellow, e.Tool, v.calls[e.CallID], "", why)
	case toolloop.EventPermissionCompleted:
		p.approval(v, e)
	case toolloop.EventHook:
		p.hook(v, e)
	case toolloop.EventProgress:
		if p.o.Verbose && e.Progress != nil {
			p.callLine(markStart, sgrDim, e.Tool, "", "", progressText(e.Progress))
		}
	case toolloop.EventPartialResult:
		if p.o.Verbose {
			// A partial event may join several reports (the loop's rate
			// limit): show its first lines and count the others.
			p.partial(e)
		}
	case toolloop.EventComplete:
		if v.jobCalls[e.CallID] {
			delete(v.jobCalls, e.CallID)
			if !p.o.Verbose && (e.Result == nil || !e.Result.IsError()) {
				// The job's line said it started.
				delete(v.calls, e.CallID)
				delete(v.tools, e.CallID)
				delete(v.decided, e.CallID)
				return
			}
		}
		p.complete(v, e)
	case toolloop.EventJobStarted:
		p.jobStarted(v, e)
	case toolloop.EventJobOutput:
		if p.o.Verbose {
			p.partial(e) // as a call's partial output, under its tool
		}
	case toolloop.EventJobFinished:
		p.jobFinished(v, e)
	case toolloop.EventRunStart:
		if p.o.Verbose {
			p.line(markInfo, sgrDim, "run "+e.RunID+" started with "+plural(len(e.Messages), "message"))
		}
	case toolloop.EventRunResumed:
		p.line(markInfo, sgrDim, "run resumed with "+plural(len(e.Approvals), "decision"))
	case toolloop.EventRunPaused:
		v.paused = true
		names := make([]string, 0, len(e.Pending))
		for _, pc := range e.Pending {
			names = append(names, pc.Name)
		}
		p.line(markAsk, sgrYellow, "paused: "+plural(len(e.Pending), "call")+" await approval ("+strings.Join(names, ", ")+")")
	case toolloop.EventLimit:
		p.message(markNote, sgrYellow, "limit", e.Error)
	case toolloop.EventModelRetry, toolloop.EventModelFallback:
		if at := e.Attempt; at != nil {
			what := "model attempt " + strconv.Itoa(at.Attempt) + " failed; retrying"
			if at.Delay > 0 {
				what += " in " + at.Delay.Round(time.Millisecond).String()
			}
			if e.Type == toolloop.EventModelFallback {
				what = "model " + strconv.Itoa(at.Model) + " failed; trying the next"
			}
			p.message(markNote, sgrYellow, what, at.Error)
		}
	case toolloop.EventTurnSentBack:
		p.message(markNote, sgrYellow, "turn sent back", e.Error)
	case toolloop.EventOutputInvalid:
		p.message(markNote, sgrYellow, "answer rejected", e.Error)
	case toolloop.EventTranscriptRepaired:
		p.message(markNote, sgrYellow, "transcript repaired", strings.Join(e.Repairs, "\n"))
	case toolloop.EventTranscriptEdited:
		p.edit(e.Edit)
	case toolloop.EventCacheBust:
		if p.o.Verbose {
			p.bust(e)
		}
	case toolloop.EventUserMessage:
		p.delivered(e)
	case toolloop.EventRunInterrupted:
		p.interrupted(e.Interrupt)
	case toolloop.EventRunEnd:
		p.end(v, e)
		delete(p.runs, e.RunID)
	default:
		if p.o.Verbose {
			p.line(markInfo, sgrDim, string(e.Type))
		}
	}
}

// child adapts an event of a sub-agent's run (see toolloop.AgentTool) for
// printing, and reports whether to print it: its calls show as the
// sub-agent's ("↳ tool"); its text, its pause, resume, start and end show
// only when verbose, since the parent's call and pause say as much.
func (p *printer) child(e *toolloop.Event) bool {
	if e.Tool != "" {
		e.Tool = childMark + e.Tool
	}
	switch e.Type {
	case toolloop.EventRunEnd:
		delete(p.runs, e.RunID)
		return false
	case toolloop.EventRunPaused, toolloop.EventRunResumed, toolloop.EventRunStart,
		toolloop.EventModelDelta, toolloop.EventModelReasoningDelta, toolloop.EventModelResponse,
		toolloop.EventUserMessage, toolloop.EventRunInterrupted:
		return p.o.Verbose
	}
	return true
}

// stream writes a delta of model text or reasoning, continuing the line
// the last delta of the same kind left open.
func (p *printer) stream(kind streamKind, s string) {
	if s == "" {
		return
	}
	if p.open != kind {
		p.endLine()
		p.open = kind
	}
	p.under = ""
	style := ""
	if kind == streamReasoning {
		style = sgrDim
	}
	for s != "" {
		line, rest, nl := strings.Cut(s, "\n")
		if kind == streamReasoning && !p.mid {
			p.buf = p.c.add(p.buf, sgrDim, reasonMark)
			p.mid = true
		}
		if line != "" {
			p.buf = p.c.add(p.buf, style, line)
			p.mid = true
		}
		if nl {
			p.buf = append(p.buf, '\n')
			p.mid = false
		}
		s = rest
	}
}

// endLine ends the line a delta left open.
func (p *printer) endLine() {
	if p.mid {
		p.buf = append(p.buf, '\n')
		p.mid = false
	}
	p.open = streamNone
}

// response prints a turn that did not stream: its reasoning, then its text.
func (p *printer) response(v *runView, r *toolloop.Response) {
	if r == nil {
		return
	}
	// The calls' arguments, for their lines: a call's start event, if it
	// comes, says the same.
	for _, tc := range r.Message.ToolCalls {
		v.calls[tc.ID] = summarizeArgs(tc.Arguments, p.o.ArgumentBytes)
		v.tools[tc.ID] = tc.Name
	}
	if !v.streamedReasoning && !p.o.HideReasoning {
		for _, c := range r.Message.Content {
			if c.Type == toolloop.ContentReasoning && c.Text != "" {
				p.stream(streamReasoning, c.Text)
			}
		}
	}
	if !v.streamed {
		p.stream(streamText, r.Message.Text())
	}
	// The turn's text ends here; calls and the next turn start below it.
	p.endLine()
	switch r.StopReason {
	case toolloop.StopLength, toolloop.StopRefusal, toolloop.StopError:
		p.line(markNote, sgrYellow, "the model stopped: "+string(r.StopReason))
	}
}

// line writes one line: a mark and a message, indented under the text.
func (p *printer) line(mark, sgr, msg string) {
	p.lineStart()
	p.buf = p.c.add(p.buf, sgr, mark)
	p.buf = append(p.buf, ' ')
	p.buf = p.c.add(p.buf, sgr, msg)
	p.buf = append(p.buf, '\n')
}

// message writes a line headed by what, followed by msg in full up to
// ErrorBytes: its first line on the same line, the others indented below.
func (p *printer) message(mark, sgr, what, msg string) {
	p.lineStart()
	p.buf = p.c.add(p.buf, sgr, mark+" "+what)
	p.body(sgr, msg)
}

// body writes msg after what is already on the line: its first line after
// ": ", the rest indented, all within ErrorBytes, and ends the line.
// partialLines is how many lines of one partial-output event the
// verbose printer shows.
const partialLines = 5

// partial prints the first lines of a partial-output event, and how many
// it left out.
func (p *printer) partial(e toolloop.Event) {
	text := e.Text
	if len(text) > lineScan {
		text = text[:lineScan]
	}
	shown, left := 0, 0
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if shown == partialLines {
			left++
			continue
		}
		shown++
		clipped, cut := clip(line, p.o.ResultBytes)
		if cut > 0 {
			clipped += "…"
		}
		p.callLine(markStart, sgrDim, e.Tool, "", "", "│ "+clipped)
	}
	switch {
	case len(e.Text) > lineScan:
		p.callLine(markStart, sgrDim, e.Tool, "", "", "│ … ("+sizeOf(len(e.Text))+" in all)")
	case left > 0:
		p.callLine(markStart, sgrDim, e.Tool, "", "", "│ … (+"+strconv.Itoa(left)+" lines)")
	}
}

func (p *printer) body(sgr, msg string) { p.bodyAfter(": ", sgr, msg) }

// bodyAfter is body with sep, not ": ", before the message.
func (p *printer) bodyAfter(sep, sgr, msg string) {
	msg, cut := clip(strings.TrimSpace(msg), p.o.ErrorBytes)
	first, rest, _ := strings.Cut(msg, "\n")
	if first != "" {
		p.buf = append(p.buf, sep...)
		p.buf = p.c.add(p.buf, sgr, first)
	}
	p.buf = append(p.buf, '\n')
	for rest != "" {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		p.buf = append(p.buf, p.indent...)
		p.buf = append(p.buf, markGap...)
		p.buf = appendClean(p.buf, l)
		p.buf = append(p.buf, '\n')
	}
	if cut > 0 {
		p.buf = append(p.buf, p.indent...)
		p.buf = append(p.buf, markGap...)
		p.buf = p.c.add(p.buf, sgrDim, "… ("+sizeOf(cut)+" more)")
		p.buf = append(p.buf, '\n')
	}
}

// callLine writes the line of a call: mark, tool, arguments, duration,
// then what after an arrow.
func (p *printer) callLine(mark, sgr, tool, args, dur, what string) {
	p.callHead(mark, sgr, tool, args, dur)
	if what != "" {
		p.buf = append(p.buf, " → "...)
		p.buf = p.c.add(p.buf, sgr, what)
	}
	p.buf = append(p.buf, '\n')
}

func (p *printer) callHead(mark, sgr, tool, args, dur string) {
	p.lineStart()
	p.buf = p.c.add(p.buf, sgr, mark)
	p.buf = append(p.buf, ' ')
	p.buf = p.c.add(p.buf, sgrBold, tool)
	if args != "" {
		p.buf = append(p.buf, ' ')
		p.buf = p.c.add(p.buf, sgrCyan, args) // summarizeArgs cleaned it
	}
	if dur != "" {
		p.buf = append(p.buf, " ("...)
		p.buf = append(p.buf, dur...)
		p.buf = append(p.buf, ')')
	}
}

// complete writes a call's line.
func (p *printer) complete(v *runView, e toolloop.Event) {
	args := v.calls[e.CallID]
	how := v.decided[e.CallID].text(p.o.SlowCall)
	delete(v.calls, e.CallID)
	delete(v.tools, e.CallID)
	delete(v.decided, e.CallID)
	r := e.Result
	tool := e.Tool
	if tool == "" && r != nil {
		tool = r.Name
	}
	if r == nil {
		p.callLine(markOK, sgrGreen, tool, args, how, "")
		return
	}
	// The time the call ran: without the wait for its approval, which the
	// line shows apart.
	ran := r.Meta.Duration
	if e.Timing != nil {
		ran = max(ran-e.Timing.Approval, 0)
	}
	dur := ""
	if p.o.SlowCall > 0 && ran >= p.o.SlowCall {
		dur = formatDuration(ran)
	}
	if n := r.Meta.InnerCalls; n > 0 {
		if dur != "" {
			dur += ", "
		}
		dur += plural(n, "inner call")
	}
	if how != "" {
		if dur != "" {
			dur += "; "
		}
		dur += how
	}
	if !r.IsError() {
		p.callLine(markOK, sgrGreen, tool, args, dur, p.resultSummary(r))
		return
	}
	kind, msg := "error", r.Text()
	if r.Error != nil {
		kind, msg = string(r.Error.Kind), r.Error.Message
	}
	p.callHead(markFailed, sgrRed, tool, args, dur)
	p.buf = append(p.buf, " → "...)
	p.buf = p.c.add(p.buf, sgrRed, kind)
	if rest, ok := strings.CutPrefix(msg, kind+" "); ok {
		// "denied by policy: ..." says its kind itself: print it once.
		p.bodyAfter(" ", "", rest)
	} else {
		p.body("", msg)
	}
	if p.o.Verbose && e.Stack != "" {
		p.buf = append(p.buf, p.indent...)
		p.buf = append(p.buf, markGap...)
		p.buf = p.c.add(p.buf, sgrDim, "stack")
		p.body(sgrDim, e.Stack)
	}
}

// resultSummary is the first line of a successful result, bounded, and
// what it left out.
func (p *printer) resultSummary(r *toolloop.ToolResult) string {
	text := resultText(r)
	if text == "" {
		if s := contentSummary(r.Content); s != "" {
			return s
		}
		return "(no output)"
	}
	line, more := firstLine(text)
	line, cut := clip(line, p.o.ResultBytes)
	var b strings.Builder
	b.WriteString(line)
	if cut > 0 || more {
		b.WriteString(" …")
	}
	if m := moreLines(text); more && m != "" {
		b.WriteString(" (" + m + ")")
	}
	if r.Meta.Truncated {
		b.WriteString(" [truncated from " + sizeOf(r.Meta.Bytes) + "]")
	}
	return b.String()
}

func (p *printer) hook(v *runView, e toolloop.Event) {
	h := e.Hook
	if h == nil {
		return
	}
	if h.Effect == "modify" && h.Hook == "pre_tool_use" {
		p.changedArgs(v, e.CallID, json.RawMessage(h.Detail), hookChanged(h))
	}
	sgr := sgrDim
	switch h.Effect {
	case "deny", "reject":
		sgr = sgrYellow
	case "error", "panic":
		sgr = sgrRed
	default:
		if !p.o.Verbose {
			return
		}
	}
	what := h.Hook + " hook " + strconv.Itoa(h.Index) + ": " + h.Effect
	if h.Detail != "" {
		d, cut := clip(h.Detail, p.o.ResultBytes)
		if cut > 0 {
			d += "…"
		}
		what += ": " + d
	}
	p.callLine(markNote, sgr, e.Tool, "", "", what)
}

func (p *printer) edit(ed *toolloop.TranscriptEdit) {
	if ed == nil {
		return
	}
	msg := "context: " + ed.Strategy
	if ed.Reason != "" {
		msg += " (" + ed.Reason + ")"
	}
	if ed.TokensBefore > 0 || ed.TokensAfter > 0 {
		msg += ", ~" + strconv.Itoa(ed.TokensBefore) + " → ~" + strconv.Itoa(ed.TokensAfter) + " tokens"
	}
	if len(ed.CallIDs) > 0 {
		msg += ", " + plural(len(ed.CallIDs), "result") + " cleared"
	}
	p.line(markEdit, sgrDim, msg)
}

// bust prints a cache bust: what changed, and how much of the previous
// request the new one kept.
func (p *printer) bust(e toolloop.Event) {
	b := e.CacheBust
	if b == nil {
		return
	}
	msg := "prompt cache busted (turn " + strconv.Itoa(e.Turn) + "): " + string(b.Reason)
	if b.Detail != "" {
		d, cut := clip(b.Detail, 200)
		if cut > 0 {
			d += "…"
		}
		msg += " (" + d + ")"
	}
	msg += ", " + strconv.Itoa(b.Kept) + " of " + plural(b.Previous, "message") + " kept"
	p.line(markInfo, sgrDim, msg)
}

func (p *printer) end(v *runView, e toolloop.Event) {
	p.endLine()
	switch {
	case e.StopReason == toolloop.StopInterrupted:
		// The run.interrupted line said it.
	case e.Error != "" && !v.paused:
		p.message(markFailed, sgrRed, "run ended ("+string(orStop(e.StopReason))+")", e.Error)
	case e.Error == "" && e.StopReason == toolloop.StopAborted:
		p.line(markNote, sgrYellow, "run aborted")
	}
	if !p.o.Verbose {
		return
	}
	msg := "done: " + string(orStop(e.StopReason))
	if u := e.Usage; u != nil && u.InputTokens+u.OutputTokens > 0 {
		msg += ", " + strconv.FormatInt(u.InputTokens, 10) + " tokens in, " + strconv.FormatInt(u.OutputTokens, 10) + " out"
		if u.CacheReadTokens > 0 {
			msg += " (" + strconv.FormatFloat(100*u.CacheHitRatio(), 'f', 0, 64) + "% of input cached)"
		}
	}
	if a := e.Accounting; a != nil {
		if a.ToolCalls > 0 {
			msg += ", " + plural(a.ToolCalls, "tool call")
		}
		if a.Cost > 0 {
			msg += ", $" + strconv.FormatFloat(a.Cost, 'f', 4, 64)
		}
	}
	p.line(markInfo, sgrDim, msg)
}

func orStop(s toolloop.StopReason) toolloop.StopReason {
	if s == "" {
		return "no stop reason"
	}
	return s
}

func reasonAndRule(reason, rule string) string {
	var s string
	if reason != "" {
		s = ": " + reason
	}
	if rule != "" {
		s += " [" + rule + "]"
	}
	return s
}

func progressText(pr *toolloop.Progress) string {
	var s string
	if pr.Total > 0 {
		s = strconv.FormatFloat(pr.Done, 'f', -1, 64) + "/" + strconv.FormatFloat(pr.Total, 'f', -1, 64)
	} else if pr.Done > 0 {
		s = strconv.FormatFloat(pr.Done, 'f', -1, 64)
	}
	if pr.Message != "" {
		m, cut := clip(pr.Message, 200)
		if cut > 0 {
			m += "…"
		}
		if s != "" {
			s += " "
		}
		s += m
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// formatDuration rounds d for a person: 1.2s, 14s, 2m5s.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
