package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// A run's records wait in the recorder for the next sync point (see
// eventlog.SyncPoint), or until there are this many of them or this many
// bytes, so that memory stays bounded in a run that never syncs.
const (
	maxBatchRecords = 256
	maxBatchBytes   = 4 << 20
	// appendTimeout bounds an append made after the run's context ended
	// (the run's last events must still be stored).
	appendTimeout = 30 * time.Second
)

// recorder stores one run's events as the loop reports them.
type recorder struct {
	s      *Session
	cancel context.CancelCauseFunc

	// mu guards the fields below, and the Session's ld and info, which
	// the recorder brings up to date as it stores records.
	mu       sync.Mutex
	ld       *loader // the session's, replaying buf too
	info     Info    // the session's metadata, as stored
	buf      []Record
	bufBytes int
	spend    Spend  // buf's
	status   Status // buf's
	flushed  Spend  // what this run stored
	unpriced bool
	err      error
}

func newRecorder(s *Session, cancel context.CancelCauseFunc) *recorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &recorder{s: s, cancel: cancel, ld: s.ld, info: s.info}
}

func (r *recorder) lease() Lease {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.s.lease
}

// fail stops the run: storing failed.
func (r *recorder) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.cancel(err)
}

func (r *recorder) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// price returns the cost of u on model, and whether it is known.
func (r *recorder) price(loop *toolloop.AgentLoop, model string, u toolloop.Usage) Spend {
	s := Spend{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	if u == (toolloop.Usage{}) {
		return s
	}
	if info, ok := loop.ModelInfo(model); ok && info.Price != nil {
		s.Cost = info.Price.Cost(u)
	} else {
		r.unpriced = true
	}
	return s
}

// record stores e: it waits in the batch, which goes to the store at
// the next sync point.
func (r *recorder) record(ctx context.Context, loop *toolloop.AgentLoop, e toolloop.Event) {
	if e.Type.Transient() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	if red := r.s.ss.opts.Redact; red != nil {
		e = red(e)
	}
	data, err := json.Marshal(e)
	if err != nil {
		r.failLocked(fmt.Errorf("session %q: encoding a %s event: %w", r.s.ID(), e.Type, err))
		return
	}
	top := e.ParentRunID == ""
	r.add(data, top && (e.Type == toolloop.EventRunStart || e.Type == EventCheckpoint))
	r.s.mu.Lock()
	r.ld.add(e)
	r.s.mu.Unlock()
	switch {
	case e.Type == toolloop.EventModelResponse && e.Response != nil:
		r.spend = r.spend.Add(r.price(loop, e.Response.Model, e.Response.Usage))
	case e.Type == toolloop.EventTranscriptEdited && e.Edit != nil:
		r.spend = r.spend.Add(r.price(loop, e.Edit.Model, e.Edit.Usage))
	}
	if top {
		switch e.Type {
		case toolloop.EventRunStart, toolloop.EventRunResumed:
			r.status = StatusRunning
		case toolloop.EventRunPaused:
			r.status = StatusPaused
			r.sealLocked(loop, e)
		case toolloop.EventRunEnd:
			r.status = StatusEnded
			if r.ld.rp.Paused != nil { // a paused run ends too
				r.status = StatusPaused
			}
		case EventCheckpoint:
			if e.RunID == "" { // a rewind: no run is under way
				r.status = StatusEnded
			}
		case toolloop.EventTranscriptEdited:
			if e.Edit != nil && shrinks(e.Edit) {
				r.checkpointLocked(e)
			}
		}
	}
	if eventlog.SyncPoint(e) || e.Type == toolloop.EventRunPaused || len(r.buf) >= maxBatchRecords || r.bufBytes >= maxBatchBytes {
		r.flushLocked(ctx)
	}
}

// shrinks reports whether an edit removes messages (a compaction, a
// trim): the transcript after it is worth a checkpoint, so that loading
// starts there.
func shrinks(ed *toolloop.TranscriptEdit) bool {
	if ed.Strategy == "compact" {
		return true
	}
	for _, sp := range ed.Splices {
		if sp.End-sp.Start > len(sp.Messages) {
			return true
		}
	}
	return false
}

func (r *recorder) add(data []byte, base bool) {
	seq := r.info.Head + int64(len(r.buf)) + 1
	r.buf = append(r.buf, Record{Seq: seq, Base: base, Data: data})
	r.bufBytes += len(data)
}

// checkpointLocked adds a checkpoint of the transcript after edit event e.
func (r *recorder) checkpointLocked(e toolloop.Event) {
	r.s.mu.Lock()
	msgs := r.ld.rp.Transcript()
	r.s.mu.Unlock()
	data, err := r.s.ss.checkpoint(e.RunID, e.Turn, e.Edit.Strategy, msgs)
	if err != nil {
		r.failLocked(fmt.Errorf("session %q: encoding a checkpoint: %w", r.s.ID(), err))
		return
	}
	r.add(data, true)
}

// sealLocked adds the seal of the paused state the records replay to,
// if loop seals paused states, so that a state changed in the store is
// refused when it is resumed.
func (r *recorder) sealLocked(loop *toolloop.AgentLoop, e toolloop.Event) {
	if loop == nil || len(loop.Sealing.Key) == 0 || r.ld.rp.Paused == nil {
		return
	}
	p := *r.ld.rp.Paused
	if err := p.Seal(loop.Sealing.Key); err != nil {
		r.failLocked(fmt.Errorf("session %q: sealing the paused state: %w", r.s.ID(), err))
		return
	}
	seal := toolloop.Event{Type: EventSeal, Time: e.Time, RunID: e.RunID, Turn: e.Turn, Text: p.MAC}
	data, err := json.Marshal(seal)
	if err != nil {
		r.failLocked(err)
		return
	}
	r.add(data, false)
	r.s.mu.Lock()
	r.ld.add(seal)
	r.s.mu.Unlock()
}

// pending stores the messages a run left undelivered.
func (r *recorder) pending(ctx context.Context, runID string, msgs []toolloop.Message) {
	r.record(ctx, nil, toolloop.Event{Type: EventPending, Time: time.Now(), RunID: runID, Messages: msgs})
}

func (r *recorder) failLocked(err error) {
	if r.err == nil {
		r.err = err
	}
	r.cancel(err)
}

// flush stores the batch.
func (r *recorder) flush(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.flushLocked(ctx)
	}
}

func (r *recorder) flushLocked(ctx context.Context) {
	if len(r.buf) == 0 && r.spend.IsZero() && r.status == "" {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	b := Batch{Records: r.buf, Spend: r.spend, Status: r.status}
	if err := r.s.ss.store.Append(actx, r.lease(), b); err != nil {
		r.failLocked(fmt.Errorf("session %q: storing %d records: %w", r.s.ID(), len(b.Records), err))
		return
	}
	for _, rec := range r.buf {
		if rec.Base {
			r.info.Base = rec.Seq
		}
	}
	r.info.Head += int64(len(r.buf))
	if r.status != "" {
		r.info.Status = r.status
	}
	r.info.Spent = r.info.Spent.Add(r.spend)
	r.info.Updated = time.Now()
	r.s.mu.Lock()
	r.s.info = r.info
	r.s.mu.Unlock()
	r.flushed = r.flushed.Add(r.spend)
	r.buf, r.bufBytes, r.spend, r.status = nil, 0, Spend{}, ""
}

// finish brings the Session up to date: its state as recorded, or, if
// storing failed, as the store has it (none, if it cannot be read: the
// Session must then be opened again).
func (r *recorder) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	ld, info := r.ld, r.info
	if r.err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), appendTimeout)
		defer cancel()
		var err error
		if ld, info, err = r.s.ss.load(ctx, r.s.ID()); err != nil {
			ld, info = nil, r.info
		}
	}
	r.s.mu.Lock()
	r.s.ld, r.s.info = ld, info
	r.s.mu.Unlock()
}

// capCheck enforces Options.Caps before each model turn.
type capCheck struct {
	rec  *recorder
	user toolloop.SharedBudget
}

// Allow implements toolloop.SharedBudget.
func (c *capCheck) Allow(ctx context.Context, st toolloop.RunStatus) error {
	r := c.rec
	r.mu.Lock()
	err, unpriced := r.err, r.unpriced
	mine := r.info.Spent.Add(r.spend)
	unstored := r.spend
	r.mu.Unlock()
	if err != nil {
		return err
	}
	caps := &r.s.ss.opts.Caps
	id, tenant := r.s.ID(), r.info.Tenant
	tc := caps.tenant(tenant)
	if unpriced && (caps.Session.Cost > 0 || tc.Cost > 0) {
		return fmt.Errorf("%w: session %q has a cost cap, and a model that answered has no price: add it to AgentLoop.ModelTable", toolloop.ErrUnknownPrice, id)
	}
	if caps.Session.reached(mine) {
		return &CapError{Scope: "session", Name: id, Spent: mine, Cap: caps.Session}
	}
	if !tc.IsZero() {
		spent, err := r.s.ss.store.TenantSpend(ctx, tenant)
		if err != nil {
			return fmt.Errorf("session %q: reading tenant %q's spend: %w", id, tenant, err)
		}
		if spent = spent.Add(unstored); tc.reached(spent) {
			return &CapError{Scope: "tenant", Name: tenant, Spent: spent, Cap: tc}
		}
	}
	if c.user != nil {
		return c.user.Allow(ctx, st)
	}
	return nil
}
