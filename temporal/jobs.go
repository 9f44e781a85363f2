package temporal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
)

// jobsVersion marks the workflow code that runs background jobs (see
// toolloop.ToolSpec.Background): runs started before it replay as they
// ran, with every call in the foreground.
const (
	jobsChange  = "toolloop.jobs"
	jobsVersion = 1
)

// jobGrace is how long a canceled job gets to return, on top of the
// heartbeat timeout within which the cancellation reaches its activity.
const jobGrace = 5 * time.Second

// jobs is a run's background jobs: workflow state.
type jobs struct {
	lim  toolloop.JobLimits
	list []*wfJob // in the order started
	// next is the number of the last job ID given.
	next    int
	running int
	// ended: the run has ended its jobs, and starts no more.
	ended bool
}

// wfJob is one background job: a job activity the workflow does not wait
// for. A coroutine waits for it and ends the job, once.
type wfJob struct {
	info  toolloop.Job
	actID string
	// future is the job activity's; cancel cancels it.
	future workflow.Future
	cancel workflow.CancelFunc
	// done is ready once the job has ended.
	done    workflow.Future
	setDone workflow.Settable
	// claimed: job_cancel or the run's end reports the job's end, so it
	// is not queued. abandoned: it was reported ended before its activity
	// returned, whose result is then ignored.
	claimed, abandoned bool
	// reason says why the workflow canceled it.
	reason string
	// tail is the end of its output, once it ended.
	tail    string
	counted bool
}

// startJobs turns background jobs on for the run, if its code version and
// the loop's limits allow them.
func (rn *run) startJobs(ctx workflow.Context) {
	if workflow.GetVersion(ctx, jobsChange, workflow.DefaultVersion, jobsVersion) < jobsVersion || rn.steer == nil {
		return
	}
	lim := rn.ag.limits().Jobs
	if lim.Max <= 0 {
		return
	}
	rn.jobs = &jobs{lim: lim, next: toolloop.LastJobNumber(rn.res.Messages)}
}

// restore puts back the jobs of the run's earlier executions, all ended.
func (js *jobs) restore(rn *run, list []toolloop.Job, next int) {
	js.next = max(js.next, next)
	for _, info := range list {
		j := &wfJob{info: info, counted: true}
		j.done, j.setDone = workflow.NewFuture(rn.outer)
		j.setDone.Set(nil, nil)
		js.list = append(js.list, j)
	}
}

func (js *jobs) get(id string) *wfJob {
	for _, j := range js.list {
		if j.info.ID == id {
			return j
		}
	}
	return nil
}

// background reports whether the slot's call asks to run as a job: its
// tool allows it and its arguments set the background argument.
func (rn *run) background(s *slot) bool {
	if rn.jobs == nil || !s.policy.Background || !bytes.Contains(s.tc.Arguments, []byte(`"`+toolloop.BackgroundArg+`"`)) {
		return false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(s.tc.Arguments, &obj) != nil {
		return false
	}
	return string(bytes.TrimSpace(obj[toolloop.BackgroundArg])) == "true"
}

// reserve gives a call that asks to run in the background its job ID.
func (js *jobs) reserve() string {
	js.next++
	return fmt.Sprintf("job_%d", js.next)
}

// jobStarted starts the job of a call whose stages before the tool have
// run (the call activity returned st), without waiting for it, and
// returns the call's result: that the job started, or why it did not.
func (rn *run) jobStarted(s *slot, r *toolloop.ToolResult, st *jobStart) *toolloop.ToolResult {
	js, ag := rn.jobs, rn.ag
	switch {
	case js == nil || s.job == "":
		return errorResult(s.tc, toolloop.KindExecutionFailed, "not run: background jobs are not available")
	case js.ended || rn.steer.base.Err() != nil:
		return errorResult(s.tc, toolloop.KindCanceled, "not started: the run is ending")
	case js.running >= js.lim.Max:
		return errorResult(s.tc, toolloop.KindExecutionFailed, fmt.Sprintf(
			"not started: %d background jobs are running and at most %d run at once; wait for one to end (%s), cancel one (%s), or run this call without %s",
			js.running, js.lim.Max, toolloop.JobWaitName, toolloop.JobCancelName, toolloop.BackgroundArg))
	}
	j := &wfJob{info: toolloop.Job{ID: s.job, CallID: s.tc.ID, Tool: s.tc.Name, Turn: rn.turn, Status: toolloop.JobRunning,
		Started: workflow.Now(rn.outer)}}
	j.actID = fmt.Sprintf("turn-%d/%s/%s", rn.turn, s.tc.ID, s.job)
	// Jobs run under the run's context before interrupts: an interrupt
	// does not end them; the run's end, its cancellation and its
	// budget's deadline do.
	var jctx workflow.Context
	jctx, j.cancel = workflow.WithCancel(rn.steer.base)
	policy := &noRetry
	if s.policy.Retry {
		policy = ag.ToolRetry
	}
	actx := workflow.WithActivityOptions(jctx, workflow.ActivityOptions{
		ActivityID: j.actID,
		// The activity ends the job at MaxDuration itself; the margin
		// lets it report that.
		StartToCloseTimeout: js.lim.MaxDuration + time.Minute,
		HeartbeatTimeout:    ag.HeartbeatTimeout,
		RetryPolicy:         policy,
		WaitForCancellation: true,
		Summary:             fmt.Sprintf("background job %s: %s %s", s.job, s.tc.Name, s.tc.ID),
	})
	j.future = workflow.ExecuteActivity(actx, ag.jobActivity, jobInput{
		RunID: rn.res.RunID, Turn: rn.turn, Job: s.job, Call: s.tc, Start: *st, Retry: s.policy.Retry,
	})
	j.done, j.setDone = workflow.NewFuture(rn.outer)
	js.list = append(js.list, j)
	js.running++
	workflow.Go(rn.outer, func(gctx workflow.Context) {
		var out jobOutput
		err := j.future.Get(gctx, &out)
		rn.jobEnded(j, &out, err)
	})
	return r
}

// jobEnded ends a job whose activity returned, once: it records how the
// job ended and, unless something else reports the end, queues the
// message that tells the model, to be delivered at the next safe point.
func (rn *run) jobEnded(j *wfJob, out *jobOutput, err error) {
	if j.abandoned {
		return // reported ended already
	}
	tc := toolloop.ToolCall{ID: j.info.CallID, Name: j.info.Tool}
	status, reason, r := toolloop.JobOK, "", out.Result
	switch {
	case err == nil && r != nil:
		switch {
		case out.Canceled:
			status, reason = toolloop.JobCanceled, rn.jobReason(j)
			if e := r.Error; e != nil && e.Kind == toolloop.KindCanceled {
				old := e.Message
				r.Error = &toolloop.ToolError{Kind: e.Kind, Message: old + ": " + reason}
				if len(r.Content) == 1 && r.Content[0].Text == old {
					r.Content = []toolloop.Content{toolloop.TextContent(r.Error.Message)}
				}
			}
		case r.Status == toolloop.StatusError:
			status = toolloop.JobError
		}
	case j.reason != "" || rn.steer.base.Err() != nil:
		// Cancelled before it could answer.
		status, reason = toolloop.JobCanceled, rn.jobReason(j)
		r = errorResult(tc, toolloop.KindCanceled, fmt.Sprintf("job %s was canceled: %s", j.info.ID, reason))
	default:
		// Its worker was lost, and it was not run again.
		workflow.GetLogger(rn.outer).Warn("toolloop: a background job was lost", "job", j.info.ID, "error", err)
		status, r = toolloop.JobError, errorResult(tc, toolloop.KindCanceled, toolloop.InterruptedMessage)
	}
	r.CallID, r.Name = tc.ID, tc.Name
	j.tail = out.Tail
	rn.finishJob(j, status, reason, r, out.OutputBytes)
	if !j.claimed {
		rn.queueJobEnd(j, "")
	}
}

// finishJob records a job's end and wakes whoever waits for it.
func (rn *run) finishJob(j *wfJob, status toolloop.JobStatus, reason string, r *toolloop.ToolResult, outputBytes int64) {
	j.info.Status, j.info.Reason, j.info.Result = status, reason, r
	j.info.Ended = workflow.Now(rn.outer)
	j.info.OutputBytes = outputBytes
	rn.jobs.running--
	j.setDone.Set(nil, nil)
}

// jobReason says why a canceled job was canceled.
func (rn *run) jobReason(j *wfJob) string {
	switch {
	case j.reason != "":
		return j.reason
	case rn.expired() != nil:
		return "the run reached its budget: " + rn.expired().Error()
	case rn.outer.Err() != nil:
		return "the run was canceled"
	}
	return "the run ended"
}

// queueJobEnd queues the message telling the model the job ended.
func (rn *run) queueJobEnd(j *wfJob, when string) {
	rn.steer.queue = append(rn.steer.queue, queued{Job: j.info.ID, QueuedMessage: toolloop.QueuedMessage{
		Origin: toolloop.OriginJob, Message: toolloop.UserMessage(j.info.EndMessage(when, rn.jobs.lim.EndBytes)),
	}})
}

// unqueue takes j's end message out of the inbox, if it is still there,
// and reports whether it was.
func (rn *run) unqueue(j *wfJob) bool {
	s := rn.steer
	for i, m := range s.queue {
		if m.Job == j.info.ID {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return true
		}
	}
	return false
}

// jobDelivered marks a job's end as told to the model, and counts what
// it spent.
func (rn *run) jobDelivered(id string) {
	if rn.jobs == nil {
		return
	}
	if j := rn.jobs.get(id); j != nil {
		j.info.Reported = true
		rn.countJob(j)
	}
}

// countJob adds what an agent run as a job spent to the run's
// accounting, once.
func (rn *run) countJob(j *wfJob) *toolloop.Accounting {
	if j.counted || j.info.Result == nil {
		return nil
	}
	j.counted = true
	if s := j.info.Result.Meta.Spent; s != nil {
		rn.res.AddSpent(s)
		return s
	}
	return nil
}

// anyRunning reports whether a job is running.
func (js *jobs) anyRunning() bool { return js != nil && js.running > 0 }

// stopJobs cancels the running jobs and waits for them to end, for at
// most the grace: each that has not ended by then is reported ended, and
// what its activity returns later is ignored. why says why they were
// canceled. With tell, their ends are queued, saying when; without, they
// are not told to the model: the run ends, and RunResult.Jobs says how
// each ended.
func (rn *run) stopJobs(why, when string, tell bool) {
	js := rn.jobs
	var live []*wfJob
	for _, j := range js.list {
		if j.info.Status == toolloop.JobRunning {
			j.claimed = true
			if j.reason == "" {
				j.reason = why
			}
			j.cancel()
			live = append(live, j)
		}
	}
	if len(live) == 0 {
		return
	}
	// The run's own context may be done: wait on one that is not.
	ctx, cancel := workflow.NewDisconnectedContext(rn.outer)
	defer cancel()
	timer := workflow.NewTimer(ctx, rn.jobGrace())
	expired := false
	for _, j := range live {
		for !expired && !j.done.IsReady() {
			sel := workflow.NewSelector(ctx)
			sel.AddFuture(j.done, func(workflow.Future) {})
			sel.AddFuture(timer, func(workflow.Future) { expired = true })
			sel.Select(ctx)
		}
		if !j.done.IsReady() {
			rn.abandon(j)
		}
		if tell {
			rn.queueJobEnd(j, when)
		}
	}
}

// jobGrace is how long a canceled job gets to end: its cancellation
// reaches it at its next heartbeat.
func (rn *run) jobGrace() time.Duration { return rn.ag.HeartbeatTimeout + jobGrace }

// abandon reports a canceled job ended although its activity has not
// returned: what it returns later is ignored.
func (rn *run) abandon(j *wfJob) {
	reason := fmt.Sprintf("%s; the tool did not stop within %v of being canceled, and what it does now is ignored", rn.jobReason(j), rn.jobGrace())
	j.abandoned = true
	r := errorResult(toolloop.ToolCall{ID: j.info.CallID, Name: j.info.Tool}, toolloop.KindCanceled,
		fmt.Sprintf("job %s was canceled: %s", j.info.ID, reason))
	rn.finishJob(j, toolloop.JobCanceled, reason, r, j.info.OutputBytes)
}

// endJobs ends the jobs still running when the run ends, and lists the
// run's jobs in its result, counting what they spent.
func (rn *run) endJobs() {
	js := rn.jobs
	if js == nil || js.ended {
		return
	}
	js.ended = true
	rn.stopJobs("the run ended", "", false)
	rn.res.Jobs = make([]toolloop.Job, 0, len(js.list))
	for _, j := range js.list {
		rn.countJob(j)
		rn.res.Jobs = append(rn.res.Jobs, j.info)
	}
}

// carryJobs ends the jobs still running before the run continues as new,
// queueing their ends to be told in the next execution, and returns the
// jobs to carry over.
func (rn *run) carryJobs() []toolloop.Job {
	js := rn.jobs
	if js == nil {
		return nil
	}
	rn.stopJobs("the run continued as new", " when the run continued as new", true)
	js.ended = true
	out := make([]toolloop.Job, 0, len(js.list))
	for _, j := range js.list {
		rn.countJob(j)
		out = append(out, j.info)
	}
	return out
}

// awaitJobs waits, when the model has given its final answer while jobs
// run and Limits.Jobs.WaitAtEnd is set, until there is something to
// deliver (a job's end, a message, an interrupt), as the core does. It
// reports whether the run should go on to its next safe point.
func (rn *run) awaitJobs() bool {
	js, s := rn.jobs, rn.steer
	if js == nil || !js.lim.WaitAtEnd {
		return false
	}
	for {
		rn.receive()
		if len(s.queue) > 0 || s.intr != nil {
			return true
		}
		if !js.anyRunning() || rn.ctx.Err() != nil {
			return rn.ctx.Err() != nil // the loop says why
		}
		sel := workflow.NewSelector(rn.ctx)
		for _, j := range js.list {
			if j.info.Status == toolloop.JobRunning {
				sel.AddFuture(j.done, func(workflow.Future) {})
			}
		}
		sel.AddReceive(s.messages, func(workflow.ReceiveChannel, bool) { rn.receive() })
		sel.AddReceive(s.interrupts, func(workflow.ReceiveChannel, bool) { rn.receiveInterrupts() })
		sel.AddReceive(rn.ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(rn.ctx)
	}
}

// infos lists the run's jobs, for StatusQuery.
func (js *jobs) infos() []toolloop.Job {
	if js == nil || len(js.list) == 0 {
		return nil
	}
	out := make([]toolloop.Job, len(js.list))
	for i, j := range js.list {
		out[i] = j.info
	}
	return out
}

// jobTool reports whether the slot's call is to one of the job tools,
// which the workflow answers itself once the run has a job.
func (rn *run) jobTool(s *slot) bool {
	if rn.jobs == nil || len(rn.jobs.list) == 0 {
		return false
	}
	switch s.tc.Name {
	case toolloop.JobOutputName, toolloop.JobWaitName, toolloop.JobCancelName, toolloop.JobListName:
		return true
	}
	return false
}

// jobArgs are the job tools' arguments.
type jobArgs struct {
	Job            string `json:"job"`
	Offset         int64  `json:"offset"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// startJobTool runs a call to a job tool in a coroutine of the workflow;
// the slot's future is ready with its result when it is done.
func (rn *run) startJobTool(s *slot) {
	f, set := workflow.NewFuture(rn.ctx)
	s.future, s.state = f, CallRunning
	workflow.Go(rn.ctx, func(ctx workflow.Context) {
		r := rn.runJobTool(ctx, s.tc)
		r.CallID, r.Name = s.tc.ID, s.tc.Name
		if r.Status == "" {
			r.Status = toolloop.StatusOK
		}
		r.Meta.Source, r.Meta.SourceName = toolloop.SourceBuiltin, "loop"
		set.Set(callOutput{Result: r}, nil)
	})
}

// runJobTool answers a call to a job tool as the core's job tools do.
func (rn *run) runJobTool(ctx workflow.Context, tc toolloop.ToolCall) *toolloop.ToolResult {
	js := rn.jobs
	var in jobArgs
	if len(tc.Arguments) > 0 {
		if err := json.Unmarshal(tc.Arguments, &in); err != nil {
			return errorResult(tc, toolloop.KindInvalidArgs, fmt.Sprintf("decoding arguments of %s: %v", tc.Name, err))
		}
	}
	if tc.Name == toolloop.JobListName {
		return toolloop.TextResult(rn.jobList())
	}
	if in.Job == "" {
		return errorResult(tc, toolloop.KindInvalidArgs, fmt.Sprintf("invalid arguments for %s: missing required property \"job\"", tc.Name))
	}
	j := js.get(in.Job)
	if j == nil {
		ids := make([]string, len(js.list))
		for i, j := range js.list {
			ids[i] = j.info.ID
		}
		return errorResult(tc, toolloop.KindNotFound, fmt.Sprintf("no job %q in this run: its jobs are %s", in.Job, strings.Join(ids, ", ")))
	}
	switch tc.Name {
	case toolloop.JobOutputName:
		return toolloop.TextResult(rn.jobRead(ctx, j, in.Offset))
	case toolloop.JobCancelName:
		if j.info.Status != toolloop.JobRunning {
			if rn.unqueue(j) {
				j.info.Reported = true
				r := toolloop.TextResult(j.info.EndMessage("", js.lim.EndBytes) + "\n(It had ended before it could be canceled.)")
				r.Meta.Spent = rn.takeSpent(j)
				return r
			}
			return toolloop.TextResult(fmt.Sprintf("Job %s had already ended (%s); nothing to cancel.", j.info.ID, j.info.Status))
		}
		j.claimed, j.reason = true, "canceled by the model (job_cancel)"
		j.cancel()
		wctx, cancel := workflow.WithCancel(ctx)
		defer cancel()
		sel := workflow.NewSelector(wctx)
		sel.AddFuture(j.done, func(workflow.Future) {})
		sel.AddFuture(workflow.NewTimer(wctx, rn.jobGrace()), func(workflow.Future) {})
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(wctx)
		if !j.done.IsReady() {
			rn.abandon(j)
		}
		j.info.Reported = true
		r := toolloop.TextResult(j.info.EndMessage("", js.lim.EndBytes))
		r.Meta.Spent = rn.takeSpent(j)
		return r
	case toolloop.JobWaitName:
		wait := 30 * time.Second
		if in.TimeoutSeconds > 0 {
			wait = time.Duration(min(in.TimeoutSeconds, maxJobWait)) * time.Second
		}
		if !j.done.IsReady() {
			wctx, cancel := workflow.WithCancel(ctx)
			defer cancel()
			timedOut := false
			sel := workflow.NewSelector(wctx)
			sel.AddFuture(j.done, func(workflow.Future) {})
			sel.AddFuture(workflow.NewTimer(wctx, wait), func(workflow.Future) { timedOut = true })
			sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
			sel.Select(wctx)
			if ctx.Err() != nil {
				return errorResult(tc, toolloop.KindCanceled, "tool job_wait was canceled: the run was stopped while it waited")
			}
			if timedOut && !j.done.IsReady() {
				return toolloop.TextResult(fmt.Sprintf("Job %s is still running after %v of waiting (%s reads its output so far).",
					j.info.ID, wait, toolloop.JobOutputName))
			}
		}
		if rn.unqueue(j) {
			j.info.Reported = true
			r := toolloop.TextResult(j.info.EndMessage("", js.lim.EndBytes))
			r.Meta.Spent = rn.takeSpent(j)
			return r
		}
		return toolloop.TextResult(fmt.Sprintf("Job %s had already ended (%s), as you were told.", j.info.ID, j.info.Status))
	}
	return errorResult(tc, toolloop.KindNotFound, fmt.Sprintf("unknown job tool %q", tc.Name))
}

// takeSpent returns what the job spent for the result that reports its
// end to count (the workflow adds a result's Spent to the run's), once.
func (rn *run) takeSpent(j *wfJob) *toolloop.Accounting {
	if j.counted || j.info.Result == nil {
		return nil
	}
	j.counted = true
	return j.info.Result.Meta.Spent
}

// jobList is job_list's text.
func (rn *run) jobList() string {
	js := rn.jobs
	if len(js.list) == 0 {
		return "No background jobs."
	}
	var b strings.Builder
	now := workflow.Now(rn.outer)
	for _, j := range js.list {
		end := now
		if !j.info.Ended.IsZero() {
			end = j.info.Ended
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s", j.info.ID, j.info.Tool, j.info.Status, end.Sub(j.info.Started).Round(time.Second))
		if j.info.Status != toolloop.JobRunning {
			fmt.Fprintf(&b, "\t%d bytes of output", j.info.OutputBytes)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// jobRead is job_output's text: for a running job, the latest heartbeat
// of its activity, which an activity reads from Temporal; for one that
// ended, what its activity returned.
func (rn *run) jobRead(ctx workflow.Context, j *wfJob, offset int64) string {
	info := j.info
	total, tail, prog := info.OutputBytes, j.tail, ""
	if info.Status == toolloop.JobRunning {
		wi := workflow.GetInfo(ctx).WorkflowExecution
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         rn.ag.ToolRetry,
			Summary:             "job_output " + info.ID,
		})
		var peek peekOutput
		err := workflow.ExecuteActivity(actx, rn.ag.peekActivity, peekInput{WorkflowID: wi.ID, RunID: wi.RunID, ActivityID: j.actID}).Get(ctx, &peek)
		switch {
		case err != nil || peek.Unknown:
			return fmt.Sprintf("Job %s (%s): running; its output so far could not be read. Its end will be told to you.", info.ID, info.Tool)
		case j.info.Status != toolloop.JobRunning:
			return rn.jobRead(ctx, j, offset) // it ended meanwhile
		}
		total, tail = peek.Beat.OutputBytes, peek.Beat.Partial
		if p := peek.Beat.Progress; p != nil {
			prog = p.Message
			if p.Total > 0 {
				prog = strings.TrimSpace(fmt.Sprintf("%s %g/%g", prog, p.Done, p.Total))
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Job %s (%s): %s", info.ID, info.Tool, info.Status)
	if prog != "" {
		fmt.Fprintf(&b, ", %s", prog)
	}
	fmt.Fprintf(&b, "; next_offset %d.\n", total)
	start := total - int64(len(tail)) // where the kept tail starts
	switch {
	case offset >= total && total > 0:
		b.WriteString("(no new output)")
	case total > 0 && tail == "":
		fmt.Fprintf(&b, "(%d bytes of output; none of it is kept here)", total)
	case total > 0:
		if offset > start {
			tail = runeStart(tail[offset-start:])
		} else if offset < start {
			fmt.Fprintf(&b, "[... bytes %d to %d of the output are not kept here: only the last %d bytes are ...]\n", offset, start, len(tail))
		}
		b.WriteString(tail)
	case info.Result != nil:
		b.WriteString("It printed nothing while it ran. Its result:\n")
		b.WriteString(info.Result.Text())
	default:
		b.WriteString("(no output yet)")
	}
	return b.String()
}
