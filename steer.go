package toolloop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// ErrInterrupted: the run was stopped by [Inbox.Interrupt] and, as the
// interrupt asked, ended there. Its result is valid to send to a model
// again: every call has its result, and the text the model had streamed
// when it was stopped is kept as an assistant message whose StopReason
// is StopInterrupted.
var ErrInterrupted = errors.New("toolloop: the run was interrupted")

// ErrInboxBusy: a run was started with an [Inbox] another run is using.
// An inbox steers one run at a time; nothing was run.
var ErrInboxBusy = errors.New("toolloop: the inbox is in use by another run")

// errInterruptNow is the cause of a run's context cancelled by an
// interrupt of mode InterruptNow.
var errInterruptNow = errors.New("the run was interrupted")

// Origin says where a message delivered into a running run came from.
type Origin string

// The origins of delivered messages.
const (
	// OriginSteer: sent with [Inbox.Send], delivered at the next safe
	// point.
	OriginSteer Origin = "steer"
	// OriginFollowUp: sent with [Inbox.FollowUp], delivered when the run
	// would otherwise have ended.
	OriginFollowUp Origin = "follow_up"
	// OriginInterrupt: the loop's own [InterruptedNote].
	OriginInterrupt Origin = "interrupt"
	// OriginJob: the loop's message telling the model a background job
	// ended (see [Job]).
	OriginJob Origin = "job"
)

// InterruptMode says where an interrupt stops a run.
type InterruptMode string

// The interrupt modes.
const (
	// InterruptNow stops the run at once: the model's turn is cut short
	// (the text it had streamed is kept, its calls are dropped) and
	// running calls are cancelled, each answered as canceled.
	InterruptNow InterruptMode = "now"
	// InterruptAfterModel lets the model's turn finish and runs none of
	// its calls: each is answered as not run. Calls that had already
	// started when the interrupt came run to their end; those of the turn
	// that had not are not run.
	InterruptAfterModel InterruptMode = "after_model"
	// InterruptAfterTools lets the current turn finish, its calls too,
	// and stops before the next model request.
	InterruptAfterTools InterruptMode = "after_tools"
)

// rank orders modes by how soon they act; an unknown mode acts now.
func (m InterruptMode) rank() int {
	switch m {
	case InterruptAfterTools:
		return 2
	case InterruptAfterModel:
		return 1
	}
	return 0
}

// Interrupt is a request to stop a running run, sent with
// [Inbox.Interrupt], and what the run.interrupted event records.
type Interrupt struct {
	// Mode is where the run stops; empty means InterruptNow.
	Mode InterruptMode `json:"mode"`
	// Continue, if set, makes the run go on after it stops: the messages
	// queued in its inbox are delivered and the model is asked again.
	// Otherwise the run ends with ErrInterrupted and the queued messages
	// are returned in RunResult.Undelivered.
	Continue bool `json:"continue,omitempty"`
}

// QueuedMessage is a message waiting in an [Inbox] to be delivered, as a
// [PauseState] keeps it.
type QueuedMessage struct {
	Origin  Origin  `json:"origin"`
	Message Message `json:"message"`
	// job is the job whose end the message tells, for OriginJob.
	job *bgJob
}

// Inbox carries messages and interrupts into a running run, from any
// goroutine: a person steering an agent while it works. A run uses the
// inbox its context carries (see [WithInbox]); a [Stream] has one of its
// own (see [Stream.Inbox]). The zero value is an empty inbox, ready to use.
//
// Messages are delivered at the next safe point of the run: before a
// model request, never between a call and its result. Each becomes a user
// message of the transcript, in the order sent, exactly once, and is
// reported by a user.message event with its [Origin]. When the run ends
// (or pauses), the messages still queued are taken out of the inbox and
// returned in RunResult.Undelivered (or kept in PauseState.Queued, to be
// delivered when the run resumes), so none is lost; messages sent after
// that wait in the inbox for the next run that uses it.
//
// An inbox steers one run at a time: starting a second run with it while
// the first runs fails with ErrInboxBusy. Agents used as tools (see
// [AgentTool]) and tools that start runs of their own do not see it.
type Inbox struct {
	mu    sync.Mutex
	queue []QueuedMessage
	// run is the run the inbox steers, nil between runs.
	run *steering
	// intr is the interrupt the run has not acted on yet.
	intr *Interrupt
	// done, if set, interrupts the run now once it is done (see
	// AgentTool.Run): a run that attaches after it is done is
	// interrupted at once.
	done context.Context
	// woken is signalled, without blocking, when something is queued or
	// an interrupt comes; made on first use.
	woken chan struct{}
}

// wakeCh returns the channel wake signals.
func (in *Inbox) wakeCh() chan struct{} {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.woken == nil {
		in.woken = make(chan struct{}, 1)
	}
	return in.woken
}

// wake signals whoever waits for the inbox to change.
func (in *Inbox) wake() {
	select {
	case in.wakeCh() <- struct{}{}:
	default:
	}
}

type inboxKey struct{}

// WithInbox returns a copy of ctx that carries in: [AgentLoop.Run],
// Resume and their typed and streamed forms take messages and interrupts
// from it while they run.
func WithInbox(ctx context.Context, in *Inbox) context.Context {
	return context.WithValue(ctx, inboxKey{}, in)
}

// inboxFrom returns the inbox ctx carries, if any.
func inboxFrom(ctx context.Context) *Inbox {
	in, _ := ctx.Value(inboxKey{}).(*Inbox)
	return in
}

// Send queues messages for the run, delivered at its next safe point,
// before its next model request. Each is delivered as a user message: its
// Role is set to user, and only its content is kept. A message with no
// content is ignored.
func (in *Inbox) Send(msgs ...Message) { in.add(OriginSteer, msgs) }

// FollowUp queues messages to be delivered when the run would otherwise
// end, after the model's final answer: the run goes on with them instead.
// A run that ends for another reason (an error, a limit, an interrupt)
// returns them undelivered. Each is delivered as Send's are.
func (in *Inbox) FollowUp(msgs ...Message) { in.add(OriginFollowUp, msgs) }

func (in *Inbox) add(origin Origin, msgs []Message) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, m := range msgs {
		if len(m.Content) == 0 {
			continue
		}
		in.queue = append(in.queue, QueuedMessage{Origin: origin, Message: userCopy(m)})
	}
	if in.woken != nil {
		select {
		case in.woken <- struct{}{}:
		default:
		}
	}
}

// userCopy is m as a user message, with its content only.
func userCopy(m Message) Message {
	return Message{Role: RoleUser, Content: append([]Content(nil), m.Content...)}
}

// Interrupt asks the run that uses the inbox to stop where i.Mode says,
// and then to end or go on as i.Continue says. It reports whether a run
// was there to be interrupted; an interrupt with no run does nothing.
//
// Interrupts add up: the run stops at the earliest point any pending
// interrupt names, and goes on only if the last one sent says so. An
// interrupt that comes after the model's final answer does not undo it:
// the run ends as it would have, or, with Continue, goes on with the
// queued messages.
func (in *Inbox) Interrupt(i Interrupt) bool {
	if i.Mode.rank() == 0 {
		i.Mode = InterruptNow
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.run == nil {
		return false
	}
	if in.intr != nil && in.intr.Mode.rank() < i.Mode.rank() {
		i.Mode = in.intr.Mode
	}
	in.intr = &i
	if i.Mode == InterruptNow {
		in.run.cancel(errInterruptNow)
	}
	if in.woken != nil {
		select {
		case in.woken <- struct{}{}:
		default:
		}
	}
	return true
}

// Len returns the number of messages queued and not yet delivered.
func (in *Inbox) Len() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.queue)
}

// Take removes the queued messages from the inbox and returns them, in the
// order sent: to withdraw them, or to start a run with the messages sent
// after the last one ended.
func (in *Inbox) Take() []Message {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := messagesOf(in.queue)
	in.queue = nil
	return out
}

// takeQueue removes and returns what is queued.
func (in *Inbox) takeQueue() []QueuedMessage {
	in.mu.Lock()
	defer in.mu.Unlock()
	q := in.queue
	in.queue = nil
	return q
}

func messagesOf(q []QueuedMessage) []Message {
	if len(q) == 0 {
		return nil
	}
	out := make([]Message, len(q))
	for i := range q {
		out[i] = q[i].Message
	}
	return out
}

// steering is a run's hold on its inbox.
type steering struct {
	in *Inbox
	// base is the run's context (with the budget's deadline); ctx is the
	// one the run works under, which an interrupt now cancels. Both are
	// the run goroutine's; cancel is called under in.mu.
	base   context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	// partial collects the text of the model turn being streamed, kept
	// if an interrupt cuts it short; its buffer serves every turn.
	partial []byte
	closed  bool
}

// attach makes rn the run of in, putting queued (a resumed run's) first
// and taking intr (a resumed run's) as its pending interrupt, and returns the context the run works under: ctx without the inbox, so
// that runs the run's tools start do not take it.
func (rn *runState) attach(ctx context.Context, in *Inbox, queued []QueuedMessage, intr *Interrupt) (context.Context, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.run != nil {
		return nil, ErrInboxBusy
	}
	s := &steering{in: in, base: context.WithValue(ctx, inboxKey{}, (*Inbox)(nil))}
	s.ctx, s.cancel = context.WithCancelCause(s.base)
	in.run, in.intr = s, nil
	if intr != nil {
		i := *intr
		if i.Mode.rank() == 0 {
			i.Mode = InterruptNow
		}
		in.intr = &i
	}
	if in.done != nil && in.done.Err() != nil {
		in.intr = &Interrupt{Mode: InterruptNow}
	}
	if in.intr != nil && in.intr.Mode == InterruptNow {
		s.cancel(errInterruptNow)
	}
	if len(queued) > 0 {
		in.queue = append(append(make([]QueuedMessage, 0, len(queued)+len(in.queue)), queued...), in.queue...)
	}
	rn.steer, rn.inbox = s, in
	return s.ctx, nil
}

// steerSetup attaches the run to the inbox ctx carries, if any (or to one
// of its own, for the queued messages or the interrupt of a resumed run),
// and returns the context it works under.
func (rn *runState) steerSetup(ctx context.Context, queued []QueuedMessage, intr *Interrupt) (context.Context, error) {
	in := inboxFrom(ctx)
	if in == nil {
		if len(queued) == 0 && intr == nil {
			return ctx, nil
		}
		in = &Inbox{}
	}
	return rn.attach(ctx, in, queued, intr)
}

// detach ends the run's hold on its inbox and takes the messages still
// queued, and the interrupt not acted on. It is safe to call more than
// once.
func (s *steering) detach() ([]QueuedMessage, *Interrupt) {
	in := s.in
	in.mu.Lock()
	defer in.mu.Unlock()
	if s.closed {
		return nil, nil
	}
	s.closed = true
	q, i := in.queue, in.intr
	in.queue, in.run, in.intr = nil, nil, nil
	s.cancel(context.Canceled)
	return q, i
}

// cut reports whether ctx, the run's working context, was cancelled by an
// interrupt now rather than by the caller or the budget.
func (s *steering) cut(ctx context.Context) bool {
	return ctx.Err() != nil && s.base.Err() == nil && context.Cause(ctx) == errInterruptNow
}

// holding reports whether an interrupt keeps the current turn's calls
// from starting.
func (s *steering) holding() bool {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	return s.in.intr != nil && s.in.intr.Mode != InterruptAfterTools
}

// take takes the pending interrupt, if any, and the messages to deliver
// with it: the steering messages, or, at the end of the run (final) or
// when the interrupt goes on, all of them.
func (s *steering) take(final bool) (*Interrupt, []QueuedMessage) {
	in := s.in
	in.mu.Lock()
	defer in.mu.Unlock()
	i := in.intr
	in.intr = nil
	if i != nil && !i.Continue {
		return i, nil
	}
	if i != nil || final {
		q := in.queue
		in.queue = nil
		return i, q
	}
	var out []QueuedMessage
	keep := in.queue[:0]
	for _, m := range in.queue {
		if m.Origin == OriginFollowUp {
			keep = append(keep, m)
		} else {
			out = append(out, m)
		}
	}
	clear(in.queue[len(keep):])
	in.queue = keep
	return nil, out
}

// renew gives the run a new working context after an interrupt now.
func (s *steering) renew() context.Context {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	return s.renewLocked()
}

// rebase makes the run work under outer from now on (the wrap-up turn,
// which the budget's deadline does not end), still interruptible.
func (s *steering) rebase(outer context.Context) context.Context {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	s.base = context.WithValue(outer, inboxKey{}, (*Inbox)(nil))
	return s.renewLocked()
}

// takeInterrupt takes the pending interrupt, leaving the messages queued.
func (s *steering) takeInterrupt() *Interrupt {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	i := s.in.intr
	s.in.intr = nil
	return i
}

func (s *steering) renewLocked() context.Context {
	s.cancel(context.Canceled)
	s.ctx, s.cancel = context.WithCancelCause(s.base)
	if s.in.intr != nil && s.in.intr.Mode == InterruptNow {
		s.cancel(errInterruptNow) // one came since the last was taken
	}
	return s.ctx
}

// safePoint acts on the run's inbox before a model request: an interrupt
// that has reached its point, then the messages to deliver. At the end
// of the run (final: the model gave its final answer), it delivers the
// follow-ups too, and drops an interrupt that would end the run, which
// has ended anyway. It returns the context to go on under, whether the
// run ends interrupted, and whether anything was delivered.
func (rn *runState) safePoint(ctx context.Context, res *RunResult, final bool) (context.Context, bool, bool) {
	s := rn.steer
	i, q := s.take(final)
	if i != nil {
		if final && (!i.Continue || len(q) == 0) {
			// Nothing to stop, nothing new to say: the run ends as it
			// would have.
			return ctx, false, false
		}
		if ctx.Err() != nil && s.cut(ctx) {
			ctx = s.renew()
		}
		res.StopReason = StopInterrupted
		rn.emit(&Event{Type: EventRunInterrupted, Interrupt: i})
		if !i.Continue {
			return ctx, true, false
		}
	} else if s.cut(ctx) {
		// An interrupt now that a later one, sent while it acted, took
		// the place of: the later one was taken above, or none was.
		ctx = s.renew()
	}
	if i != nil && len(q) == 0 && res.Messages[len(res.Messages)-1].Role == RoleAssistant {
		// Going on from a cut turn with nothing to say: a request must
		// not end with the assistant's message (providers refuse it, or
		// take it as the start of the answer), so the loop says why.
		q = []QueuedMessage{{Origin: OriginInterrupt, Message: UserMessage(InterruptedNote)}}
	}
	for _, m := range q {
		e := &Event{Type: EventUserMessage, Origin: m.Origin, Messages: []Message{m.Message}}
		if m.job != nil {
			e.Job = rn.delivered(m.job, res)
		}
		res.Messages = append(res.Messages, m.Message)
		rn.emit(e)
	}
	return ctx, false, len(q) > 0 || i != nil
}

// InterruptedNote is the user message the loop adds when an interrupt
// with Continue cut the model's turn short and no message was queued to
// go on with, so that the next request does not end with the
// assistant's cut message. It is delivered with OriginInterrupt.
const InterruptedNote = "[The user interrupted your answer here. Go on.]"

// stopHeld answers the calls a pausing turn holds for approval when an
// interrupt now or after the model turn is pending: none of them will
// run, and the run acts on the interrupt instead of pausing. It reports
// whether it did.
func (rn *runState) stopHeld(results []*ToolResult, pending []PendingCall, calls []ToolCall) bool {
	if !rn.steer.holding() {
		return false
	}
	for _, p := range pending {
		why := "not run: the run was interrupted while this call waited for approval"
		switch {
		case p.Child != nil:
			why = "canceled: the run was interrupted while the agent's run waited for approval; what it had done stands"
		case p.Program != nil:
			// The tool ran, and its inner calls before the pause: they
			// stand, and count as the run's calls (see Inner).
			why = "canceled: the run was interrupted while the program's inner calls waited for approval; the inner calls it had made stand, and none of those it waited on ran"
			r := notRunResult(calls[p.Index], why)
			r.Meta.InnerCalls = len(p.Program.Calls)
			if rn.observed {
				rn.emit(&Event{Type: EventComplete, CallID: r.CallID, Tool: r.Name, Result: r})
			}
			results[p.Index] = r
			continue
		}
		results[p.Index] = rn.answerNotRun(calls[p.Index], why)
	}
	return true
}

// keepPartial appends what the model had streamed of a turn an interrupt
// cut short, marked interrupted, and reports it like any response.
func (rn *runState) keepPartial(res *RunResult) {
	s := rn.steer
	// Trailing space is trimmed: the text ends where it was cut.
	text := strings.TrimRightFunc(string(s.partial), unicode.IsSpace)
	s.partial = s.partial[:0]
	if text == "" {
		return
	}
	msg := Message{Role: RoleAssistant, Content: []Content{TextContent(text)}, StopReason: StopInterrupted, Usage: &Usage{}}
	if rn.observed {
		rn.emit(&Event{Type: EventModelResponse, Response: &Response{Message: msg, StopReason: StopInterrupted}})
	}
	res.Messages = append(res.Messages, msg)
	res.FinalText = text
}

// undelivered ends the run's hold on its inbox and returns the messages
// it did not deliver in the result, or in its pause state.
func (rn *runState) undelivered(res *RunResult) {
	q, i := rn.steer.detach()
	if res.Paused != nil && i != nil {
		res.Paused.Interrupt = i
	}
	if res.Paused == nil {
		// The ends of jobs go with the run that had them: RunResult.Jobs
		// says how each ended.
		q = slices.DeleteFunc(q, func(m QueuedMessage) bool { return m.Origin == OriginJob })
	}
	if len(q) == 0 {
		return
	}
	if res.Paused != nil {
		res.Paused.Queued = append(res.Paused.Queued, q...)
		return
	}
	res.Undelivered = append(res.Undelivered, messagesOf(q)...)
}
