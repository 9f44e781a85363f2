package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
)

// Session is a session open for writing: this process holds its lease,
// so no other writer runs it until [Session.Close] (or until the lease
// lapses, if this process dies). Get one with [Sessions.Open] or
// [Sessions.Create]. A Session takes one run at a time; its methods are
// safe for concurrent use.
type Session struct {
	ss *Sessions
	id string

	mu      sync.Mutex
	lease   Lease
	ld      *loader // the session's records, as replayed
	info    Info
	running bool
	closed  bool
}

// Create creates a session and opens it. It returns ErrExists if the ID
// is taken.
func (ss *Sessions) Create(ctx context.Context, info Info) (*Session, error) {
	if err := ss.store.Create(ctx, info); err != nil {
		return nil, err
	}
	return ss.Open(ctx, info.ID)
}

// Open takes a session's lease and loads its state. It returns
// ErrNotFound if there is no such session, and ErrSessionBusy at once if
// another writer has it open (or had, and died less than
// Options.LeaseTTL ago). Close the Session when done with it.
//
//	s, err := sessions.Open(ctx, id)
//	if errors.Is(err, session.ErrNotFound) {
//		s, err = sessions.Create(ctx, session.Info{ID: id, User: user})
//	}
func (ss *Sessions) Open(ctx context.Context, id string) (*Session, error) {
	l, err := ss.store.Acquire(ctx, id, ss.opts.Holder, ss.opts.LeaseTTL)
	if err != nil {
		return nil, err
	}
	ld, info, err := ss.load(ctx, id)
	if err != nil {
		_ = ss.store.Release(context.WithoutCancel(ctx), l)
		return nil, err
	}
	return &Session{ss: ss, id: id, lease: l, ld: ld, info: info}, nil
}

// ID returns the session's ID.
func (s *Session) ID() string { return s.id }

// State returns the session's state: as its records say, the ones a run
// under way has yet to store included.
func (s *Session) State() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ld == nil {
		return &State{Info: s.info}
	}
	return s.ld.state(s.info)
}

// Close releases the session's lease. A run under way keeps it until it
// ends; Close does not wait for it.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.running {
		return nil // the run releases it as it ends
	}
	return s.ss.store.Release(context.Background(), s.lease)
}

// errClosed is returned by a Session used after Close.
var errClosed = errors.New("session: the session is closed")

// begin marks a run under way, renewing the lease if it may have lapsed
// while the session sat idle.
func (s *Session) begin(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("%w: %q", errClosed, s.ID())
	case s.running:
		return fmt.Errorf("session: %q: a run is already under way", s.ID())
	}
	l, err := s.ss.store.Renew(ctx, s.lease, s.ss.opts.LeaseTTL)
	if errors.Is(err, ErrLeaseLost) {
		// Lapsed while idle: take it again if nobody wrote since.
		l, err = s.ss.store.Acquire(ctx, s.ID(), s.ss.opts.Holder, s.ss.opts.LeaseTTL)
		if err == nil {
			info, serr := s.ss.store.Stat(ctx, s.ID())
			if serr != nil || info.Head != s.info.Head {
				_ = s.ss.store.Release(context.WithoutCancel(ctx), l)
				if serr != nil {
					return serr
				}
				return fmt.Errorf("%w: session %q was written by another writer while this one was idle: open it again", ErrLeaseLost, s.ID())
			}
		}
	}
	if err != nil {
		return err
	}
	s.lease, s.running = l, true
	return nil
}

// end marks the run over.
func (s *Session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = false
	if s.ld == nil { // storing failed, and the store could not be read
		s.closed = true
	}
	if s.closed {
		_ = s.ss.store.Release(context.Background(), s.lease)
	}
}

// Run runs loop on the session: its transcript, the messages its last
// run left undelivered, then msgs. Every event the run stores as it goes
// (the transient ones, such as deltas and progress, are not stored), in
// one append per turn, before the turn's calls start; so if this process
// dies, the next run repairs the transcript and runs no call twice.
//
// Run passes loop's events on to loop.OnEvent too, and sets
// loop.Budget.Shared for the run to enforce Options.Caps (with loop's
// own Shared, if any, asked too); loop itself is not changed. A run that
// pauses for approvals (ErrPaused) leaves the session paused: call
// Resume, here or in another process; Run returns ErrPending until then.
// If storing fails (the store is down, the lease was lost), the run is
// canceled before its next call starts and Run returns the store's error
// joined to the run's.
func (s *Session) Run(ctx context.Context, loop *toolloop.AgentLoop, msgs ...toolloop.Message) (*toolloop.RunResult, error) {
	r, err := s.Start(ctx, loop, msgs...)
	if err != nil {
		return nil, err
	}
	if r.Paused != nil {
		r.End(nil, nil)
		return nil, fmt.Errorf("%w: session %q, %d calls", ErrPending, s.ID(), len(r.Paused.Pending))
	}
	return r.End(r.Loop.Run(r.Context(), r.Messages))
}

// Resume resumes the session's paused run with the decisions on its
// pending calls, as toolloop.AgentLoop.Resume does, storing its events
// as Run does. The paused state comes from the session's store. If loop
// seals paused states (toolloop.Sealing), the run sealed it as it
// paused, the seal was stored with it ([EventSeal]), and Resume refuses
// a state changed in the store since (or stored unsealed) with
// toolloop.ErrTampered: set a key when others can write to the store
// (a model's shell can reach a file in its workspace). Without a key,
// the store is trusted. Each approved call runs once,
// whichever process resumes: the session's lease lets one writer at a
// time take it, and the stored run.resumed event tells a later writer
// the calls were already under way.
func (s *Session) Resume(ctx context.Context, loop *toolloop.AgentLoop, decisions map[string]toolloop.Approval) (*toolloop.RunResult, error) {
	r, err := s.Start(ctx, loop)
	if err != nil {
		return nil, err
	}
	if r.Paused == nil {
		r.End(nil, nil)
		return nil, fmt.Errorf("%w: %q", ErrNotPaused, s.ID())
	}
	return r.End(r.Loop.Resume(r.Context(), r.Paused, decisions))
}

// Recording is a run of a session that its caller drives, for what Run
// and Resume do not cover: streaming (toolloop.AgentLoop.RunStream and
// ResumeStream), a driver of its own. Get one with [Session.Start], run
// Loop with Context (on Messages, or resume Paused), and hand the result
// to End:
//
//	r, err := s.Start(ctx, loop, toolloop.UserMessage(prompt))
//	if err != nil { ... }
//	st := r.Loop.RunStream(r.Context(), r.Messages)
//	for e := range st.Events() { ... }
//	res, err := r.End(st.Result())
type Recording struct {
	// Loop is a copy of the loop given to Start that stores the run's
	// events and enforces the session's caps: run it, once, with Context.
	Loop *toolloop.AgentLoop
	// Messages is what a new run starts from: the session's transcript,
	// the messages its last run left undelivered, and those given to
	// Start.
	Messages []toolloop.Message
	// Paused is the state of the session's paused run, or nil: a new run
	// must not start before it is resumed (with Loop's Resume or
	// ResumeStream, which take it as it is). If Loop seals paused states,
	// Start has checked the seal stored with it, and it carries it.
	Paused *toolloop.PauseState

	s        *Session
	rec      *recorder
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stop     chan struct{}
	renewing sync.WaitGroup
	ended    bool
}

// Start begins a run of the session that the caller drives (see
// [Recording]). The session takes no other run until End.
func (s *Session) Start(ctx context.Context, loop *toolloop.AgentLoop, msgs ...toolloop.Message) (*Recording, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	st := s.State()
	r := &Recording{s: s, Messages: slices.Concat(st.Messages, st.Pending, msgs), stop: make(chan struct{})}
	if st.Paused != nil {
		p, err := s.sealed(st.Paused, loop.Sealing.Key)
		if err != nil {
			s.end()
			return nil, err
		}
		r.Paused = p
	}
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	r.rec = newRecorder(s, r.cancel)
	l := *loop
	user := loop.OnEvent
	l.OnEvent = func(e toolloop.Event) {
		r.rec.record(r.ctx, &l, e)
		if user != nil {
			user(e)
		}
	}
	l.Budget.Shared = &capCheck{rec: r.rec, user: loop.Budget.Shared}
	r.Loop = &l
	r.renewing.Go(func() { r.rec.renew(r.ctx, r.stop) })
	return r, nil
}

// Context returns the context to run Loop with: Start's, canceled if
// storing the run's events fails.
func (r *Recording) Context() context.Context { return r.ctx }

// End ends the run with its result and error, stores what is left of its
// events (the messages it left undelivered too), and lets the session
// take another run. It returns res, and err joined to the error storing
// failed with, if it did. Calling End again does nothing.
func (r *Recording) End(res *toolloop.RunResult, err error) (*toolloop.RunResult, error) {
	if r.ended {
		return res, err
	}
	r.ended = true
	if res != nil && len(res.Undelivered) > 0 {
		r.rec.pending(r.ctx, res.RunID, res.Undelivered)
	}
	r.rec.flush(r.ctx)
	close(r.stop)
	r.renewing.Wait()
	r.cancel(nil)
	r.rec.finish()
	r.s.end()
	if rerr := r.rec.failure(); rerr != nil {
		err = errors.Join(rerr, err)
	}
	return res, err
}

// renew keeps the lease while the run goes on.
func (r *recorder) renew(ctx context.Context, stop <-chan struct{}) {
	ttl := r.s.ss.opts.LeaseTTL
	t := time.NewTicker(max(ttl/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			r.mu.Lock()
			l, err := r.s.ss.store.Renew(ctx, r.lease(), ttl)
			if err == nil {
				r.s.mu.Lock()
				r.s.lease = l
				r.s.mu.Unlock()
			}
			r.mu.Unlock()
			if err != nil && ctx.Err() == nil {
				r.fail(fmt.Errorf("session %q: renewing the lease: %w", r.s.ID(), err))
				return
			}
		}
	}
}

// rewind stores a checkpoint of the first at messages.
func (s *Session) rewind(ctx context.Context, at int) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.end()
	st := s.State()
	if err := checkCut(s.ID(), st.Messages, at); err != nil {
		return err
	}
	rec := newRecorder(s, func(error) {})
	rec.record(ctx, nil, toolloop.Event{Type: EventCheckpoint, Time: time.Now(), Text: "rewind", Messages: st.Messages[:at]})
	rec.flush(ctx)
	rec.finish()
	return rec.failure()
}

// Verify reports whether the session's paused state is the one its run
// sealed with key as it paused (see [Session.Resume]): nil if so, an
// error wrapping toolloop.ErrTampered if it was changed in the store
// since, or stored without a seal, and [ErrNotPaused] if the session is
// not paused. Start checks it before a paused state is resumed; a
// program that shows the pending calls to a person checks it first.
func (s *Session) Verify(key []byte) error {
	p := s.State().Paused
	if p == nil {
		return fmt.Errorf("%w: %q", ErrNotPaused, s.ID())
	}
	_, err := s.sealed(p, key)
	return err
}

// sealed returns a copy of the paused state p with the seal stored with
// it, checked with key; with no key, the copy as it is.
func (s *Session) sealed(p *toolloop.PauseState, key []byte) (*toolloop.PauseState, error) {
	c := *p
	if len(key) == 0 {
		return &c, nil
	}
	s.mu.Lock()
	c.MAC = s.ld.mac
	s.mu.Unlock()
	if err := c.Verify(key); err != nil {
		return nil, fmt.Errorf("session %q: the stored paused state: %w", s.ID(), err)
	}
	return &c, nil
}
