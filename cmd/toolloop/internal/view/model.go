package view

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
)

// The statuses of a call on the page. The first four are the outcomes of a
// completed call; pending and unfinished are calls without a completion.
const (
	statusOK       = "ok"
	statusError    = "error"
	statusDenied   = "denied"
	statusCanceled = "canceled"
	// statusPending: the run paused with the call waiting for approval, and
	// the log does not say how it ended.
	statusPending = "pending"
	// statusUnfinished: the model asked for the call and the log has no
	// completion for it (the process died, or the log was cut).
	statusUnfinished = "unfinished"
)

// page is what the page renders, embedded in it as JSON. Times are
// milliseconds since Start, the time of the log's first event.
type page struct {
	Title string `json:"title"`
	Start string `json:"start"`
	// Runs are the top-level runs in the order the log starts them; child
	// runs hang under the calls that started them.
	Runs []*run `json:"runs"`
	// Tools are the names of every tool called, sorted.
	Tools []string `json:"tools"`
	// Counts are the calls by status, child calls included.
	Counts    map[string]int `json:"counts"`
	Calls     int            `json:"calls"`
	Jobs      int            `json:"jobs"`
	Turns     int            `json:"turns"`
	Events    int            `json:"events"`
	OpenTurns int            `json:"openTurns"`
	// Bound is the display bound of one text field, in bytes.
	Bound int `json:"bound"`
	// Problems are lines of the log that were not events.
	Problems []string `json:"problems,omitempty"`
}

// run is one run of the log: a top-level run (its resumptions included,
// which keep its ID) or the run of an agent used as a tool.
type run struct {
	ID         string  `json:"id"`
	ParentRun  string  `json:"parentRun,omitempty"`
	ParentCall string  `json:"parentCall,omitempty"`
	At         float64 `json:"at"`
	Dur        float64 `json:"dur"`
	// Stop and Error are the run.end event's; Ended says it has one.
	// Paused says the run's last pause was not resumed in the log.
	Ended  bool   `json:"ended"`
	Paused bool   `json:"paused,omitempty"`
	Stop   string `json:"stop,omitempty"`
	Error  *text  `json:"error,omitempty"`
	// Acct is the last accounting the log holds (run.paused, run.limit
	// or run.end), or, for a run whose log has none (its process died
	// before it ended), what its turns spent: Counted says so.
	Acct    *toolloop.Accounting `json:"acct,omitempty"`
	Counted bool                 `json:"counted,omitempty"`
	Turns   []*turn              `json:"turns"`
	// Notes are the run's events that belong to no turn.
	Notes []*note `json:"notes,omitempty"`
	// Resumes, on a run that went on with the transcript of an earlier
	// top-level run (the calls it answers or repairs are that run's), is
	// the earlier run's ID. Parts, on the first run of such a story, are
	// the runs that resumed it, in order; the last part's end is the
	// story's.
	Resumes string `json:"resumes,omitempty"`
	Parts   []*run `json:"parts,omitempty"`
	// Jobs are the run's background jobs, in the order they started.
	Jobs []*job `json:"jobs,omitempty"`
	// Prompt, on a run whose first turn has no request in the log (an
	// older log, or one without transient events), is the messages it
	// started with: its system and user prompts.
	Prompt []*message `json:"prompt,omitempty"`

	start, end time.Time
	turnOf     map[int]*turn
	callOf     map[string]*call
	jobOf      map[string]*job // by job ID
	jobByCall  map[string]*job // by the ID of the call that started it
	// tools are the tools the run's last request offered.
	tools []string
	// started are the messages of the run's first run.start.
	started  []toolloop.Message
	sawStart bool
}

// turn is one model turn and the calls it asked for.
type turn struct {
	N   int     `json:"n"`
	At  float64 `json:"at"`
	Dur float64 `json:"dur"`
	// ModelAt and ModelDur are the model's part: from its request to its
	// response; ModelDur is -1 when the log has no request (it is a
	// transient event) or no response.
	ModelAt  float64         `json:"modelAt"`
	ModelDur float64         `json:"modelDur"`
	Model    string          `json:"model,omitempty"`
	Usage    *toolloop.Usage `json:"usage,omitempty"`
	// Cost is the turn's price in US dollars, nil when the model's price
	// is unknown.
	Cost      *float64 `json:"cost,omitempty"`
	Stop      string   `json:"stop,omitempty"`
	Text      *text    `json:"text,omitempty"`
	Reasoning *text    `json:"reasoning,omitempty"`
	Calls     []*call  `json:"calls"`
	Notes     []*note  `json:"notes,omitempty"`
	// Parallel is the most calls of the turn that ran at once.
	Parallel int `json:"parallel"`
	// Request is what the model was sent (see request.go); Spent what
	// the turn's time went to, when its calls have timings.
	Request *request `json:"request,omitempty"`
	Spent   *spent   `json:"spent,omitempty"`
	// Answer, on a turn that answered a request for a native output
	// format (AnswerName) in text, is the typed answer, as JSON.
	Answer     *text  `json:"answer,omitempty"`
	AnswerName string `json:"answerName,omitempty"`

	start, end, request, response time.Time
	// answer is the model's whole text.
	answer string
}

// note is an event shown as a line of its own: a pause, a resume, a limit,
// a compaction, a retry.
type note struct {
	Kind   string  `json:"kind"`
	At     float64 `json:"at"`
	Title  string  `json:"title"`
	Detail *text   `json:"detail,omitempty"`
	// Jobs, on the message that told the model jobs ended, are their IDs.
	Jobs []string `json:"jobs,omitempty"`
}

// call is one tool call, from the model's request to its completion.
type call struct {
	ID     string `json:"id"`
	Tool   string `json:"tool"`
	Source string `json:"source,omitempty"`
	// Depth is 0 for a call of a top-level run, 1 for a call of a child
	// run, and so on.
	Depth int     `json:"depth"`
	At    float64 `json:"at"`
	// Dur is -1 when the call has no completion.
	Dur float64 `json:"dur"`
	// Args are the arguments the call ran with; Original, when they
	// differ, the model's; Changes say who changed them, in order.
	Args     *text                  `json:"args,omitempty"`
	Original *text                  `json:"original,omitempty"`
	Changes  []*change              `json:"changes,omitempty"`
	Repaired *text                  `json:"repaired,omitempty"`
	Repairs  []string               `json:"repairs,omitempty"`
	Verdict  *verdict               `json:"verdict,omitempty"`
	Asked    bool                   `json:"asked,omitempty"`
	Approval *approval              `json:"approval,omitempty"`
	Hooks    []*toolloop.HookEffect `json:"hooks,omitempty"`
	Status   string                 `json:"status"`
	Kind     string                 `json:"kind,omitempty"`
	Message  *text                  `json:"message,omitempty"`
	Result   *text                  `json:"result,omitempty"`
	// Notes are the text the loop added after the tool's output (a
	// guard's or a hook's), apart from the result.
	Notes []*text `json:"notes,omitempty"`
	// Repair, on a call the log had no completion for, is how a later
	// part of its run answered it when it repaired the transcript.
	Repair      *text       `json:"repair,omitempty"`
	Bytes       int         `json:"bytes,omitempty"`
	Truncated   bool        `json:"truncated,omitempty"`
	Cleared     bool        `json:"cleared,omitempty"`
	Synthesized bool        `json:"synthesized,omitempty"`
	Modified    []string    `json:"modified,omitempty"`
	Extra       *text       `json:"extra,omitempty"`
	Progress    int         `json:"progress,omitempty"`
	Partial     int         `json:"partial,omitempty"`
	Stack       *text       `json:"stack,omitempty"`
	Diff        []*diffFile `json:"diff,omitempty"`
	// Job is the ID of the background job the call started.
	Job string `json:"job,omitempty"`
	// Timing splits the call's time into its stages; nil in older logs.
	Timing *stages `json:"timing,omitempty"`
	// Output says the call is of the output tool: its arguments are the
	// run's typed answer.
	Output bool `json:"output,omitempty"`
	// Runs are the runs of agents this call started.
	Runs []*run `json:"runs,omitempty"`
	// Program is set on a call whose tool ran a program (see program.go);
	// Inner are the inner calls it made, by number. Parent, on an inner
	// call, is the ID of the program's call.
	Program *program `json:"program,omitempty"`
	Inner   []*call  `json:"inner,omitempty"`
	Parent  string   `json:"parent,omitempty"`

	start, end time.Time
	done       bool
	// args are the arguments the call ran with, for its diff; orig the
	// first the log holds (the model's); pending those it paused with.
	args, orig, pending json.RawMessage
	started             bool
	// noted are the texts hooks added to the result.
	noted []string
}

// The ones who can change a call's arguments.
const (
	byProcessor = "processor" // a TurnProcessor, before the call started
	byRepairer  = "repairer"  // the argument repairer
	byGuard     = "guard"     // a guard's Modify (or Ask with arguments)
	byHook      = "hook"      // a pre-tool-use hook
	byPerson    = "person"    // whoever decided a paused call, editing it
)

// change is one change to a call's arguments: who made it (By, and Name:
// the guard's rule, the hook's list and index), why, and the arguments
// after it.
type change struct {
	By     string `json:"by"`
	Name   string `json:"name,omitempty"`
	Reason *text  `json:"reason,omitempty"`
	Args   *text  `json:"args,omitempty"`
}

// changed records a change to c's arguments, to args.
func (b *builder) changed(c *call, by, name, reason string, args json.RawMessage) {
	c.Changes = append(c.Changes, &change{By: by, Name: name, Reason: b.cut(reason), Args: b.cut(pretty(args))})
	if len(args) > 0 {
		c.args = args
	}
}

// sameJSON says a and b are the same JSON value (or the same bytes).
func sameJSON(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// approval is the decision on a call that asked for one; Edited says the
// person who approved it edited its arguments (a change of the call
// shows them).
type approval struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
	Edited   bool   `json:"edited,omitempty"`
}

// verdict is a guard's decision as the page shows it.
type verdict struct {
	Decision  string `json:"decision"`
	Reason    *text  `json:"reason,omitempty"`
	Rule      string `json:"rule,omitempty"`
	Arguments *text  `json:"arguments,omitempty"`
}

// text is a string from the log, cut to the page's bound: More counts the
// bytes left out.
type text struct {
	S    string `json:"s"`
	More int    `json:"more,omitempty"`
}

// builder turns events into a page.
type builder struct {
	p     *page
	opts  *Options
	t0    time.Time
	runs  map[string]*run
	order []*run // top-level runs
	// left is what remains of the page's text budget.
	left int
}

func newBuilder(opts *Options) *builder {
	return &builder{
		p:    &page{Counts: map[string]int{}, Bound: opts.fieldBytes(), OpenTurns: opts.openTurns()},
		opts: opts,
		runs: map[string]*run{},
		left: opts.pageBytes(),
	}
}

// cut bounds s for display: to the field bound while the page's budget
// lasts, then to smallBound.
func (b *builder) cut(s string) *text {
	if s == "" {
		return nil
	}
	n := b.p.Bound
	if b.left <= 0 {
		n = min(n, smallBound)
	}
	t := &text{S: s}
	if len(s) > n {
		k := n
		for k > 0 && !utf8Start(s[k]) {
			k--
		}
		t.S, t.More = s[:k], len(s)-k
	}
	b.left -= len(t.S)
	return t
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

// smallBound is the display bound of a field once the page's budget is
// spent.
const smallBound = 256

func (b *builder) ms(t time.Time) float64 {
	if t.IsZero() || b.t0.IsZero() {
		return 0
	}
	return float64(t.Sub(b.t0).Microseconds()) / 1000
}

func (b *builder) run(e *toolloop.Event) *run {
	r := b.runs[e.RunID]
	if r == nil {
		r = &run{ID: e.RunID, ParentRun: e.ParentRunID, start: e.Time, Turns: []*turn{},
			turnOf: map[int]*turn{}, callOf: map[string]*call{}, jobOf: map[string]*job{}, jobByCall: map[string]*job{}}
		b.runs[e.RunID] = r
		if e.ParentRunID == "" {
			b.order = append(b.order, r) // ParentCallID alone names an inner call's program
		} else {
			r.ParentCall = e.ParentCallID
			pr := b.runs[e.ParentRunID]
			if pr == nil {
				pr = b.run(&toolloop.Event{RunID: e.ParentRunID, Time: e.Time})
			}
			pc := pr.call(b, e.ParentCallID, "", 0, e.Time)
			pc.Runs = append(pc.Runs, r)
		}
	}
	if r.start.IsZero() || e.Time.Before(r.start) {
		r.start = e.Time
	}
	if e.Time.After(r.end) {
		r.end = e.Time
	}
	return r
}

// depth is how deep r nests under top-level runs.
func (b *builder) depth(r *run) int {
	d := 0
	for r != nil && r.ParentRun != "" && d < toolloop.MaxAgentDepth+1 {
		r = b.runs[r.ParentRun]
		d++
	}
	return d
}

func (r *run) turn(n int, at time.Time) *turn {
	t := r.turnOf[n]
	if t == nil {
		t = &turn{N: n, ModelDur: -1, Calls: []*call{}}
		r.turnOf[n] = t
		r.Turns = append(r.Turns, t)
	}
	if !at.IsZero() {
		if t.start.IsZero() || at.Before(t.start) {
			t.start = at
		}
		if at.After(t.end) {
			t.end = at
		}
	}
	return t
}

// call finds or makes the call id of run r, in turn n.
func (r *run) call(b *builder, id, tool string, n int, at time.Time) *call {
	c := r.callOf[id]
	if c == nil {
		c = &call{ID: id, Tool: tool, Status: statusUnfinished, Dur: -1, Depth: b.depth(r)}
		r.callOf[id] = c
		t := r.turn(n, at)
		t.Calls = append(t.Calls, c)
	}
	if c.Tool == "" {
		c.Tool = tool
	}
	return c
}

// add folds one event into the page.
func (b *builder) add(e *toolloop.Event) {
	b.p.Events++
	if b.t0.IsZero() || e.Time.Before(b.t0) {
		b.t0 = e.Time
	}
	r := b.run(e)
	var t *turn
	if e.Turn > 0 {
		at := e.Time
		if r.outlives(e) {
			at = time.Time{} // it does not stretch the turn it names
		}
		t = r.turn(e.Turn, at)
	}
	switch e.Type {
	case toolloop.EventJobStarted, toolloop.EventJobOutput, toolloop.EventJobFinished:
		b.jobEvent(r, e)
		return
	}
	if e.CallID != "" {
		b.callEvent(r, e)
		return
	}
	var last *note
	addNote := func(kind, title, detail string) {
		last = &note{Kind: kind, At: b.ms(e.Time), Title: title, Detail: b.cut(detail)}
		if t != nil {
			t.Notes = append(t.Notes, last)
		} else {
			r.Notes = append(r.Notes, last)
		}
	}
	switch e.Type {
	case toolloop.EventRunStart:
		if !r.sawStart {
			r.started, r.sawStart = e.Messages, true
		}
		b.link(r, e.Messages)
		addNote("start", "run started with "+plural(len(e.Messages), "message"), "")
	case toolloop.EventRunResumed:
		r.Paused = false
		b.resumed(r, e, addNote)
	case toolloop.EventRunPaused:
		names := make([]string, 0, len(e.Pending))
		for _, p := range e.Pending {
			names = append(names, p.Name)
			if c := r.callOf[p.CallID]; c != nil && !c.done {
				c.Status = statusPending
				c.pending = p.Arguments
				c.noted = append(c.noted, p.Notes...)
			}
		}
		b.pausedPrograms(r, e)
		r.Acct, r.Paused = cmp.Or(e.Accounting, r.Acct), true
		addNote("pause", "paused: "+plural(len(e.Pending), "call")+" await approval ("+strings.Join(names, ", ")+")", "")
	case toolloop.EventRunEnd:
		r.Acct = cmp.Or(e.Accounting, r.Acct)
		if r.Paused {
			// Run or Resume returned to wait for approval: the run is
			// not over.
			addNote("pause", "the run returned to wait for approval", "")
			break
		}
		r.Ended, r.Stop = true, string(e.StopReason)
		r.Error = b.cut(e.Error)
		title := "run ended"
		if e.StopReason != "" {
			title += ": " + string(e.StopReason)
		}
		detail := e.Error
		if e.StopReason == toolloop.StopInterrupted {
			detail = "" // the interrupt's note says it; it is no failure
		}
		addNote("end", title, detail)
	case toolloop.EventUserMessage:
		// Delivered into the running run before a model request: after
		// the calls of the turn before it.
		title := "message delivered"
		if e.Origin != "" && e.Origin != toolloop.OriginSteer {
			title = strings.ReplaceAll(string(e.Origin), "_", "-") + " delivered"
		}
		var texts []string
		for _, m := range e.Messages {
			texts = append(texts, m.Text())
		}
		text := strings.Join(texts, "\n")
		if e.Origin == toolloop.OriginJob {
			var named string
			if e.Job != nil {
				named = e.Job.ID
			}
			ids := r.told(text, e.Turn, named)
			title = "job ended"
			if len(ids) > 1 {
				title = "jobs ended"
			}
			if len(ids) > 0 {
				title += ": " + strings.Join(ids, ", ")
			}
			addNote("job", title, text)
			last.Jobs = ids
			break
		}
		addNote("message", title, text)
	case toolloop.EventRunInterrupted:
		title := "interrupted (" + string(toolloop.InterruptNow) + ")"
		if i := e.Interrupt; i != nil {
			title = "interrupted (" + string(cmp.Or(i.Mode, toolloop.InterruptNow)) + ")"
			if i.Continue {
				title += "; the run went on with the queued messages"
			}
		}
		addNote("interrupt", title, "")
	case toolloop.EventLimit:
		r.Acct = cmp.Or(e.Accounting, r.Acct)
		addNote("limit", "limit reached", e.Error)
	case toolloop.EventModelRequest:
		if t != nil {
			if t.request.IsZero() {
				t.request = e.Time
			}
			b.request(r, t, e)
		}
	case toolloop.EventModelResponse:
		if t != nil {
			b.response(t, e)
		}
	case toolloop.EventModelRetry, toolloop.EventModelFallback:
		if at := e.Attempt; at != nil {
			title := "model attempt " + strconv.Itoa(at.Attempt) + " failed; retrying"
			if at.Delay > 0 {
				title += " in " + at.Delay.Round(time.Millisecond).String()
			}
			if e.Type == toolloop.EventModelFallback {
				title = "model " + strconv.Itoa(at.Model) + " failed; trying the next"
			}
			addNote("retry", title, at.Error)
		}
	case toolloop.EventTurnSentBack:
		addNote("sentback", "turn sent back", e.Error)
	case toolloop.EventOutputInvalid:
		addNote("invalid", "answer rejected", e.Error)
	case toolloop.EventTranscriptRepaired:
		b.link(r, e.Messages)
		b.repaired(r, e)
		addNote("repaired", "transcript repaired", strings.Join(e.Repairs, "\n"))
	case toolloop.EventTranscriptEdited:
		if ed := e.Edit; ed != nil {
			addNote(editKind(ed.Strategy), editTitle(ed), strings.Join(ed.CallIDs, ", "))
		}
	}
}

func editKind(strategy string) string {
	if strategy == "compact" {
		return "compaction"
	}
	return "edit"
}

func editTitle(ed *toolloop.TranscriptEdit) string {
	s := "transcript edited by " + ed.Strategy
	if ed.Reason != "" {
		s += " (" + ed.Reason + ")"
	}
	if ed.TokensBefore > 0 || ed.TokensAfter > 0 {
		s += ": ~" + strconv.Itoa(ed.TokensBefore) + " → ~" + strconv.Itoa(ed.TokensAfter) + " tokens"
	}
	if len(ed.CallIDs) > 0 {
		s += ", " + plural(len(ed.CallIDs), "result") + " cleared"
	}
	return s
}

func (b *builder) resumed(r *run, e *toolloop.Event, addNote func(kind, title, detail string)) {
	ids := make([]string, 0, len(e.Approvals))
	for id := range e.Approvals {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var lines []string
	for _, id := range ids {
		a := e.Approvals[id]
		what := "denied"
		if a.Approved {
			what = "approved"
		}
		line := id + ": " + what
		if a.Reason != "" {
			line += " (" + a.Reason + ")"
		}
		lines = append(lines, line)
		if c := r.callOf[id]; c != nil {
			c.Approval = &approval{Approved: a.Approved, Reason: textString(b.cut(a.Reason)), Edited: c.Approval != nil && c.Approval.Edited}
		}
	}
	addNote("resume", "run resumed with "+plural(len(e.Approvals), "decision"), strings.Join(lines, "\n"))
}

func (b *builder) response(t *turn, e *toolloop.Event) {
	resp := e.Response
	if resp == nil {
		return
	}
	t.response = e.Time
	t.Model, t.Stop = resp.Model, string(resp.StopReason)
	u := resp.Usage
	t.Usage = &u
	if info, ok := b.opts.ModelTable.Lookup(resp.Model); ok && info.Price != nil {
		c := info.Price.Cost(u)
		t.Cost = &c
	} else if info, ok := toolloop.LookupModel(resp.Model); ok && info.Price != nil {
		c := info.Price.Cost(u)
		t.Cost = &c
	}
	t.answer = resp.Message.Text()
	t.Text = b.cut(t.answer)
	var reasoning []string
	for _, c := range resp.Message.Content {
		if c.Type == toolloop.ContentReasoning && c.Text != "" {
			reasoning = append(reasoning, c.Text)
		}
	}
	t.Reasoning = b.cut(strings.Join(reasoning, "\n"))
	r := b.runs[e.RunID]
	for _, tc := range resp.Message.ToolCalls {
		c := r.call(b, tc.ID, tc.Name, e.Turn, e.Time)
		if c.orig == nil {
			c.orig, c.args = tc.Arguments, tc.Arguments
			c.Args = b.cut(pretty(tc.Arguments))
		}
	}
}

// callEvent folds an event of one call into it.
func (b *builder) callEvent(r *run, e *toolloop.Event) {
	var c *call
	if parent := innerParent(r, e); parent != "" {
		c = r.innerCall(b, parent, e.CallID, e.Tool, e.Turn, e.Time)
	} else {
		c = r.call(b, e.CallID, e.Tool, e.Turn, e.Time)
	}
	if e.Source != "" {
		c.Source = string(e.Source)
		if e.SourceName != "" {
			c.Source += ":" + e.SourceName
		}
	}
	switch e.Type {
	case toolloop.EventStart:
		if c.Program == nil || !c.Program.Paused || c.start.IsZero() {
			// A program that paused runs again on resume: it started
			// when it first ran.
			c.start = e.Time
		}
		b.started(c, e.Arguments)
	case toolloop.EventArgumentsRepaired:
		c.Repairs = append(c.Repairs, e.Repairs...)
		c.Repaired = b.cut(pretty(e.Arguments))
		b.changed(c, byRepairer, "", strings.Join(e.Repairs, "; "), e.Arguments)
	case toolloop.EventGuardVerdict:
		if v := e.Verdict; v != nil {
			c.Verdict = &verdict{Decision: string(cmp.Or(v.Decision, toolloop.Allow)), Reason: b.cut(v.Reason), Rule: v.Rule,
				Arguments: b.cut(pretty(v.Arguments))}
			if len(v.Arguments) > 0 && !sameJSON(v.Arguments, c.args) {
				b.changed(c, byGuard, v.Rule, v.Reason, v.Arguments)
			}
		}
	case toolloop.EventPermissionRequested:
		c.Asked = true
	case toolloop.EventPermissionCompleted:
		c.Approval = nil
		if a := e.Approval; a != nil {
			c.Approval = &approval{Approved: a.Approved, Reason: textString(b.cut(a.Reason))}
			if a.Approved && len(a.Arguments) > 0 && !sameJSON(a.Arguments, c.args) {
				// The person who approved the call edited its
				// arguments; the change shows them, bounded.
				c.Approval.Edited = true
				b.changed(c, byPerson, "", a.Reason, a.Arguments)
			}
		}
	case toolloop.EventHook:
		if e.Hook != nil {
			h := *e.Hook
			switch h.Effect {
			case "modify":
				// The detail is the arguments the hook gave.
				if args := json.RawMessage(h.Detail); json.Valid(args) && !sameJSON(args, c.args) {
					b.changed(c, byHook, h.Hook+"["+strconv.Itoa(h.Index)+"]", "", args)
				}
			case "context", "guidance":
				c.noted = append(c.noted, h.Detail)
			}
			h.Detail = textString(b.cut(h.Detail))
			c.Hooks = append(c.Hooks, &h)
		}
	case toolloop.EventProgress:
		c.Progress += max(e.Coalesced, 1)
	case toolloop.EventPartialResult:
		c.Partial += max(e.Coalesced, 1)
	case toolloop.EventComplete:
		b.complete(c, e)
	}
}

func (b *builder) complete(c *call, e *toolloop.Event) {
	c.done, c.end = true, e.Time
	if e.Timing != nil {
		c.Timing = newStages(e.Timing)
	}
	c.Stack = b.cut(e.Stack)
	res := e.Result
	if res == nil {
		c.Status = statusError
		return
	}
	c.Status = statusOf(res)
	if res.Error != nil {
		c.Kind, c.Message = string(res.Error.Kind), b.cut(res.Error.Message)
	}
	m := res.Meta
	if c.start.IsZero() && m.Duration > 0 {
		c.start = e.Time.Add(-m.Duration)
	}
	if m.Source != "" && c.Source == "" {
		c.Source = string(m.Source)
		if m.SourceName != "" {
			c.Source += ":" + m.SourceName
		}
	}
	body := b.split(c, res)
	if res.Error != nil && body == res.Error.Message {
		body = "" // the message says it already
	}
	c.Result = b.cut(body)
	c.Bytes, c.Truncated, c.Cleared, c.Synthesized = m.Bytes, m.Truncated, m.Cleared, m.Synthesized
	c.Modified = m.Modified
	if m.InnerCalls > 0 {
		c.program().Calls = m.InnerCalls
	}
	if len(m.Extra) > 0 {
		if raw, err := json.Marshal(m.Extra); err == nil {
			c.Extra = b.cut(string(raw))
		}
	}
	if c.Status == statusOK {
		c.Diff = fileDiff(c.Tool, c.args, m.Extra)
	}
}

func statusOf(res *toolloop.ToolResult) string {
	if !res.IsError() {
		return statusOK
	}
	if res.Error != nil {
		switch res.Error.Kind {
		case toolloop.KindDenied:
			return statusDenied
		case toolloop.KindCanceled:
			return statusCanceled
		}
	}
	return statusError
}

// started folds a call's start event. The first says what the call
// started with: a turn processor may have changed the model's arguments.
// One after a pause is the call resumed, with the arguments of whoever
// decided it, who may have edited them.
func (b *builder) started(c *call, args json.RawMessage) {
	switch {
	case len(args) == 0:
	case c.pending != nil:
		if !sameJSON(args, c.pending) {
			b.changed(c, byPerson, "", "", args)
		}
		c.pending = nil
	case !c.started:
		if c.orig == nil {
			c.orig, c.args = args, args
			c.Args = b.cut(pretty(args))
		} else if !sameJSON(args, c.args) {
			b.changed(c, byProcessor, "", "", args)
		}
	}
	c.started = true
}

// split returns the text of res without the notes the loop added after
// the tool's output (a guard's note that it changed the arguments, a
// hook's context or guidance), which it puts in c.Notes.
func (b *builder) split(c *call, res *toolloop.ToolResult) string {
	k := len(res.Content)
	for k > 0 {
		blk := res.Content[k-1]
		if blk.Type != toolloop.ContentText || !(strings.HasPrefix(blk.Text, guardNote) || strings.HasPrefix(blk.Text, approvalNote) || slices.Contains(c.noted, blk.Text)) {
			break
		}
		k--
	}
	if k == len(res.Content) {
		return res.Text()
	}
	for _, blk := range res.Content[k:] {
		c.Notes = append(c.Notes, b.cut(blk.Text))
	}
	return (&toolloop.ToolResult{Content: res.Content[:k], Error: res.Error}).Text()
}

// guardNote begins the note the loop adds to the result of a call whose
// arguments a guard changed.
const guardNote = "Note: policy changed the arguments"

// link makes r part of the story of an earlier top-level run when r is
// that run resumed under a new ID after its process stopped: the
// transcript r goes on with holds a call of that run that has no
// completion, or a call of a story whose last part did not end, or was
// aborted. (A run that goes on with the transcript of one that ended is a
// new run of the conversation, not a part.)
func (b *builder) link(r *run, msgs []toolloop.Message) {
	if r.ParentRun != "" || r.Resumes != "" {
		return
	}
	for _, m := range msgs {
		ids := make([]string, 0, len(m.ToolCalls)+1)
		for _, tc := range m.ToolCalls {
			ids = append(ids, tc.ID)
		}
		if m.Result != nil {
			ids = append(ids, m.Result.CallID)
		}
		for _, id := range ids {
			for _, root := range b.order {
				if root == r {
					continue
				}
				parts := append([]*run{root}, root.Parts...)
				last := parts[len(parts)-1]
				for _, o := range parts {
					c := o.callOf[id]
					if c == nil || ((c.done || c.Repair != nil) && last.Ended && last.Stop != string(toolloop.StopAborted)) {
						continue
					}
					r.Resumes = last.ID
					root.Parts = append(root.Parts, r)
					b.order = slices.DeleteFunc(b.order, func(x *run) bool { return x == r })
					return
				}
			}
		}
	}
}

// story is r and the runs that resumed it (r's own story if r is a part).
func (b *builder) story(r *run) []*run {
	for r.Resumes != "" && b.runs[r.Resumes] != nil {
		r = b.runs[r.Resumes]
	}
	return append([]*run{r}, r.Parts...)
}

// repaired attaches the results a transcript repair made up to the calls
// they answer, in r's story: calls the log has no completion for, whose
// process stopped.
func (b *builder) repaired(r *run, e *toolloop.Event) {
	for _, m := range e.Messages {
		res := m.Result
		if res == nil {
			continue
		}
		for _, o := range b.story(r) {
			c := o.callOf[res.CallID]
			if c == nil || c.done {
				continue
			}
			c.Status = statusOf(res)
			if res.Error != nil {
				c.Kind, c.Message = string(res.Error.Kind), b.cut(res.Error.Message)
			}
			c.Repair = b.cut(cmp.Or(strings.Join(e.Repairs, "\n"), "the transcript was repaired") + " (run " + r.ID + ")")
		}
	}
}

// finishCall settles what a call shows of its arguments: those it ran
// with, and the model's beside them when they differ.
func (b *builder) finishCall(c *call) {
	if len(c.orig) > 0 && len(c.args) > 0 && !sameJSON(c.orig, c.args) {
		c.Original = cmp.Or(c.Args, b.cut(pretty(c.orig)))
		c.Args = b.cut(pretty(c.args))
	} else if c.Args == nil {
		c.Args = b.cut(pretty(c.args))
	}
	for _, ch := range c.Changes {
		if ch.By == byPerson && ch.Reason == nil && c.Approval != nil {
			ch.Reason = b.cut(c.Approval.Reason)
		}
	}
}

// finish computes what needs every event: times, parallelism, counts.
func (b *builder) finish() *page {
	p := b.p
	p.Start = b.t0.UTC().Format(time.RFC3339Nano)
	tools := map[string]bool{}
	var walk func(r *run)
	walk = func(r *run) {
		r.At, r.Dur = b.ms(r.start), b.ms(r.end)-b.ms(r.start)
		slices.SortStableFunc(r.Turns, func(x, y *turn) int { return x.N - y.N })
		b.prompt(r)
		if r.ParentRun == "" {
			p.Turns += len(r.Turns)
		}
		for _, t := range r.Turns {
			b.finishTurn(t)
			for _, c := range t.Calls {
				for _, c := range append([]*call{c}, c.Inner...) {
					b.finishCall(c)
					p.Calls++
					p.Counts[c.Status]++
					tools[c.Tool] = true
				}
				for _, cr := range c.Runs {
					walk(cr)
				}
			}
		}
		if r.Acct == nil {
			r.Acct, r.Counted = spentByTurns(r.Turns)
		}
		for _, part := range r.Parts {
			walk(part)
		}
	}
	for _, r := range b.order {
		walk(r)
	}
	for _, r := range b.runs {
		b.finishJobs(r) // after the turns: a job's end is placed among them
	}
	p.Runs = b.order
	if p.Runs == nil {
		p.Runs = []*run{}
	}
	p.Tools = make([]string, 0, len(tools))
	for name := range tools {
		p.Tools = append(p.Tools, name)
	}
	slices.Sort(p.Tools)
	return p
}

// spentByTurns adds up the usage and cost of turns, for a run whose log
// holds no accounting of it (its process died): counted says so.
func spentByTurns(turns []*turn) (acct *toolloop.Accounting, counted bool) {
	for _, t := range turns {
		if t.Usage == nil {
			continue
		}
		if acct == nil {
			acct = new(toolloop.Accounting)
		}
		acct.Usage.Add(*t.Usage)
		if t.Cost != nil {
			acct.Cost += *t.Cost
		} else {
			acct.UnpricedTurns++
		}
	}
	return acct, acct != nil
}

func (b *builder) finishTurn(t *turn) {
	start := t.start
	if !t.request.IsZero() {
		start = t.request
		if !t.response.IsZero() {
			t.ModelDur = b.ms(t.response) - b.ms(t.request)
		}
	}
	t.ModelAt = b.ms(cmp.Or(t.request, t.response, start))
	end := t.end
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, c := range t.Calls {
		if c.start.IsZero() {
			c.start = cmp.Or(c.end, t.response, start)
		}
		c.At = b.ms(c.start)
		if c.done {
			c.Dur = max(b.ms(c.end)-c.At, 0)
			edges = append(edges, edge{c.start, 1}, edge{c.end, -1})
		}
		if c.end.After(end) {
			end = c.end
		}
		if c.start.Before(start) {
			start = c.start
		}
		b.finishInner(c)
	}
	t.At, t.Dur = b.ms(start), b.ms(end)-b.ms(start)
	// The most calls running at once; an end at the instant another
	// starts does not overlap it.
	slices.SortFunc(edges, func(x, y edge) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.delta - y.delta
	})
	n := 0
	for _, e := range edges {
		n += e.delta
		t.Parallel = max(t.Parallel, n)
	}
	b.finishTiming(t)
	b.finishOutput(t)
}

// pretty indents JSON arguments for reading; anything else is returned as
// it is.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

func textString(t *text) string {
	if t == nil {
		return ""
	}
	if t.More > 0 {
		return t.S + "… (" + strconv.Itoa(t.More) + " more bytes)"
	}
	return t.S
}

func plural(n int, what string) string {
	s := strconv.Itoa(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}
