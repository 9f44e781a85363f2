package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	tsdk "go.temporal.io/sdk/temporal"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
)

// turnInput is the model activity's argument.
type turnInput struct {
	RunID    string             `json:"run_id"`
	Turn     int                `json:"turn"`
	Messages []toolloop.Message `json:"messages"`
	// ToolChoice is none on a wrap-up turn.
	ToolChoice toolloop.ToolChoice `json:"tool_choice,omitzero"`
}

// turnOutput is the model activity's result: the model's response, as
// the model gave it (the workflow stamps it), and what the workflow must
// know to schedule each of its calls.
type turnOutput struct {
	Response *toolloop.Response `json:"response"`
	Calls    []callPolicy       `json:"calls,omitempty"`
	// Cost is what the response's usage cost, from the loop's model table
	// on the worker; Unpriced says the model has no price there. Pricing
	// here, not in the workflow, records the price in the history, so a
	// changed table never changes a replay.
	Cost     float64 `json:"cost_usd,omitempty"`
	Unpriced bool    `json:"unpriced,omitempty"`
	// SpecTokens estimates the tool specs of the request, for the token
	// count the context managers see.
	SpecTokens int `json:"spec_tokens,omitempty"`
}

// callPolicy is how the workflow schedules one call, from the spec of the
// tool its name resolves to.
type callPolicy struct {
	Retry     bool          `json:"retry,omitempty"`
	Exclusive bool          `json:"exclusive,omitempty"`
	Timeout   time.Duration `json:"timeout,omitempty"`
	// Background: the tool may run as a background job.
	Background bool `json:"background,omitempty"`
}

// callInput is the call activity's argument.
type callInput struct {
	RunID    string             `json:"run_id"`
	Turn     int                `json:"turn"`
	Call     toolloop.ToolCall  `json:"call"`
	Decision *toolloop.Approval `json:"decision,omitempty"`
	// Resume, on a call to an agent whose run paused (see
	// toolloop.AgentTool), is the call's pending state, and Decisions
	// the decisions for the calls it waits on: the activity resumes the
	// agent's run with toolloop.AgentLoop.ResumeCall.
	Resume    *toolloop.PendingCall        `json:"resume,omitempty"`
	Decisions map[string]toolloop.Approval `json:"decisions,omitempty"`
	// Attempts is the retry policy's MaximumAttempts: on that attempt the
	// activity returns the tool's failure as its result instead of failing.
	// 0 means unlimited.
	Attempts int32 `json:"attempts"`
	// Job, on a call that asked to run in the background, is the ID of
	// the job it starts: the activity runs the stages before the tool
	// and answers that the job started, and the workflow starts the job
	// activity.
	Job string `json:"job,omitempty"`
}

// callOutput is the call activity's result: Result or Pending is set.
// Start, with a Result, says the call started a background job.
type callOutput struct {
	Result  *toolloop.ToolResult  `json:"result,omitempty"`
	Pending *toolloop.PendingCall `json:"pending,omitempty"`
	Start   *jobStart             `json:"start,omitempty"`
}

// model is the model activity: one turn, as AgentLoop.Run takes it. It
// fetches the tool specs (the workflow never touches the registry), asks
// the model, and reports model.request, model.delta,
// model.reasoning_delta and model.response
// events to the loop's OnEvent.
func (ag *agent) model(ctx context.Context, in turnInput) (*turnOutput, error) {
	l := ag.Loop
	hb := &beat{hb: heartbeat{Turn: in.Turn}}
	stop := keepAlive(ctx, ag.heartbeatEvery(), hb)
	defer stop()
	// The request Run would send: the tool filter, deferred tools and
	// tool search, the loop's tool choice, the before-model hooks.
	mt, err := l.ModelRequest(ctx, in.RunID, in.Turn, in.Messages, in.ToolChoice)
	if err != nil {
		return nil, tsdk.NewApplicationErrorWithOptions(err.Error(), errTypeModelFailed, tsdk.ApplicationErrorOptions{NonRetryable: true})
	}
	req := mt.Request
	if l.OnEvent != nil { // model wrappers (Retry, Fallback) report here
		ctx = toolloop.WithEventSink(ctx, func(e toolloop.Event) {
			e.RunID, e.Turn = in.RunID, in.Turn
			ag.emit(e)
		})
	}
	specTokens := estimateSpecs(req.Tools)
	ag.emit(toolloop.Event{Type: toolloop.EventModelRequest, RunID: in.RunID, Turn: in.Turn})
	var streamed strings.Builder
	resp, err := generate(ctx, l, req, func(typ toolloop.EventType, text string) {
		ag.emit(toolloop.Event{Type: typ, RunID: in.RunID, Turn: in.Turn, Text: text})
		if typ == toolloop.EventModelDelta {
			streamed.WriteString(text)
			hb.partial(text)
		}
		activity.RecordHeartbeat(ctx, hb.snapshot())
	})
	if err != nil && ctx.Err() != nil && tsdk.IsCanceledError(context.Cause(ctx)) {
		// The run cancelled the turn (an interrupt, a cancellation): the
		// text streamed so far goes back as the cancellation's details,
		// for an interrupt to keep.
		return nil, tsdk.NewCanceledError(streamed.String())
	}
	if err != nil {
		if errors.Is(err, providers.ErrContextLength) {
			// Not retried here: the workflow asks the context managers to
			// free room, then takes the turn again.
			return nil, tsdk.NewApplicationErrorWithOptions(err.Error(), errTypeContextLength, tsdk.ApplicationErrorOptions{
				NonRetryable: true, Details: []any{specTokens}})
		}
		var p *modelPanic
		retry := !errors.As(err, &p) && !errors.Is(err, providers.ErrAuth)
		return nil, tsdk.NewApplicationErrorWithOptions(err.Error(), errTypeModelFailed, tsdk.ApplicationErrorOptions{NonRetryable: !retry})
	}
	if resp, err = l.AfterModel(ctx, mt, resp); err != nil {
		return nil, tsdk.NewApplicationErrorWithOptions(err.Error(), errTypeModelFailed, tsdk.ApplicationErrorOptions{NonRetryable: true})
	}
	msg := toolloop.AssistantMessage(in.Turn, resp)
	if l.OnEvent != nil {
		ag.emit(toolloop.Event{Type: toolloop.EventModelResponse, RunID: in.RunID, Turn: in.Turn,
			Response: &toolloop.Response{Message: msg, StopReason: msg.StopReason, Usage: resp.Usage, Model: resp.Model}})
	}
	out := &turnOutput{Response: resp, Calls: make([]callPolicy, len(msg.ToolCalls)), SpecTokens: specTokens}
	out.Cost, out.Unpriced = ag.price(resp.Model, resp.Usage)
	for i, tc := range msg.ToolCalls {
		out.Calls[i] = ag.policy(ctx, tc.Name)
	}
	return out, nil
}

// policy describes how to schedule a call to the named tool. A name that
// resolves to nothing gets the defaults: its call fails at once with
// not_found, and is not retried.
func (ag *agent) policy(ctx context.Context, name string) callPolicy {
	if ag.Loop.Tools == nil {
		return callPolicy{}
	}
	t, ok := ag.Loop.Tools.Lookup(ctx, name)
	if !ok {
		return callPolicy{}
	}
	spec := t.Spec()
	return callPolicy{Retry: retryable(spec.Annotations), Exclusive: spec.Exclusive, Timeout: spec.Timeout, Background: spec.Background}
}

// modelPanic is a panic in the model, which no retry will cure.
type modelPanic struct{ v any }

func (p *modelPanic) Error() string { return fmt.Sprintf("model panicked: %v", p.v) }

// generate asks the model for one turn, streaming if it can, as
// AgentLoop.Run does.
func generate(ctx context.Context, l *toolloop.AgentLoop, req *toolloop.Request, delta func(toolloop.EventType, string)) (resp *toolloop.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, &modelPanic{p}
		}
		if err == nil && resp == nil {
			err = errors.New("model returned no response")
		}
	}()
	s, ok := l.Model.(toolloop.Streamer)
	if !ok {
		return l.Model.Generate(ctx, req)
	}
	for ch, err := range s.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ch.Reasoning != "" {
			delta(toolloop.EventModelReasoningDelta, ch.Reasoning)
		}
		if ch.Text != "" {
			delta(toolloop.EventModelDelta, ch.Text)
		}
		if ch.Response != nil {
			resp = ch.Response
		}
	}
	if resp == nil {
		return nil, errors.New("model stream ended without a response")
	}
	return resp, nil
}

// call is the call activity: one tool call through the whole pipeline,
// with AgentLoop.RunCall. Progress and partial output go out as heartbeat
// details as well as events.
//
// A failure the tool may recover from (execution_failed or timeout) of a
// tool that is safe to repeat fails the activity, so that Temporal retries
// it, until the last attempt, which returns the failed result. A tool that
// is not safe to repeat never runs on a second attempt (which only a lost
// worker can cause): that attempt returns an interrupted result instead.
func (ag *agent) call(ctx context.Context, in callInput) (*callOutput, error) {
	info := activity.GetInfo(ctx)
	tc := in.Call
	policy := ag.policy(ctx, tc.Name)
	if info.Attempt > 1 && !policy.Retry {
		return &callOutput{Result: errorResult(tc, toolloop.KindCanceled, toolloop.InterruptedMessage)}, nil
	}
	hb := &beat{hb: heartbeat{CallID: tc.ID, Turn: in.Turn}}
	loop := *ag.Loop
	user := loop.OnEvent
	loop.OnEvent = func(e toolloop.Event) {
		// Deferred, so that it happens even if the user's OnEvent panics
		// (RunCall recovers and logs that panic).
		defer func() {
			switch e.Type {
			case toolloop.EventProgress:
				hb.progress(e.Progress)
			case toolloop.EventPartialResult:
				hb.partial(e.Text)
			default:
				return
			}
			activity.RecordHeartbeat(ctx, hb.snapshot())
		}()
		if user != nil {
			ag.eventMu.Lock()
			defer ag.eventMu.Unlock()
			user(e)
		}
	}
	var capture *captureStart
	if in.Job != "" {
		// The stages before the tool run here; the tool runs in the job
		// activity, which the workflow starts once this one returns.
		capture = &captureStart{job: in.Job}
		loop.Hooks.Middleware = []toolloop.Middleware{capture.middleware}
	}
	activity.RecordHeartbeat(ctx, hb.snapshot())
	stop := keepAlive(ctx, ag.heartbeatEvery(), hb)
	var res *toolloop.ToolResult
	var pending *toolloop.PendingCall
	if in.Resume != nil {
		res, pending = loop.ResumeCall(ctx, in.RunID, in.Turn, tc, in.Resume, in.Decisions)
	} else {
		res, pending = loop.RunCall(ctx, in.RunID, in.Turn, tc, in.Decision)
	}
	stop()
	if pending != nil {
		return &callOutput{Pending: pending}, nil
	}
	if capture != nil {
		if st := capture.start(); st != nil {
			return &callOutput{Result: res, Start: st}, nil
		}
	}
	if ctx.Err() != nil && !tsdk.IsCanceledError(context.Cause(ctx)) && res.Error != nil &&
		(res.Error.Kind == toolloop.KindCanceled || res.Error.Kind == toolloop.KindTimeout) {
		// Not the run but this worker stopped the call (it is shutting
		// down): not a result. A tool safe to repeat runs again elsewhere.
		return nil, tsdk.NewApplicationErrorWithOptions("the worker stopped while the call ran: "+res.Error.Message,
			errTypeWorkerStopped, tsdk.ApplicationErrorOptions{})
	}
	if policy.Retry && transient(res) && (in.Attempts <= 0 || info.Attempt < in.Attempts) {
		return nil, tsdk.NewApplicationErrorWithOptions(res.Error.Message, errTypeToolFailed, tsdk.ApplicationErrorOptions{
			Details: []any{res}, Category: tsdk.ApplicationErrorCategoryBenign,
		})
	}
	return &callOutput{Result: res}, nil
}

// transient reports whether a failed result may come out differently on
// another try: the tool ran and failed, or ran out of time. Failures of
// the other stages (not found, invalid arguments, denied) and panics would
// fail the same way again.
func transient(r *toolloop.ToolResult) bool {
	return r.Error != nil && (r.Error.Kind == toolloop.KindExecutionFailed || r.Error.Kind == toolloop.KindTimeout)
}

// emit passes an event to the loop's OnEvent, if any, one at a time and
// surviving a panic in it, as the loop does.
func (ag *agent) emit(e toolloop.Event) {
	l := ag.Loop
	if l.OnEvent == nil {
		return
	}
	e.Time = time.Now()
	ag.eventMu.Lock()
	defer ag.eventMu.Unlock()
	defer func() {
		if p := recover(); p != nil && l.Logger != nil {
			l.Logger.Error("toolloop: OnEvent panicked; event dropped", "event", e.Type, "panic", p)
		}
	}()
	l.OnEvent(e)
}

// maxPartial bounds the partial output a heartbeat carries.
const maxPartial = 1 << 10

// heartbeat is what a running activity reports in its heartbeat details:
// which call it runs, and the latest progress and output of its tool.
// Describe reads it back.
type heartbeat struct {
	CallID   string             `json:"call_id,omitempty"`
	Turn     int                `json:"turn"`
	Progress *toolloop.Progress `json:"progress,omitempty"`
	Partial  string             `json:"partial,omitempty"`
	// Job, on a job activity's heartbeat, is the job's ID, and
	// OutputBytes counts the output its tool reported so far (Partial is
	// its tail).
	Job         string `json:"job,omitempty"`
	OutputBytes int64  `json:"output_bytes,omitempty"`
}

// beat is the heartbeat an activity keeps up to date.
type beat struct {
	mu sync.Mutex
	hb heartbeat
	// max bounds Partial; 0 means maxPartial.
	max int
}

func (b *beat) progress(p *toolloop.Progress) {
	if p == nil {
		return
	}
	c := *p
	b.mu.Lock()
	b.hb.Progress = &c
	b.mu.Unlock()
}

// partial keeps the last maxPartial (or max) bytes of the output
// reported so far, starting at a character boundary.
func (b *beat) partial(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := maxPartial
	if b.max > 0 {
		limit = b.max
	}
	if b.hb.Job != "" {
		b.hb.OutputBytes += int64(len(text))
	}
	s := b.hb.Partial + text
	if len(s) > limit {
		s = runeStart(s[len(s)-limit:])
	}
	b.hb.Partial = s
}

// snapshot is a copy to send.
func (b *beat) snapshot() heartbeat {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hb
}

// keepAlive heartbeats every interval until stop is called, so that a
// lost worker is noticed within the heartbeat timeout and a cancellation
// reaches the activity. stop waits for the heartbeating goroutine to exit.
func keepAlive(ctx context.Context, every time.Duration, hb *beat) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				activity.RecordHeartbeat(ctx, hb.snapshot())
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
