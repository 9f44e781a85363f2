package temporal

import (
	"errors"
	"slices"

	tsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
)

// steerVersion marks the workflow code that takes steering signals
// (SteerSignal, InterruptSignal) and waits for a cancelled model turn to
// report the text it had streamed: runs started before it replay as they
// ran.
const (
	steerChange  = "toolloop.steering"
	steerVersion = 1
)

// The answers the workflow gives the calls an interrupt stops: the
// core's, and for a call that waits for approval (which in process would
// have paused the run instead), one in the same words.
const (
	notRunInterrupted     = "not run: the run was interrupted before this call started"
	notStartedInterrupted = "not run: the run was canceled before this call started (the run was interrupted)"
	awaitingInterrupted   = "not run: the run was interrupted while this call waited for approval"
)

// steering is the workflow's inbox: the messages and the interrupt that
// came by signal and have not been acted on. It is workflow state, carried
// across continue-as-new.
type steering struct {
	messages, interrupts workflow.ReceiveChannel
	// queue holds the messages received and not yet delivered, in the
	// order sent, and the ends of background jobs, in the order they
	// ended.
	queue []queued
	// intr is the interrupt the run has not acted on yet.
	intr *toolloop.Interrupt
	// base is the run's context before interrupts (outer, with the
	// budget's deadline); the run works under rn.ctx, a child of base
	// that an interrupt now cancels, and renewed after it acted.
	base   workflow.Context
	cancel workflow.CancelFunc
}

// queued is a message in the workflow's inbox. In JSON it is a
// toolloop.QueuedMessage, with the job's ID for the end of a job.
type queued struct {
	toolloop.QueuedMessage
	// Job is the ID of the job whose end the message tells, for
	// toolloop.OriginJob.
	Job string `json:"job,omitempty"`
}

// startSteering makes the run take steering signals: it works under a
// context an interrupt now can cancel, child of the one it had.
func (rn *run) startSteering(ctx workflow.Context) {
	s := rn.steer
	s.messages = workflow.GetSignalChannel(ctx, SteerSignal)
	s.interrupts = workflow.GetSignalChannel(ctx, InterruptSignal)
	s.base = rn.ctx
	rn.ctx, s.cancel = workflow.WithCancel(s.base)
	if s.intr != nil && s.intr.Mode == toolloop.InterruptNow { // carried
		s.cancel()
	}
}

// receive takes the signals that have come, without blocking: the
// messages into the queue, the interrupts into the pending one. Signals
// are events of the history, so a replay receives the same ones at the
// same points.
func (rn *run) receive() {
	rn.receiveInterrupts()
	var q []toolloop.QueuedMessage
	for rn.steer.messages.ReceiveAsync(&q) {
		rn.enqueue(q)
		q = nil
	}
}

// receiveInterrupts takes the interrupts that have come, without
// blocking.
func (rn *run) receiveInterrupts() {
	var i toolloop.Interrupt
	for rn.steer.interrupts.ReceiveAsync(&i) {
		rn.interrupt(i)
		i = toolloop.Interrupt{}
	}
}

// enqueue queues messages as toolloop.Inbox does: each as a user message
// with its content only; a message with no content is dropped, and an
// origin other than a follow-up is a steering message.
func (rn *run) enqueue(q []toolloop.QueuedMessage) {
	for _, m := range q {
		if len(m.Message.Content) == 0 {
			continue
		}
		if m.Origin != toolloop.OriginFollowUp {
			m.Origin = toolloop.OriginSteer
		}
		m.Message = toolloop.Message{Role: toolloop.RoleUser, Content: slices.Clone(m.Message.Content)}
		rn.steer.queue = append(rn.steer.queue, queued{QueuedMessage: m})
	}
}

// interrupt records an interrupt as toolloop.Inbox.Interrupt does: the
// run stops at the earliest point any pending interrupt names, and goes on
// only if the last one says so. An interrupt now cancels the context the
// run works under, which cancels its running activities.
func (rn *run) interrupt(i toolloop.Interrupt) {
	s := rn.steer
	if rank(i.Mode) == 0 {
		i.Mode = toolloop.InterruptNow
	}
	if s.intr != nil && rank(s.intr.Mode) < rank(i.Mode) {
		i.Mode = s.intr.Mode
	}
	s.intr = &i
	if i.Mode == toolloop.InterruptNow && rn.ctx.Err() == nil {
		s.cancel()
	}
}

// rank orders modes by how soon they act, as the core does; an unknown
// mode acts now.
func rank(m toolloop.InterruptMode) int {
	switch m {
	case toolloop.InterruptAfterTools:
		return 2
	case toolloop.InterruptAfterModel:
		return 1
	}
	return 0
}

// cut reports whether an interrupt now cancelled the context the run
// works under (and not the budget's deadline or the workflow's
// cancellation).
func (rn *run) cut() bool {
	s := rn.steer
	return s != nil && rn.ctx.Err() != nil && s.base.Err() == nil
}

// holding reports whether a pending interrupt keeps the current turn's
// calls from starting.
func (rn *run) holding() bool {
	s := rn.steer
	return s != nil && s.intr != nil && s.intr.Mode != toolloop.InterruptAfterTools
}

// take takes the pending interrupt, if any, and the messages to deliver
// with it, as the core does: the steering messages, or, at the end of the
// run (final) or when the interrupt goes on, all of them.
func (s *steering) take(final bool) (*toolloop.Interrupt, []queued) {
	i := s.intr
	s.intr = nil
	if i != nil && !i.Continue {
		return i, nil
	}
	if i != nil || final {
		q := s.queue
		s.queue = nil
		return i, q
	}
	var out, keep []queued
	for _, m := range s.queue {
		if m.Origin == toolloop.OriginFollowUp {
			keep = append(keep, m)
		} else {
			out = append(out, m)
		}
	}
	s.queue = keep
	return nil, out
}

// safePoint acts on the signals before a model turn, as the core's safe
// point does: an interrupt that has reached its point, then the messages
// to deliver, appended to the transcript as user messages. At the end of
// the run (final: the model gave its final answer) it delivers the
// follow-ups too, and drops an interrupt that would end the run, which
// has ended anyway. It reports whether the run ends interrupted, and
// whether anything was delivered (the run goes on).
func (rn *run) safePoint(final bool) (stop, more bool) {
	s := rn.steer
	rn.receive()
	i, q := s.take(final)
	if i != nil {
		if final && (!i.Continue || len(q) == 0) {
			return false, false // nothing to stop, nothing new to say
		}
		if rn.cut() {
			rn.renew()
		}
		rn.res.StopReason = toolloop.StopInterrupted
		workflow.GetLogger(rn.outer).Info("toolloop: the run was interrupted", "mode", i.Mode, "continue", i.Continue)
		if !i.Continue {
			return true, false
		}
	} else if rn.cut() {
		rn.renew()
	}
	if msgs := rn.res.Messages; i != nil && len(q) == 0 && msgs[len(msgs)-1].Role == toolloop.RoleAssistant {
		// Going on from a cut turn with nothing to say: as the core does,
		// so that no request ends with the assistant's cut message.
		q = []queued{{QueuedMessage: toolloop.QueuedMessage{Origin: toolloop.OriginInterrupt, Message: toolloop.UserMessage(toolloop.InterruptedNote)}}}
	}
	for _, m := range q {
		if m.Job != "" {
			rn.jobDelivered(m.Job)
		}
		rn.res.Messages = append(rn.res.Messages, m.Message)
	}
	return false, len(q) > 0 || i != nil
}

// renew gives the run a new context to work under after an interrupt now
// acted.
func (rn *run) renew() {
	s := rn.steer
	s.cancel()
	rn.ctx, s.cancel = workflow.WithCancel(s.base)
}

// keepPartial appends what the model had streamed of a turn an interrupt
// cut short, marked interrupted, as the core does: the model activity
// reports it as the details of its cancellation.
func (rn *run) keepPartial(err error) {
	var ce *tsdk.CanceledError
	var text string
	if !errors.As(err, &ce) || !ce.HasDetails() || ce.Details(&text) != nil || text == "" {
		return
	}
	msg := toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent(text)},
		StopReason: toolloop.StopInterrupted, Usage: &toolloop.Usage{}}
	rn.res.Messages = append(rn.res.Messages, msg)
	rn.res.FinalText = text
}

// interrupted ends a run an interrupt stopped: Wait returns its result
// with toolloop.ErrInterrupted.
func (rn *run) interrupted() (*toolloop.RunResult, error) {
	rn.res.StopReason = toolloop.StopInterrupted
	return rn.fail(errTypeRunInterrupted, toolloop.ErrInterrupted.Error(), &failure{})
}

// undelivered returns the messages the run did not deliver in its
// result. The result (and the details of the error the run ends with)
// hold rn.res, encoded when the workflow completes.
func (rn *run) undelivered() {
	s := rn.steer
	if s == nil {
		return
	}
	var q []toolloop.QueuedMessage
	for s.messages.ReceiveAsync(&q) {
		rn.enqueue(q)
		q = nil
	}
	for _, m := range s.queue {
		if m.Job != "" {
			continue // RunResult.Jobs says how each job ended
		}
		rn.res.Undelivered = append(rn.res.Undelivered, m.Message)
	}
	s.queue = nil
}

// wait waits for an activity's future, acting on the interrupts that come
// meanwhile, and then gets its value.
func (rn *run) wait(ctx workflow.Context, f workflow.Future, valuePtr any) error {
	if s := rn.steer; s != nil {
		for !f.IsReady() {
			sel := workflow.NewSelector(ctx)
			sel.AddFuture(f, func(workflow.Future) {})
			sel.AddReceive(s.interrupts, func(workflow.ReceiveChannel, bool) { rn.receiveInterrupts() })
			sel.Select(ctx)
		}
	}
	return f.Get(ctx, valuePtr)
}
