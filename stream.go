package toolloop

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
)

// errStreamStopped is the cause of a streamed run's cancellation when its
// reader stops ranging over its events; canceled calls' results name it.
var errStreamStopped = errors.New("the program stopped reading the run's events")

// errStreamActive is what Result returns while the events are being read.
var errStreamActive = errors.New("toolloop: Stream.Result called while the run's events are being read; call it after the range loop")

// Stream is a run whose events are read as they happen, in the iterator
// idiom:
//
//	s := loop.RunStream(ctx, msgs)
//	for e := range s.Events() {
//		if e.Type == toolloop.EventModelDelta {
//			fmt.Print(e.Text)
//		}
//	}
//	res, err := s.Result()
//
// The run starts when the range loop does, on a goroutine of its own,
// and hands each event to the loop body in order, one at a time, waiting
// while the body handles it: there is no buffer, so a slow reader slows
// the run (a tool reporting progress waits for the reader, its timeout
// still running) and never makes it hold more than one event. The loop's
// OnEvent, if set, still receives every event, just before the body.
//
// Breaking out of the range loop (or a panic in its body) stops the run:
// its context is cancelled, every call still gets its result (canceled
// ones say the program stopped reading), and the range statement returns
// only when the run has ended, leaving no goroutine behind. Result then
// reports the run as Run does when its context is cancelled.
//
// A Stream is for one goroutine and one run: its events can be ranged
// over once; ranging again yields nothing. Calling Result without
// ranging runs the whole run, as Run does.
type Stream struct {
	// ctx is the context given to RunStream or ResumeStream, kept until
	// the run starts, as an iterator that captures its context does.
	ctx context.Context
	run func(ctx context.Context, sink func(Event)) (*RunResult, error)
	// in is the run's inbox: the one ctx carried, or one of its own.
	in *Inbox

	mu    sync.Mutex
	state int
	res   *RunResult
	err   error
}

// The states of a Stream.
const (
	streamNew = iota
	streamRunning
	streamDone
)

// RunStream returns the run of msgs as a [Stream], to range over its
// events as they happen and then read its result. It is [AgentLoop.Run]
// in every other respect: nothing happens until the range loop starts
// (or Result is called), and a run that cannot start, with ErrNoModel or
// ErrNoApprover, yields no events and reports its error from Result.
func (l *AgentLoop) RunStream(ctx context.Context, msgs []Message) *Stream {
	msgs = slices.Clone(msgs)
	return newStream(ctx, func(ctx context.Context, sink func(Event)) (*RunResult, error) {
		return l.run(ctx, msgs, sink)
	})
}

// newStream is a Stream of run, with the inbox ctx carries or one of its
// own.
func newStream(ctx context.Context, run func(ctx context.Context, sink func(Event)) (*RunResult, error)) *Stream {
	in := inboxFrom(ctx)
	if in == nil {
		in = &Inbox{}
		ctx = WithInbox(ctx, in)
	}
	return &Stream{ctx: ctx, run: run, in: in}
}

// Inbox returns the run's [Inbox], to steer it from any goroutine while
// it runs (from the range loop's body too): send it messages, follow-ups
// and interrupts. It is the inbox the context given to RunStream carried,
// or one of the stream's own. Messages sent before the run starts are
// delivered at its first model request.
func (s *Stream) Inbox() *Inbox { return s.in }

// ResumeStream is [AgentLoop.Resume] as a [Stream]: it continues a paused
// run with the given decisions, its events read as they happen.
func (l *AgentLoop) ResumeStream(ctx context.Context, st *PauseState, decisions map[string]Approval) *Stream {
	return newStream(ctx, func(ctx context.Context, sink func(Event)) (*RunResult, error) {
		return l.resume(ctx, st, decisions, sink)
	})
}

// Events returns the run's events, in the order they happen, starting
// the run. See [Stream] for back-pressure and for what breaking out of
// the loop does.
func (s *Stream) Events() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		if !s.begin() {
			return
		}
		ctx, cancel := context.WithCancelCause(s.ctx)
		events := make(chan Event)     // the run hands over one event at a time
		handled := make(chan struct{}) // and waits until the body is done with it
		done := make(chan struct{})    // the run has returned
		stopped := make(chan struct{}) // nothing reads events any more
		var (
			res      *RunResult
			err      error
			panicked any
		)
		sink := func(e Event) {
			select {
			case events <- e:
			case <-stopped: // only a tool left behind emits this late
				return
			}
			select {
			case <-handled:
			case <-stopped:
			}
		}
		go func() {
			defer close(done)
			defer func() { panicked = recover() }()
			res, err = s.run(ctx, sink)
		}()
		holding := false // an event was handed over and not yet released
		defer func() {
			// Normal end, break or panic in the body: stop the run, let
			// it finish without a reader, and wait for it.
			cancel(errStreamStopped)
			if holding {
				handled <- struct{}{}
			}
		drain:
			for {
				select {
				case <-events:
					handled <- struct{}{}
				case <-done:
					break drain
				}
			}
			close(stopped)
			s.finish(res, err)
			if panicked != nil {
				panic(panicked)
			}
		}()
		for {
			select {
			case e := <-events:
				holding = true
				if !yield(e) {
					return
				}
				holding = false
				handled <- struct{}{}
			case <-done:
				return
			}
		}
	}
}

// Result returns the run's result and error, as Run or Resume would:
// after the range loop over Events has ended, what the run returned;
// if Events was never ranged over, it runs the whole run first. Called
// from inside the range loop, it returns an error and no result.
func (s *Stream) Result() (*RunResult, error) {
	s.mu.Lock()
	switch s.state {
	case streamRunning:
		s.mu.Unlock()
		return nil, errStreamActive
	case streamNew:
		s.state = streamRunning
		s.mu.Unlock()
		var res *RunResult
		var err error
		defer func() { s.finish(res, err) }()
		res, err = s.run(s.ctx, nil)
		return res, err
	}
	defer s.mu.Unlock()
	return s.res, s.err
}

// begin marks the stream as running; it reports false if it already ran.
func (s *Stream) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != streamNew {
		return false
	}
	s.state = streamRunning
	return true
}

func (s *Stream) finish(res *RunResult, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res, s.err, s.state = res, err, streamDone
}
