package toolloop

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// runState is one Run or Resume in progress.
type runState struct {
	l *AgentLoop
	// lim is the loop's Limits with their defaults.
	lim      Limits
	id       string
	turn     int
	observed bool
	// stream, if set, receives every event after OnEvent (see Stream).
	stream func(Event)
	emitMu sync.Mutex
	// ended: run.end was emitted (guarded by emitMu). What a call left
	// behind emits later (an inner call a program made after its call
	// ended, say) is dropped: run.end is a run's last event.
	ended bool
	// approveMu makes the approver see one call at a time.
	approveMu sync.Mutex
	// timer wakes turn coordinators; one serves the whole run.
	timer *time.Timer
	// decision settles an Ask verdict its calls meet (RunCall).
	decision *Approval

	// started is when Run or Resume was called, for Budget.MaxDuration.
	started time.Time
	// share is the byte budget of each result of the current turn (see
	// Limits.MaxTurnResultBytes); set before the turn's calls start.
	share int
	// callsAt is the run's tool calls when the current turn started, and
	// innerCalls counts the inner calls (see Inner) made since, for
	// Budget.MaxToolCalls.
	callsAt    int
	innerCalls atomic.Int64
	// tokens counts the transcript's tokens for context managers.
	tokens tokenCounter
	// ctl is the state of the turn controls; nil when none are used.
	ctl *control
	// output is the output format given for this run only (RunTyped).
	output *OutputFormat
	// lastModel names the model that answered last.
	lastModel string
	// warnedAsk is set once an ask with nothing to settle it was logged.
	warnedAsk atomic.Bool
	// steer is the run's hold on its inbox; nil when it has none.
	steer *steering

	// base is the run's context (with the budget's deadline), which its
	// background jobs run under; nil outside Run and Resume. inbox is
	// the inbox the run took at its start, if any. Both are set before
	// any call starts.
	base  context.Context
	inbox *Inbox
	// jobBase is the highest job number the input transcript names.
	jobBase int
	// jobs are the run's background jobs, made by the first call that
	// asks for one; jobMu guards the pointer.
	jobMu sync.Mutex
	jobs  *jobs
	// jobReq keeps the tools of the last request (see jobRequest).
	jobReq jobReq
	// cache keeps the last request, to tell a cache bust (observed runs).
	cache cacheWatch
	// toolSpecs and toolNames are the tools of the last request and their
	// names, for its model.request event: a run that sends the same
	// tools every turn names them once.
	toolSpecs []ToolSpec
	toolNames []string
	// driver: the run makes requests for a driver (ModelRequest), which
	// runs the jobs itself.
	driver bool
}

func (l *AgentLoop) newRun(id string, stream func(Event)) *runState {
	if id == "" {
		id = newRunID()
	}
	return &runState{l: l, id: id, observed: l.OnEvent != nil || stream != nil, stream: stream, started: time.Now(),
		lim: l.Limits.WithDefaults()}
}

// newRunID makes a run ID: 64 random bits, from the process's randomly
// seeded generator, which costs a fraction of a system call for random
// bytes. A run ID names a run; it is no secret.
func newRunID() string {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], rand.Uint64())
	var b [20]byte // "run_" and 16 hex digits
	copy(b[:], "run_")
	hex.Encode(b[4:], n[:])
	return string(b[:])
}

func (rn *runState) emit(e *Event) {
	if !rn.observed {
		return
	}
	e.RunID = rn.id
	if e.Turn == 0 {
		e.Turn = rn.turn
	}
	e.Time = time.Now()
	rn.emitMu.Lock()
	defer rn.emitMu.Unlock()
	if rn.ended {
		return
	}
	rn.ended = e.Type == EventRunEnd
	if rn.l.OnEvent != nil {
		rn.onEvent(e)
	}
	if rn.stream != nil {
		rn.stream(*e)
	}
}

// The events every run and every turn emits are built by the methods
// below, not in the loop's own functions: an Event is about 500 bytes,
// and a literal one takes that room in its function's stack frame
// whether or not anyone observes the run. A run waiting for its model
// holds the frames of its whole call chain, so with many runs in flight
// those bytes are memory per run, and they make a new run's goroutine
// grow its stack (a copy) that the garbage collector then shrinks
// (another). go:noinline keeps the compiler from putting them back.

// emitMessages emits an event of type t carrying msgs and repairs.
//
//go:noinline
func (rn *runState) emitMessages(t EventType, msgs []Message, repairs []string) {
	rn.emit(&Event{Type: t, Messages: msgs, Repairs: repairs})
}

// emitRequest emits a model request, after a cache bust if req breaks
// the cached prefix of the previous request.
//
//go:noinline
func (rn *runState) emitRequest(req *Request, msgs []Message) {
	b, kept := rn.cache.check(req, msgs)
	if b != nil {
		rn.emit(&Event{Type: EventCacheBust, CacheBust: b})
	}
	rn.emit(&Event{Type: EventModelRequest, Messages: req.Messages[kept:], Request: rn.requestInfo(req, msgs, kept)})
}

// emitResponse emits the model's response, as msg, the assistant message
// made of resp.
//
//go:noinline
func (rn *runState) emitResponse(msg *Message, resp *Response) {
	rn.emit(&Event{Type: EventModelResponse, Response: &Response{
		Message: *msg, StopReason: msg.StopReason, Usage: resp.Usage, Model: resp.Model}})
}

// onEvent passes e to the loop's OnEvent, logging a panic.
func (rn *runState) onEvent(e *Event) {
	defer func() {
		if p := recover(); p != nil {
			rn.logger().Error("toolloop: OnEvent panicked; event dropped", "event", e.Type, "panic", p)
		}
	}()
	rn.l.OnEvent(*e)
}

func (rn *runState) logger() *slog.Logger {
	if rn.l.Logger != nil {
		return rn.l.Logger
	}
	return discardLogger
}

// notRun answers calls the loop will not run with canceled results.
func (rn *runState) notRun(res *RunResult, calls []ToolCall, why string) {
	for _, tc := range calls {
		r := rn.answerNotRun(tc, why)
		res.Messages = append(res.Messages, ToolMessage(r))
		res.Executions = append(res.Executions, execution(rn.turn, r))
	}
}

// answerNotRun answers a call the loop will not run with a canceled
// result, and reports its completion.
func (rn *runState) answerNotRun(tc ToolCall, why string) *ToolResult {
	r := notRunResult(tc, why)
	if rn.observed {
		rn.emit(&Event{Type: EventComplete, CallID: tc.ID, Tool: tc.Name, Result: r})
	}
	return r
}

// notRunResult answers a call the loop did not run.
func notRunResult(tc ToolCall, why string) *ToolResult {
	r := &ToolResult{CallID: tc.ID, Name: tc.Name, Status: StatusError,
		Error: &ToolError{Kind: KindCanceled, Message: why}, Content: []Content{TextContent(why)}}
	r.Meta.Bytes = len(why)
	return r
}

// end reports the end of a run and returns its result.
func (rn *runState) end(res *RunResult, err error) (*RunResult, error) {
	rn.putTimer()
	if js := rn.jobsNow(); js != nil {
		js.endAll(res, false)
	}
	if rn.steer != nil {
		rn.undelivered(res)
	}
	if rn.observed {
		acc := res.Accounting
		e := &Event{Type: EventRunEnd, StopReason: res.StopReason, Usage: &res.Usage, Accounting: &acc}
		if err != nil {
			e.Error = err.Error()
		}
		rn.emit(e)
	}
	return res, err
}
