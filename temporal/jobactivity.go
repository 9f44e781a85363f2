package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	tsdk "go.temporal.io/sdk/temporal"

	"github.com/toolloop/toolloop"
)

// jobStart is what the call activity returns, beside the call's result,
// when the call started a background job: the call as its tool is to
// get it, after the guard and the pre-hooks.
type jobStart struct {
	Arguments   json.RawMessage      `json:"arguments"`
	Annotations toolloop.Annotations `json:"annotations,omitzero"`
	Source      toolloop.SourceKind  `json:"source,omitempty"`
	SourceName  string               `json:"source_name,omitempty"`
}

// jobInput is the job activity's argument.
type jobInput struct {
	RunID string            `json:"run_id"`
	Turn  int               `json:"turn"`
	Job   string            `json:"job"`
	Call  toolloop.ToolCall `json:"call"`
	Start jobStart          `json:"start"`
	// Retry: the tool is safe to repeat, so a second attempt (after a
	// lost worker) runs it again.
	Retry bool `json:"retry,omitempty"`
}

// jobOutput is the job activity's result: the tool's result, as the
// model is to be told it, and how the job ended.
type jobOutput struct {
	Result *toolloop.ToolResult `json:"result"`
	// Canceled: the activity was cancelled and the tool failed because
	// of it; TimedOut: the job ran past Limits.Jobs.MaxDuration.
	Canceled bool `json:"canceled,omitempty"`
	TimedOut bool `json:"timed_out,omitempty"`
	// OutputBytes counts the output the tool reported; Tail is its last
	// jobTail bytes.
	OutputBytes int64  `json:"output_bytes,omitempty"`
	Tail        string `json:"tail,omitempty"`
}

// jobTail bounds the output a job's heartbeat carries: its latest bytes.
const jobTail = 4 << 10

// errJobTimeout ends a job that ran past Limits.Jobs.MaxDuration.
var errJobTimeout = errors.New("the job ran past its time limit")

// captureStart is the middleware the call activity runs a call that
// starts a job with, in place of the loop's own: instead of running the
// tool it keeps the call, as the guard and the pre-hooks left it, and
// answers that the job started. The post-hooks and truncation then run on
// that answer, as they do in the core.
type captureStart struct {
	job string
	mu  sync.Mutex
	got *jobStart
}

func (c *captureStart) middleware(toolloop.Handler) toolloop.Handler {
	return func(_ context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
		c.mu.Lock()
		c.got = &jobStart{Arguments: call.Arguments, Annotations: call.Annotations, Source: call.Source, SourceName: call.SourceName}
		c.mu.Unlock()
		return toolloop.JobStartedResult(c.job, call.Name), nil
	}
}

func (c *captureStart) start() *jobStart {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got
}

// job is the job activity: the tool of a call that started a background
// job, run as the core runs a job (execute, post-hooks, truncation),
// under Limits.Jobs.MaxDuration. It heartbeats with the job's output size
// and tail, which job_output and Describe read, and reports job.started,
// job.output and job.finished to the loop's OnEvent.
func (ag *agent) job(ctx context.Context, in jobInput) (*jobOutput, error) {
	l, lim := ag.Loop, ag.limits()
	tc := in.Call
	if activity.GetInfo(ctx).Attempt > 1 && !in.Retry {
		return &jobOutput{Result: errorResult(tc, toolloop.KindCanceled, toolloop.InterruptedMessage)}, nil
	}
	var tool toolloop.Tool
	ok := false
	if l.Tools != nil {
		tool, ok = l.Tools.Lookup(ctx, tc.Name)
	}
	if !ok {
		return &jobOutput{Result: errorResult(tc, toolloop.KindNotFound, fmt.Sprintf("tool %s is no longer available: the job did not run", tc.Name))}, nil
	}
	rep := &jobReporter{ag: ag, in: &in, ctx: ctx, beat: beat{max: jobTail, hb: heartbeat{CallID: tc.ID, Turn: in.Turn, Job: in.Job}}}
	call := &toolloop.Call{
		ID: tc.ID, Name: tc.Name, Arguments: in.Start.Arguments, Annotations: in.Start.Annotations,
		Source: in.Start.Source, SourceName: in.Start.SourceName, RunID: in.RunID, Turn: in.Turn,
		Reporter: rep, MaxOutputBytes: max(lim.MaxOutputBytes, 0), Job: in.Job,
	}
	started := time.Now()
	info := toolloop.Job{ID: in.Job, CallID: tc.ID, Tool: tc.Name, Turn: in.Turn, Status: toolloop.JobRunning, Started: started}
	rep.event(toolloop.Event{Type: toolloop.EventJobStarted, Job: &info})
	activity.RecordHeartbeat(ctx, rep.snapshot())
	stop := keepAlive(ctx, ag.heartbeatEvery(), &rep.beat)
	tctx, cancel := context.WithTimeoutCause(ctx, lim.Jobs.MaxDuration, errJobTimeout)
	res, stack, err := runJobTool(tctx, l.Hooks.Middleware, tool, call)
	stop()
	if err != nil {
		var ps interface{ PanicStack() string }
		if errors.As(err, &ps) {
			stack = ps.PanicStack()
		}
		res = toolloop.ErrorResult(err)
	} else if res == nil {
		res = &toolloop.ToolResult{Status: toolloop.StatusOK}
	}
	r := *res // the tool may hold res: work on a copy
	r.Content = r.Content[:len(r.Content):len(r.Content)]
	if b := lim.MaxOutputBytes; b > 0 && contentBytes(r.Content) > b {
		r.Meta.Bytes = max(r.Meta.Bytes, contentBytes(r.Content))
		r.Content, _ = toolloop.TruncateContent(r.Content, b)
		r.Meta.Truncated = true
	}
	out := &jobOutput{}
	if tctx.Err() != nil && (err != nil || r.Status == toolloop.StatusError || r.Error != nil) {
		if !errors.Is(context.Cause(tctx), errJobTimeout) && !tsdk.IsCanceledError(context.Cause(ctx)) {
			// Not the run but this worker stopped the job (it is shutting
			// down): not a result. A tool safe to repeat runs again.
			cancel()
			return nil, tsdk.NewApplicationErrorWithOptions("the worker stopped while the job ran",
				errTypeWorkerStopped, tsdk.ApplicationErrorOptions{})
		}
		// The job's context ended and the tool failed because of it: say
		// what ended it. The workflow adds why it was canceled.
		if errors.Is(context.Cause(tctx), errJobTimeout) {
			r.Error = toolloop.Errorf(toolloop.KindTimeout, "job %s ran past its time limit of %v and was canceled", in.Job, lim.Jobs.MaxDuration)
			out.TimedOut = true
		} else {
			r.Error = toolloop.Errorf(toolloop.KindCanceled, "job %s was canceled", in.Job)
			out.Canceled = true
		}
		if err != nil { // the tool's own text is the context's error: replace it
			r.Content = []toolloop.Content{toolloop.TextContent(r.Error.Message)}
		}
		r.Status = toolloop.StatusError
	}
	cancel()
	r2 := ag.jobPostHooks(ctx, call, &r)
	normalize(r2)
	if b := lim.MaxResultBytes; b > 0 {
		var cut bool
		r2.Meta.Bytes = max(r2.Meta.Bytes, contentBytes(r2.Content))
		r2.Content, cut = toolloop.TruncateContent(r2.Content, b)
		r2.Meta.Truncated = r2.Meta.Truncated || cut
	}
	r2.CallID, r2.Name = tc.ID, tc.Name
	r2.Meta.Source, r2.Meta.SourceName = in.Start.Source, in.Start.SourceName
	r2.Meta.Duration = time.Since(started)
	out.Result = r2
	out.OutputBytes, out.Tail = rep.output()

	info.Status, info.Ended, info.Result, info.OutputBytes = toolloop.JobOK, time.Now(), r2, out.OutputBytes
	switch {
	case out.Canceled:
		info.Status = toolloop.JobCanceled
	case r2.Status == toolloop.StatusError:
		info.Status = toolloop.JobError
	}
	rep.event(toolloop.Event{Type: toolloop.EventJobFinished, Job: &info, Stack: stack})
	return out, nil
}

// runJobTool runs the tool inside the loop's middleware, surviving a
// panic.
func runJobTool(ctx context.Context, mw []toolloop.Middleware, tool toolloop.Tool, call *toolloop.Call) (res *toolloop.ToolResult, stack string, err error) {
	defer func() {
		if p := recover(); p != nil {
			stack = string(debug.Stack())
			res, err = errorResult(toolloop.ToolCall{ID: call.ID, Name: call.Name}, toolloop.KindPanic,
				fmt.Sprintf("tool %s panicked: %v", call.Name, p)), nil
		}
	}()
	h := toolloop.Handler(tool.Run)
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	res, err = h(ctx, call)
	return res, "", err
}

// jobPostHooks runs the post-tool-use hooks on the job's result, as the
// core runs them on a job's: a job's end reaches the model as a call's
// result would.
func (ag *agent) jobPostHooks(ctx context.Context, call *toolloop.Call, res *toolloop.ToolResult) *toolloop.ToolResult {
	for i, h := range ag.Loop.Hooks.PostToolUse {
		r, err := protectHook(func() (*toolloop.ToolResult, error) { return h(ctx, call, res) })
		if err != nil {
			var pe *hookPanic
			if errors.As(err, &pe) {
				return errorResult(toolloop.ToolCall{ID: call.ID, Name: call.Name}, toolloop.KindPanic,
					fmt.Sprintf("post-tool-use hook %d panicked: %v", i, pe.v))
			}
			return toolloop.ErrorResult(err)
		}
		if r != nil {
			c := *r
			res = &c
		}
	}
	return res
}

type hookPanic struct{ v any }

func (p *hookPanic) Error() string { return fmt.Sprintf("hook panicked: %v", p.v) }

func protectHook(f func() (*toolloop.ToolResult, error)) (r *toolloop.ToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, &hookPanic{p}
		}
	}()
	return f()
}

// normalize makes a result's status and error agree, as the core does.
func normalize(r *toolloop.ToolResult) {
	switch {
	case r.Error != nil:
		r.Status = toolloop.StatusError
	case r.Status == toolloop.StatusError:
		msg := r.Text()
		if msg == "" {
			msg = "the tool reported an error"
		}
		r.Error = &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: msg}
	case r.Status == "":
		r.Status = toolloop.StatusOK
	}
	if r.Status == toolloop.StatusError && len(r.Content) == 0 {
		r.Content = []toolloop.Content{toolloop.TextContent(r.Error.Message)}
	}
}

func contentBytes(cs []toolloop.Content) int {
	n := 0
	for i := range cs {
		n += len(cs[i].Text) + len(cs[i].JSON)
	}
	return n
}

// jobReporter takes what a job's tool reports: its progress and output
// go into the heartbeat, and out as events.
type jobReporter struct {
	ag *agent
	in *jobInput
	// ctx is the activity's, to heartbeat with.
	ctx context.Context
	beat
}

// ReportProgress implements toolloop.Reporter: the progress goes into
// the heartbeat.
func (r *jobReporter) ReportProgress(_ *toolloop.Call, p toolloop.Progress) {
	r.progress(&p)
	activity.RecordHeartbeat(r.ctx, r.snapshot())
}

// ReportPartial implements toolloop.Reporter: the output's size and tail
// go into the heartbeat, and the text out as a job.output event.
func (r *jobReporter) ReportPartial(_ *toolloop.Call, text string) {
	if text == "" {
		return
	}
	r.partial(text)
	activity.RecordHeartbeat(r.ctx, r.snapshot())
	r.event(toolloop.Event{Type: toolloop.EventJobOutput, Text: text})
}

// output is the output reported so far: its size and tail.
func (r *jobReporter) output() (int64, string) {
	hb := r.snapshot()
	return hb.OutputBytes, hb.Partial
}

// event reports a job event, placed in its run and call.
func (r *jobReporter) event(e toolloop.Event) {
	e.RunID, e.Turn, e.CallID, e.Tool = r.in.RunID, r.in.Turn, r.in.Call.ID, r.in.Call.Name
	e.Source, e.SourceName = r.in.Start.Source, r.in.Start.SourceName
	r.ag.emit(e)
}

// peekInput is the job-output activity's argument: the job activity to
// read the latest heartbeat of.
type peekInput struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	ActivityID string `json:"activity_id"`
}

// peekOutput is what the job-output activity read: the job activity's
// latest heartbeat, if Temporal had one.
type peekOutput struct {
	Found    bool      `json:"found,omitempty"`
	Attempt  int32     `json:"attempt,omitempty"`
	Beat     heartbeat `json:"beat"`
	Unknown  bool      `json:"unknown,omitempty"`
	Problems string    `json:"problems,omitempty"`
}

// peekJob is the job-output activity: it reads the heartbeat details of
// a running job's activity from Temporal (a workflow never sees them),
// with the default data converter, as Describe does.
func (ag *agent) peekJob(ctx context.Context, in peekInput) (*peekOutput, error) {
	c := activity.GetClient(ctx)
	if c == nil {
		return &peekOutput{Unknown: true, Problems: "no client to ask Temporal with"}, nil
	}
	desc, err := c.DescribeWorkflowExecution(ctx, in.WorkflowID, in.RunID)
	if err != nil {
		return nil, err
	}
	dc := converter.GetDefaultDataConverter()
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetActivityId() != in.ActivityID {
			continue
		}
		out := &peekOutput{Found: true, Attempt: pa.GetAttempt()}
		if pa.GetHeartbeatDetails() != nil && dc.FromPayloads(pa.GetHeartbeatDetails(), &out.Beat) != nil {
			out.Unknown, out.Problems = true, "its heartbeat could not be decoded"
		}
		return out, nil
	}
	return &peekOutput{}, nil
}

// maxJobWait bounds job_wait's timeout_seconds, as in the core.
const maxJobWait = 600

// runeStart trims s to begin at a character boundary.
func runeStart(s string) string {
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}
