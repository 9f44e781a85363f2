package toolloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The causes a job's context ends with, which say what became of it.
var (
	errJobTimeout   = errors.New("the job ran past its time limit")
	errJobCanceled  = errors.New("canceled by the model (job_cancel)")
	errJobRunEnded  = errors.New("the run ended")
	errJobRunPaused = errors.New("the run paused for approval")
)

// jobGrace is how long a canceled job gets to return before the loop
// stops waiting for it: longer than a call's, as a shell job kills a
// process group and drains its output.
const jobGrace = 5 * time.Second

// jobs is a run's background jobs.
type jobs struct {
	rn  *runState
	lim JobLimits
	// ctx is the run's context, without its inbox: jobs run under it,
	// so the caller's cancellation and the budget's deadline end them.
	ctx context.Context
	// inbox is where the ends of jobs are queued: the run's own, or one
	// the loop attaches to the run at its next safe point.
	inbox *Inbox

	mu      sync.Mutex
	list    []*bgJob // in the order started
	next    int      // the number of the last ID given
	running int
	ended   bool // the run ended its jobs: no more start
	// changed is signalled (without blocking) when a job ends.
	changed chan struct{}
	// tools are the job tools, made on first use.
	tools map[string]*entry
}

// bgJob is one background job.
type bgJob struct {
	js   *jobs
	cr   *callRun // the starting call, read only
	call Call     // the tool's own copy of the call
	// info is guarded by js.mu.
	info Job
	// claimed: a job_cancel or the run's end reports the job's end, so
	// finish queues no message. abandoned: it was reported ended
	// before the tool returned, and what the tool does now is ignored.
	claimed, abandoned bool
	counted            bool // its Spent was added to the run's accounting
	spent              *Accounting
	cancel             context.CancelCauseFunc
	done               chan struct{} // closed when the job has ended

	// out is the job's output; mu guards it and the pacing of job.output
	// events.
	mu       sync.Mutex
	out      jobOutput
	progress *Progress
	pend     strings.Builder
	pendN    int
	dropped  int
	last     time.Time
	timer    *time.Timer
	closed   bool
}

// jobsNow returns the run's jobs, or nil if it has none.
func (rn *runState) jobsNow() *jobs {
	rn.jobMu.Lock()
	defer rn.jobMu.Unlock()
	return rn.jobs
}

// jobsOn reports whether calls of the run may start jobs: only within
// Run or Resume (or, for its requests, a driver's, see ModelRequest),
// and unless Limits.Jobs turns them off.
func (rn *runState) jobsOn() bool { return (rn.base != nil || rn.driver) && rn.lim.Jobs.Max > 0 }

// jobsFor returns the run's jobs, making them on first use.
func (rn *runState) jobsFor() *jobs {
	rn.jobMu.Lock()
	defer rn.jobMu.Unlock()
	if rn.jobs == nil {
		in := rn.inbox
		if in == nil {
			in = &Inbox{}
		}
		rn.jobs = &jobs{rn: rn, lim: rn.lim.Jobs, ctx: context.WithValue(rn.base, inboxKey{}, (*Inbox)(nil)),
			inbox: in, next: rn.jobBase, changed: make(chan struct{}, 1)}
	}
	return rn.jobs
}

// reserveJob gives a call that asked to run in the background its job
// ID.
func (rn *runState) reserveJob() string {
	js := rn.jobsFor()
	js.mu.Lock()
	defer js.mu.Unlock()
	js.next++
	return "job_" + strconv.Itoa(js.next)
}

// grace is how long a canceled job gets to return.
func (js *jobs) grace() time.Duration {
	if g := js.rn.l.grace; g > 0 {
		return g
	}
	return jobGrace
}

// get returns the job with the given ID, or nil.
func (js *jobs) get(id string) *bgJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.list {
		if j.info.ID == id {
			return j
		}
	}
	return nil
}

// startJob starts the call's tool as a background job and returns the
// call's result, which says so, or why it did not start.
func (cr *callRun) startJob() *ToolResult {
	js := cr.rn.jobsNow()
	if js == nil {
		return errorResult(KindExecutionFailed, "not run: background jobs are not available")
	}
	js.mu.Lock()
	if js.ended {
		js.mu.Unlock()
		return errorResult(KindCanceled, "not started: the run is ending")
	}
	if js.running >= js.lim.Max {
		n := js.running
		js.mu.Unlock()
		return errorResult(KindExecutionFailed,
			"not started: %d background jobs are running and at most %d run at once; wait for one to end (%s), cancel one (%s), or run this call without %s",
			n, js.lim.Max, JobWaitName, JobCancelName, BackgroundArg)
	}
	ctx, cancel := context.WithCancelCause(js.ctx)
	j := &bgJob{js: js, cr: cr, call: *cr.call, cancel: cancel, done: make(chan struct{})}
	j.call.Reporter = j
	j.info = Job{ID: cr.call.Job, CallID: cr.tc.ID, Tool: cr.tc.Name, Turn: cr.call.Turn, Status: JobRunning, Started: time.Now()}
	js.list = append(js.list, j)
	js.running++
	info := j.info
	js.mu.Unlock()

	if js.rn.observed {
		js.rn.emit(&Event{Type: EventJobStarted, Turn: info.Turn, CallID: info.CallID, Tool: info.Tool,
			Source: cr.kind, SourceName: cr.source, Job: &info})
	}
	tctx, stop := context.WithTimeoutCause(ctx, js.lim.MaxDuration, errJobTimeout)
	go func() {
		defer stop()
		j.run(tctx)
	}()
	return JobStartedResult(info.ID, info.Tool)
}

// JobStartedResult returns the result of a call that started the job
// id of the named tool, as Run gives it: it tells the model the job
// runs on and how to follow it, and names the job in Meta.Extra["job"]
// (which [LastJobNumber] reads). Drivers that run jobs themselves use it
// to answer as Run does.
func JobStartedResult(id, tool string) *ToolResult {
	r := &ToolResult{Status: StatusOK, Content: []Content{TextContent(fmt.Sprintf(
		"Started background job %s: %s runs on while you go on with other work. When it ends you will be told "+
			"in a message starting \"[Job %s\"; do not poll for it. Meanwhile: %s reads its output so far, %s waits for its end, "+
			"%s stops it, %s lists the jobs.", id, tool, id, JobOutputName, JobWaitName, JobCancelName, JobListName))}}
	r.Meta.Extra = map[string]any{"job": id}
	return r
}

// run runs the job's tool and ends the job with its result.
func (j *bgJob) run(ctx context.Context) {
	cr := j.cr
	var (
		res   *ToolResult
		err   error
		stack string
	)
	func() {
		defer func() {
			if p := recover(); p != nil {
				stack = string(debug.Stack())
				res, err = errorResult(KindPanic, "tool %s panicked: %v", j.info.Tool, p), nil
			}
		}()
		if mw := cr.rn.l.Hooks.Middleware; len(mw) > 0 {
			res, err = chain(cr.e.tool.Run, mw)(ctx, &j.call)
		} else {
			res, err = cr.e.tool.Run(ctx, &j.call)
		}
	}()
	if err != nil {
		var ps interface{ PanicStack() string }
		if errors.As(err, &ps) {
			stack = ps.PanicStack()
		}
		res = ErrorResult(err)
		if asAgentPaused(err) != nil {
			res = errorResult(KindDenied, "the agent's run stopped to ask for approval, which a background job cannot wait for; "+
				"call %s without %s to be asked", j.info.Tool, BackgroundArg)
		}
	} else if res == nil {
		res = &ToolResult{Status: StatusOK}
	}
	r := *res // the tool may hold res: work on a copy
	r.Content = r.Content[:len(r.Content):len(r.Content)]
	if b := cr.rn.lim.MaxOutputBytes; b > 0 && contentBytes(r.Content) > b {
		r.Meta.Bytes = max(r.Meta.Bytes, contentBytes(r.Content))
		r.Content, _ = truncateContent(r.Content, b)
		r.Meta.Truncated = true
	}
	status, reason := JobOK, ""
	if cause := context.Cause(ctx); ctx.Err() != nil && r.Error != nil && (r.Error.Kind == KindCanceled || r.Error.Kind == KindTimeout) {
		// The job's context ended and the tool stopped because of it
		// (a context error, or a result of kind canceled or timeout):
		// say what ended it. A tool that failed on its own as the
		// context ended keeps its failure.
		switch {
		case errors.Is(cause, errJobTimeout):
			r.Error = Errorf(KindTimeout, "job %s ran past its time limit of %v and was canceled", j.info.ID, j.js.lim.MaxDuration)
		default:
			reason = jobReason(cause)
			r.Error = Errorf(KindCanceled, "job %s was canceled: %s", j.info.ID, reason)
			status = JobCanceled
		}
		if err != nil { // the tool's own text is the context's error: replace it
			r.Content = []Content{TextContent(r.Error.Message)}
		}
		r.Status = StatusError
	}
	r2 := j.postHooks(ctx, &r)
	normalizeResult(r2)
	if status == JobOK && r2.Status == StatusError {
		status = JobError
	}
	if b := cr.rn.lim.MaxResultBytes; b > 0 {
		var cut bool
		r2.Meta.Bytes = max(r2.Meta.Bytes, contentBytes(r2.Content))
		r2.Content, cut = truncateContent(r2.Content, b)
		r2.Meta.Truncated = r2.Meta.Truncated || cut
	}
	r2.CallID, r2.Name = j.info.CallID, j.info.Tool
	r2.Meta.Source, r2.Meta.SourceName = cr.kind, cr.source
	r2.Meta.Duration = time.Since(j.info.Started)
	j.finish(status, reason, r2, stack)
}

// jobReason says, for a job's context that ended, why.
func jobReason(cause error) string {
	switch {
	case errors.Is(cause, errJobCanceled), errors.Is(cause, errJobRunEnded), errors.Is(cause, errJobRunPaused):
		return cause.Error()
	case errors.Is(cause, errInterruptNow):
		return "the run was interrupted"
	case cause != nil:
		var be *BudgetError
		if errors.As(cause, &be) {
			return "the run reached its budget: " + be.Error()
		}
		return "the run was canceled (" + cause.Error() + ")"
	}
	return "the run was canceled"
}

// postHooks runs the post-tool-use hooks on the job's result, as they
// run on a call's: a job's end reaches the model as a call's result
// would.
func (j *bgJob) postHooks(ctx context.Context, res *ToolResult) *ToolResult {
	for i, h := range j.cr.rn.l.Hooks.PostToolUse {
		r, err := protect2(func() (*ToolResult, error) { return h(ctx, &j.call, res) })
		if err != nil {
			j.hookEvent(i, "reject", err.Error())
			var pe *panicError
			if errors.As(err, &pe) {
				return errorResult(KindPanic, "post-tool-use hook %d panicked: %v", i, pe.value)
			}
			return ErrorResult(err)
		}
		if r != nil {
			c := *r
			res = &c
			j.hookEvent(i, "transform", "")
		}
	}
	return res
}

func (j *bgJob) hookEvent(i int, effect, detail string) {
	if !j.js.rn.observed {
		return
	}
	j.js.rn.emit(&Event{Type: EventHook, Turn: j.info.Turn, CallID: j.info.CallID, Tool: j.info.Tool,
		Source: j.cr.kind, SourceName: j.cr.source, Hook: &HookEffect{Hook: "post_tool_use", Index: i, Effect: effect, Detail: detail}})
}

// finish ends the job, once: it records how it ended, reports
// job.finished and, unless something else reports the end, queues the
// message that tells the model.
func (j *bgJob) finish(status JobStatus, reason string, r *ToolResult, stack string) {
	js := j.js
	js.mu.Lock()
	if j.abandoned {
		js.mu.Unlock()
		return // reported ended already; this result is ignored
	}
	j.closeOutput()
	j.info.Status, j.info.Reason, j.info.Ended, j.info.Result = status, reason, time.Now(), r
	j.info.OutputBytes = j.outputBytes()
	j.spent = r.Meta.Spent
	js.running--
	claimed := j.claimed
	info := j.info
	js.mu.Unlock()
	if js.rn.observed {
		js.rn.emit(&Event{Type: EventJobFinished, Turn: info.Turn, CallID: info.CallID, Tool: info.Tool,
			Source: j.cr.kind, SourceName: j.cr.source, Job: &info, Stack: stack})
	}
	if !claimed {
		js.queueEnd(j, "")
	}
	close(j.done)
	select {
	case js.changed <- struct{}{}:
	default:
	}
}

// queueEnd queues the message telling the model the job ended.
func (js *jobs) queueEnd(j *bgJob, when string) {
	js.mu.Lock()
	info := j.info
	js.mu.Unlock()
	in := js.inbox
	in.mu.Lock()
	in.queue = append(in.queue, QueuedMessage{Origin: OriginJob, Message: UserMessage(js.endText(&info, when)), job: j})
	in.mu.Unlock()
	in.wake()
}

// unqueue takes j's end message out of the inbox, if it is still
// queued, and reports whether it was.
func (js *jobs) unqueue(j *bgJob) bool {
	in := js.inbox
	in.mu.Lock()
	defer in.mu.Unlock()
	for i, m := range in.queue {
		if m.job == j {
			in.queue = append(in.queue[:i], in.queue[i+1:]...)
			return true
		}
	}
	return false
}

// endText is the text that tells the model how a job ended.
func (js *jobs) endText(info *Job, when string) string { return info.EndMessage(when, js.lim.EndBytes) }

// EndMessage returns the text that tells the model how the job ended,
// as the loop delivers it: status, time, exit code, error, the head and
// tail of its result in at most endBytes bytes, and how much output it
// printed. when, if set, says when it ended, as " when the run paused".
// Drivers that run jobs themselves use it to tell a job's end as Run
// does.
func (j *Job) EndMessage(when string, endBytes int) string {
	info := j
	var b strings.Builder
	fmt.Fprintf(&b, "[Job %s (%s, started by call %s) ended%s: %s after %s", info.ID, info.Tool, info.CallID, when,
		info.Status, info.Ended.Sub(info.Started).Round(time.Millisecond))
	r := info.Result
	if r != nil {
		if code, ok := r.Meta.Extra["exit_code"]; ok {
			fmt.Fprintf(&b, ", exit code %v", code)
		}
		if r.Error != nil && info.Status != JobOK {
			fmt.Fprintf(&b, " (%s: %s)", r.Error.Kind, r.Error.Message)
		}
	}
	b.WriteString(".")
	if r != nil {
		text := ""
		if cs, _ := truncateContent(r.Content, endBytes); len(cs) > 0 {
			text = (&ToolResult{Content: cs}).Text()
		}
		if r.Error != nil && strings.TrimSpace(text) == r.Error.Message {
			text = "" // said already
		}
		if text != "" {
			b.WriteString(" Its result:\n")
			b.WriteString(text)
			if !strings.HasSuffix(text, "\n") {
				b.WriteString("\n")
			}
		}
	}
	if info.OutputBytes > 0 {
		fmt.Fprintf(&b, " It printed %d bytes of output; %s {\"job\":%q} reads them.", info.OutputBytes, JobOutputName, info.ID)
	}
	b.WriteString("]")
	return b.String()
}

// delivered marks a job's end as told to the model at a safe point,
// counts what it spent, and returns the job for the user.message event.
func (rn *runState) delivered(j *bgJob, res *RunResult) *Job {
	js := j.js
	js.mu.Lock()
	defer js.mu.Unlock()
	j.info.Reported = true
	if !j.counted && j.spent != nil {
		res.Accounting.AddSpent(j.spent)
	}
	j.counted = true
	info := j.info
	return &info
}

// endAll ends the jobs still running when the run ends or pauses: each
// is canceled, given jobGrace to return, and reported ended. A pausing
// run queues their ends, to be told to the model when it resumes. The
// jobs, as they ended, go in res.Jobs; what they spent that the run has
// not counted is counted. It is safe to call more than once.
func (js *jobs) endAll(res *RunResult, pause bool) {
	cause := errJobRunEnded
	if pause {
		cause = errJobRunPaused
	}
	js.mu.Lock()
	if js.ended {
		js.mu.Unlock()
		return
	}
	js.ended = true
	var live, ending []*bgJob
	for _, j := range js.list {
		if j.info.Status == JobRunning {
			j.claimed = true
			live = append(live, j)
			j.cancel(cause)
		} else if !j.abandoned {
			ending = append(ending, j) // may still be reporting its end
		}
	}
	js.mu.Unlock()
	if len(live)+len(ending) > 0 {
		timer := time.NewTimer(js.grace())
		for _, j := range append(ending, live...) {
			select {
			case <-j.done:
			case <-timer.C:
			}
			js.abandon(j, cause.Error())
		}
		timer.Stop()
	}
	if pause {
		for _, j := range live {
			js.queueEnd(j, " when the run paused")
		}
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	res.Jobs = make([]Job, 0, len(js.list))
	for _, j := range js.list {
		if !j.counted && j.spent != nil {
			res.Accounting.AddSpent(j.spent)
		}
		j.counted = true
		if pause && (j.info.Status != JobRunning) {
			// Its end is told already, or queued in the pause state, to
			// be told when the run resumes.
			j.info.Reported = true
		}
		res.Jobs = append(res.Jobs, j.info)
	}
}

// abandon reports a canceled job ended if its tool has not returned: its
// result will be ignored.
func (js *jobs) abandon(j *bgJob, reason string) {
	js.mu.Lock()
	if j.info.Status != JobRunning {
		js.mu.Unlock()
		return
	}
	j.abandoned = true
	j.closeOutput()
	j.info.Status, j.info.Ended = JobCanceled, time.Now()
	j.info.Reason = reason + fmt.Sprintf("; the tool did not stop within %v of being canceled, and what it does now is ignored", js.grace())
	j.info.OutputBytes = j.outputBytes()
	j.info.Result = errorResult(KindCanceled, "job %s was canceled: %s", j.info.ID, j.info.Reason)
	js.running--
	info := j.info
	js.mu.Unlock()
	if js.rn.observed {
		js.rn.emit(&Event{Type: EventJobFinished, Turn: info.Turn, CallID: info.CallID, Tool: info.Tool,
			Source: j.cr.kind, SourceName: j.cr.source, Job: &info})
	}
	close(j.done) // finish, when the tool returns, does nothing
	select {
	case js.changed <- struct{}{}:
	default:
	}
}

// stop cancels a running job for job_cancel and waits for it to end.
// It returns the job as it ended, and whether it was running.
func (js *jobs) stop(ctx context.Context, j *bgJob) (Job, bool) {
	js.mu.Lock()
	if j.info.Status != JobRunning {
		info := j.info
		js.mu.Unlock()
		return info, false
	}
	if j.claimed {
		// Another job_cancel (or the run's end) is stopping it and
		// reports its end: wait for it, and report nothing.
		js.mu.Unlock()
		select {
		case <-j.done:
		case <-time.After(js.grace()):
		case <-ctx.Done():
		}
		js.mu.Lock()
		defer js.mu.Unlock()
		return j.info, false
	}
	j.claimed = true
	j.cancel(errJobCanceled)
	js.mu.Unlock()
	timer := time.NewTimer(js.grace())
	defer timer.Stop()
	select {
	case <-j.done:
	case <-timer.C:
	case <-ctx.Done():
		// The call itself was stopped (an interrupt, the run's end)
		// before the job ended: its end is told as any job's is.
		js.mu.Lock()
		running := j.info.Status == JobRunning
		if running {
			j.claimed = false
		}
		info := j.info
		js.mu.Unlock()
		if !running {
			// It ended meanwhile, claimed by this call, whose result
			// may never reach the model: tell it as any job's end.
			<-j.done
			js.queueEnd(j, "")
		}
		return info, false
	}
	js.abandon(j, errJobCanceled.Error())
	js.mu.Lock()
	defer js.mu.Unlock()
	j.info.Reported = true
	return j.info, true
}

// anyRunning reports whether a job is running.
func (js *jobs) anyRunning() bool {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.running > 0
}

// ReportProgress implements [Reporter] for a job: the latest progress
// is shown by job_list and job_output.
func (j *bgJob) ReportProgress(_ *Call, p Progress) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		j.progress = &p
	}
}

// ReportPartial implements [Reporter] for a job: the text is the job's
// output, kept (see JobLimits.MaxOutputBytes) and reported in
// job.output events, rate-limited as a call's partial output is.
func (j *bgJob) ReportPartial(_ *Call, text string) {
	if text == "" {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return
	}
	if j.out.buf == nil {
		j.out.init(j.js.lim.MaxOutputBytes)
	}
	j.out.write(text)
	rn := j.js.rn
	if !rn.observed {
		return
	}
	iv := rn.lim.ReportInterval
	if room := rn.lim.MaxPartialBytes - j.pend.Len(); len(text) <= room {
		j.pend.WriteString(text)
	} else {
		keep := runeFloor(text, max(room, 0))
		j.pend.WriteString(text[:keep])
		j.dropped += len(text) - keep
	}
	j.pendN++
	if iv <= 0 || time.Since(j.last) >= iv && j.timer == nil {
		j.flushLocked()
		return
	}
	if j.timer == nil {
		j.timer = time.AfterFunc(iv-time.Since(j.last), func() {
			j.mu.Lock()
			defer j.mu.Unlock()
			j.timer = nil
			if !j.closed {
				j.flushLocked()
			}
		})
	}
}

// flushLocked sends the output held as one job.output event.
func (j *bgJob) flushLocked() {
	if j.pendN == 0 {
		return
	}
	text := j.pend.String()
	if j.dropped > 0 {
		text += "\n[... " + strconv.Itoa(j.dropped) + " bytes of output not shown here ...]\n"
	}
	e := &Event{Type: EventJobOutput, Turn: j.info.Turn, CallID: j.info.CallID, Tool: j.info.Tool,
		Source: j.cr.kind, SourceName: j.cr.source, Text: text}
	if j.pendN > 1 {
		e.Coalesced = j.pendN
	}
	j.pend.Reset()
	j.pendN, j.dropped = 0, 0
	j.last = time.Now()
	j.js.rn.emit(e)
}

// closeOutput sends what output is held and takes no more. Called with
// js.mu held.
func (j *bgJob) closeOutput() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return
	}
	if j.timer != nil {
		j.timer.Stop()
		j.timer = nil
	}
	if j.js.rn.observed {
		j.flushLocked()
	}
	j.closed = true
}

func (j *bgJob) outputBytes() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.out.total
}

// jobOutput keeps a job's output: its first bytes, and its latest in a
// ring; what falls between is dropped.
type jobOutput struct {
	head  []byte
	buf   []byte // the ring
	w     int    // where the ring is written next
	n     int    // bytes in the ring
	total int64  // bytes written
}

func (o *jobOutput) init(max int) {
	h := max / 4
	o.head = make([]byte, 0, h)
	o.buf = make([]byte, max-h)
}

func (o *jobOutput) write(s string) {
	o.total += int64(len(s))
	if room := cap(o.head) - len(o.head); room > 0 {
		k := min(room, len(s))
		o.head = append(o.head, s[:k]...)
		s = s[k:]
	}
	if len(s) >= len(o.buf) {
		s = s[len(s)-len(o.buf):]
		copy(o.buf, s)
		o.w, o.n = 0, len(o.buf)
		return
	}
	k := copy(o.buf[o.w:], s)
	copy(o.buf, s[k:])
	o.w = (o.w + len(s)) % len(o.buf)
	o.n = min(o.n+len(s), len(o.buf))
}

// read returns the output from offset on, with a marker where bytes were
// dropped, and the offset the next read starts from.
func (o *jobOutput) read(offset int64) (string, int64) {
	if offset >= o.total || o.buf == nil {
		return "", o.total
	}
	var b bytes.Buffer
	h := int64(len(o.head))
	if offset < h {
		b.Write(o.head[offset:])
		offset = h
	}
	ringStart := o.total - int64(o.n)
	if offset < ringStart {
		fmt.Fprintf(&b, "\n[... bytes %d to %d of the output were dropped: only the first %d and the last %d bytes are kept ...]\n",
			offset, ringStart, len(o.head), len(o.buf))
		offset = ringStart
	}
	skip := int(offset - ringStart)
	start := (o.w - o.n + len(o.buf)) % len(o.buf)
	ring := make([]byte, 0, o.n)
	if start+o.n <= len(o.buf) {
		ring = append(ring, o.buf[start:start+o.n]...)
	} else {
		ring = append(append(ring, o.buf[start:]...), o.buf[:o.w]...)
	}
	ring = ring[skip:]
	for len(ring) > 0 && !utf8.RuneStart(ring[0]) {
		ring = ring[1:] // begin at a rune
	}
	b.Write(ring)
	return strings.ToValidUTF8(b.String(), "\uFFFD"), o.total
}

// jobArgs reads the job tools' arguments.
type jobArgs struct {
	Job            string `json:"job"`
	Offset         int64  `json:"offset"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// jobTool is one of the job tools of a run.
type jobTool struct {
	js   *jobs
	name string
}

// maxJobWait bounds job_wait's timeout_seconds.
const maxJobWait = 600

func jobToolSpec(name string) ToolSpec {
	jobProp := `"job":{"type":"string","minLength":1,"description":"The job's ID, as job_1."}`
	ann := Annotations{ReadOnly: true, Idempotent: true}
	switch name {
	case JobOutputName:
		ann.Title = "Job output"
		return ToolSpec{Name: name, Annotations: ann,
			Description: "Read the output a background job has printed so far (all of it, or from an offset: give the next_offset a previous read returned, to read only what is new). Long output is cut in the middle; the job's first and latest output are kept.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` + jobProp + `,"offset":{"type":"integer","minimum":0,"description":"Read from this byte offset; 0 if not given."}},"required":["job"],"additionalProperties":false}`)}
	case JobWaitName:
		ann.Title = "Wait for job"
		return ToolSpec{Name: name, Annotations: ann, Timeout: (maxJobWait + 30) * time.Second,
			Description: "Wait until a background job ends, or until timeout_seconds pass, and say how it ended or that it still runs. Use it only when there is nothing else to do: a job's end is told to you anyway.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` + jobProp + `,"timeout_seconds":{"type":"integer","minimum":1,"maximum":` + strconv.Itoa(maxJobWait) + `,"description":"How long to wait at most; 30 if not given."}},"required":["job"],"additionalProperties":false}`)}
	case JobCancelName:
		return ToolSpec{Name: name, Annotations: Annotations{Title: "Cancel job", Destructive: true, Idempotent: true},
			Description: "Cancel a background job: its tool is stopped (a shell job's processes are killed) and its end is reported here.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` + jobProp + `},"required":["job"],"additionalProperties":false}`)}
	}
	ann.Title = "List jobs"
	return ToolSpec{Name: JobListName, Annotations: ann,
		Description: "List this run's background jobs: ID, tool, status, time and output size.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

// jobToolNames are the job tools, in the order offered.
var jobToolNames = [...]string{JobCancelName, JobListName, JobOutputName, JobWaitName}

// jobEntries are the job tools' compiled entries, made once.
var jobEntries = sync.OnceValues(func() ([]*entry, error) {
	ts := make([]Tool, len(jobToolNames))
	for i, n := range jobToolNames {
		ts[i] = &jobTool{name: n}
	}
	return compileTools(SourceBuiltin, loopSource, ts)
})

func (t *jobTool) Spec() ToolSpec { return jobToolSpec(t.name) }

// jobTool resolves a job tool for the run, if name is one and the run
// has jobs (or the registry has no tool of that name).
func (rn *runState) jobTool(ctx context.Context, name string) *entry {
	if !strings.HasPrefix(name, "job_") {
		return nil
	}
	js := rn.jobsNow()
	if js == nil {
		if rn.jobBase == 0 {
			return nil
		}
		js = rn.jobsFor() // the transcript names jobs of earlier runs
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if e := js.tools[name]; e != nil {
		return e
	}
	protos, err := jobEntries()
	if err != nil {
		return nil
	}
	for _, p := range protos {
		if p.spec.Name == name {
			e := *p
			e.tool = &jobTool{js: js, name: name}
			if js.tools == nil {
				js.tools = make(map[string]*entry, len(protos))
			}
			js.tools[name] = &e
			return &e
		}
	}
	return nil
}

// offerJobTools returns specs with the job tools added, but for a name
// a tool of the request has.
func offerJobTools(specs []ToolSpec) []ToolSpec {
	tools := make([]ToolSpec, 0, len(specs)+len(jobToolNames))
	tools = append(tools, specs...)
	for i, name := range jobToolNames {
		if !hasSpec(specs, name) {
			tools = append(tools, jobSpecs()[i])
		}
	}
	return tools
}

// jobSpecs are the job tools' specs, in jobToolNames' order, made once.
var jobSpecs = sync.OnceValue(func() []ToolSpec {
	out := make([]ToolSpec, len(jobToolNames))
	for i, n := range jobToolNames {
		out[i] = jobToolSpec(n)
	}
	return out
})

func hasSpec(specs []ToolSpec, name string) bool {
	for i := range specs {
		if specs[i].Name == name {
			return true
		}
	}
	return false
}

func (t *jobTool) Run(ctx context.Context, call *Call) (*ToolResult, error) {
	var in jobArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	js := t.js
	if t.name == JobListName {
		return textResult(js.list_()), nil
	}
	j := js.get(in.Job)
	if j == nil {
		return nil, Errorf(KindNotFound, "no job %q in this run: %s", in.Job, js.known())
	}
	switch t.name {
	case JobOutputName:
		return textResult(j.read(in.Offset)), nil
	case JobCancelName:
		info, was := js.stop(ctx, j)
		if !was {
			if info.Status == JobRunning || !info.Reported && info.Reason == errJobCanceled.Error() {
				return textResult(fmt.Sprintf("Job %s is being canceled by another call, which reports its end.", info.ID)), nil
			}
			if js.unqueue(j) {
				js.markReported(j)
				return textResult(js.endText(&info, "") + "\n(It had ended before it could be canceled.)"), nil
			}
			return textResult(fmt.Sprintf("Job %s had already ended (%s); nothing to cancel.", j.info.ID, info.Status)), nil
		}
		r := textResult(js.endText(&info, ""))
		r.Meta.Spent = js.takeSpent(j)
		return r, nil
	case JobWaitName:
		wait := 30 * time.Second
		if in.TimeoutSeconds > 0 {
			wait = time.Duration(min(in.TimeoutSeconds, maxJobWait)) * time.Second
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-j.done:
		case <-timer.C:
			return textResult(fmt.Sprintf("Job %s is still running after %v of waiting (%d bytes of output so far; %s reads it).",
				j.info.ID, wait, j.outputBytes(), JobOutputName)), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		js.mu.Lock()
		info := j.info
		js.mu.Unlock()
		if js.unqueue(j) {
			js.markReported(j)
			r := textResult(js.endText(&info, ""))
			r.Meta.Spent = js.takeSpent(j)
			return r, nil
		}
		return textResult(fmt.Sprintf("Job %s had already ended (%s), as you were told.", info.ID, info.Status)), nil
	}
	return nil, Errorf(KindNotFound, "unknown job tool %q", t.name)
}

func textResult(s string) *ToolResult {
	return &ToolResult{Status: StatusOK, Content: []Content{TextContent(s)}}
}

func (js *jobs) markReported(j *bgJob) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j.info.Reported = true
}

// takeSpent returns what the job spent for the result that reports its
// end to count, once.
func (js *jobs) takeSpent(j *bgJob) *Accounting {
	js.mu.Lock()
	defer js.mu.Unlock()
	if j.counted {
		return nil
	}
	j.counted = true
	return j.spent
}

// known lists the run's job IDs for an error message.
func (js *jobs) known() string {
	js.mu.Lock()
	defer js.mu.Unlock()
	if len(js.list) == 0 {
		return "it has none"
	}
	ids := make([]string, len(js.list))
	for i, j := range js.list {
		ids[i] = j.info.ID
	}
	return "its jobs are " + strings.Join(ids, ", ") + " (jobs of earlier runs ended with them)"
}

// list_ is job_list's text.
func (js *jobs) list_() string {
	js.mu.Lock()
	defer js.mu.Unlock()
	if len(js.list) == 0 {
		return "No background jobs."
	}
	var b strings.Builder
	now := time.Now()
	for _, j := range js.list {
		end := now
		if !j.info.Ended.IsZero() {
			end = j.info.Ended
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%d bytes of output", j.info.ID, j.info.Tool, j.info.Status,
			end.Sub(j.info.Started).Round(time.Second), j.outputBytes())
		j.mu.Lock()
		if p := j.progress; p != nil && j.info.Status == JobRunning {
			fmt.Fprintf(&b, "\t%s", progressText(p))
		}
		j.mu.Unlock()
		b.WriteString("\n")
	}
	return b.String()
}

func progressText(p *Progress) string {
	s := p.Message
	if p.Total > 0 {
		s = strings.TrimSpace(fmt.Sprintf("%s %g/%g", s, p.Done, p.Total))
	}
	return s
}

// read is job_output's text.
func (j *bgJob) read(offset int64) string {
	js := j.js
	js.mu.Lock()
	info := j.info
	js.mu.Unlock()
	j.mu.Lock()
	text, next := j.out.read(offset)
	var prog string
	if j.progress != nil {
		prog = progressText(j.progress)
	}
	j.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Job %s (%s): %s", info.ID, info.Tool, info.Status)
	if prog != "" && info.Status == JobRunning {
		fmt.Fprintf(&b, ", %s", prog)
	}
	fmt.Fprintf(&b, "; next_offset %d.\n", next)
	switch {
	case text != "":
		b.WriteString(text)
	case next == 0 && info.Result != nil:
		b.WriteString("It printed nothing while it ran. Its result:\n")
		b.WriteString(info.Result.Text())
	case next == 0:
		b.WriteString("(no output yet)")
	default:
		b.WriteString("(no new output)")
	}
	return b.String()
}

// LastJobNumber returns the highest number of the background jobs the
// results of msgs (and results, a paused turn's) say they started (job_3
// is 3), or 0: a run that goes on from msgs numbers its jobs after it.
// Drivers that run jobs themselves (the temporal package) use it to
// number them as Run does.
func LastJobNumber(msgs []Message, results ...*ToolResult) int {
	n := 0
	for i := range msgs {
		if r := msgs[i].Result; r != nil {
			results = append(results, r)
		}
	}
	for _, r := range results {
		if r == nil || r.Meta.Extra == nil {
			continue
		}
		id, _ := r.Meta.Extra["job"].(string)
		if k, err := strconv.Atoi(strings.TrimPrefix(id, "job_")); err == nil && k > n {
			n = k
		}
	}
	return n
}

// bgSchemas caches the schemas with the background argument added, by
// the schema they were made from; it stops growing at maxBGSchemas.
var bgSchemas sync.Map // string → bgSchema

const maxBGSchemas = 4096

var bgSchemaCount atomic.Int32

// bgSchema is a tool's schema as the model sees it when the tool may run
// in the background.
type bgSchema struct {
	schema   json.RawMessage // with the background argument
	declares bool            // the tool's own schema has the argument
}

// bgArgSchema is the background argument as the loop adds it.
const bgArgSchema = `{"type":"boolean","description":"Run this call as a background job: you get a job ID at once, go on with other work, and are told when the job ends."}`

// backgroundSchema returns schema with the background argument added,
// and whether schema declares it itself.
func backgroundSchema(schema json.RawMessage) bgSchema {
	if v, ok := bgSchemas.Load(string(schema)); ok {
		return v.(bgSchema)
	}
	s := bgSchema{schema: schema}
	var obj map[string]json.RawMessage
	if json.Unmarshal(schema, &obj) == nil {
		var props map[string]json.RawMessage
		if p, ok := obj["properties"]; ok {
			_ = json.Unmarshal(p, &props)
		}
		if _, ok := props[BackgroundArg]; ok {
			s.declares = true
		} else {
			if props == nil {
				props = make(map[string]json.RawMessage, 1)
			}
			props[BackgroundArg] = json.RawMessage(bgArgSchema)
			if pb, err := json.Marshal(props); err == nil {
				obj["properties"] = pb
				if b, err := json.Marshal(obj); err == nil {
					s.schema = b
				}
			}
		}
	}
	if bgSchemaCount.Add(1) <= maxBGSchemas {
		bgSchemas.Store(string(schema), s)
	}
	return s
}

// withBackground returns specs with the background argument in the
// schema of each tool that may run in the background.
func (rn *runState) withBackground(specs []ToolSpec) []ToolSpec {
	if !rn.jobsOn() {
		return specs
	}
	var out []ToolSpec
	for i := range specs {
		if !specs[i].Background {
			continue
		}
		if out == nil {
			out = append(make([]ToolSpec, 0, len(specs)), specs...)
		}
		schema := specs[i].InputSchema
		if len(schema) == 0 {
			schema = emptyObjectSchema
		}
		out[i].InputSchema = backgroundSchema(schema).schema
	}
	if out == nil {
		return specs
	}
	return out
}

// takeBackground reads the background argument of a call to a tool
// that may run in the background, and takes it out of the arguments
// unless the tool's schema declares it.
func (rn *runState) takeBackground(e *entry, args json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(args, []byte(`"`+BackgroundArg+`"`)) {
		return args, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return args, false // validation says what is wrong
	}
	v, ok := obj[BackgroundArg]
	if !ok {
		return args, false
	}
	bg := string(bytes.TrimSpace(v)) == "true"
	schema := e.spec.InputSchema
	if len(schema) == 0 {
		schema = emptyObjectSchema
	}
	if !backgroundSchema(schema).declares {
		delete(obj, BackgroundArg)
		if b, err := json.Marshal(obj); err == nil {
			args = b
		}
	}
	return args, bg && rn.jobsOn()
}

// jobRequest adds to a request what background jobs need: the
// background argument of the tools that allow it, and the job tools
// once the run has a job. The tools of the last request are reused
// while the tool list is the same slice (the registry's snapshot, or the
// turn controls' last pick) and the job tools' offer has not changed, so
// a turn pays nothing for them.
func (rn *runState) jobRequest(req *Request) {
	if !rn.jobsOn() {
		return
	}
	offer := rn.jobBase > 0 || rn.hasJobs()
	c := &rn.jobReq
	if c.out != nil && c.offer == offer && len(req.Tools) == len(c.in) && (len(c.in) == 0 || &req.Tools[0] == &c.in[0]) {
		req.Tools = c.out
		return
	}
	c.in, c.offer = req.Tools, offer
	req.Tools = rn.withBackground(req.Tools)
	if offer {
		req.Tools = offerJobTools(req.Tools)
	}
	c.out = req.Tools
}

// jobReq is what jobRequest keeps of the last request's tools.
type jobReq struct {
	in, out []ToolSpec
	offer   bool
}

// hasJobs reports whether the run has started a job.
func (rn *runState) hasJobs() bool {
	js := rn.jobsNow()
	if js == nil {
		return false
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	return len(js.list) > 0
}

// awaitJobs waits, when the model has given its final answer while jobs
// run and Limits.Jobs.WaitAtEnd is set, until there is something to
// deliver (a job's end, a message, an interrupt) or the run's context
// ends. It reports whether the run should go on to its next safe point.
func (rn *runState) awaitJobs(ctx context.Context) bool {
	js := rn.jobsNow()
	if js == nil || !js.lim.WaitAtEnd {
		return false
	}
	in := rn.steer.in
	wake := in.wakeCh()
	for {
		in.mu.Lock()
		pending := len(in.queue) > 0 || in.intr != nil
		in.mu.Unlock()
		if pending {
			return true
		}
		if !js.anyRunning() {
			return false
		}
		select {
		case <-ctx.Done():
			return true // the loop says why
		case <-js.changed:
		case <-wake:
		}
	}
}
