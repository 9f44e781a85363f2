package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// The record types the session package writes itself, beside the events
// of runs. Their records are [toolloop.Event]s of these types.
const (
	// EventCheckpoint holds the whole transcript (Messages) at a point
	// where loading may start: after a compaction, a fork or a rewind.
	// Text says which.
	EventCheckpoint toolloop.EventType = "session.checkpoint"
	// EventPending holds the messages sent into a run that it did not
	// deliver before it ended (RunResult.Undelivered): the next run
	// starts with them.
	EventPending toolloop.EventType = "session.pending"
	// EventSeal follows a run.paused record of a run whose loop seals
	// paused states (toolloop.Sealing): Text is the seal (PauseState.MAC)
	// of the paused state the records replay to, made as they were
	// stored, which [Session.Start] checks before the state is resumed.
	EventSeal toolloop.EventType = "session.seal"
)

// ErrPending: the session's last run paused for approvals, so it cannot
// take a new run before [Session.Resume] (or a [Sessions.Rewind] to
// before the calls).
var ErrPending = errors.New("session: the session waits for approvals: resume it")

// ErrNotPaused: [Session.Resume] was called on a session that does not
// wait for approvals.
var ErrNotPaused = errors.New("session: the session is not paused")

// ErrCapReached is matched by every *[CapError].
var ErrCapReached = errors.New("session: a spending cap is reached")

// Cap bounds spending: tokens (input and output together) and US
// dollars. A zero field sets no bound.
type Cap struct {
	Tokens int64   `json:"tokens,omitempty"`
	Cost   float64 `json:"cost_usd,omitempty"`
}

// IsZero reports whether c bounds nothing.
func (c Cap) IsZero() bool { return c == Cap{} }

// reached reports whether s is at or past c.
func (c Cap) reached(s Spend) bool {
	return c.Tokens > 0 && s.Tokens() >= c.Tokens || c.Cost > 0 && s.Cost >= c.Cost
}

// Caps bound what sessions spend across their runs, in every process
// that uses the store: each session, and each tenant's sessions together.
// Runs check them before every model turn (through
// toolloop.Budget.Shared), so concurrent runs of one tenant overspend a
// cap by at most one turn each.
type Caps struct {
	// Session bounds each session.
	Session Cap `json:"session,omitzero"`
	// Tenant bounds each tenant's sessions together, unless Tenants
	// names the tenant. Sessions with no Tenant are not bounded by it.
	Tenant Cap `json:"tenant,omitzero"`
	// Tenants bounds the tenants it names, in place of Tenant.
	Tenants map[string]Cap `json:"tenants,omitempty"`
}

func (c *Caps) tenant(name string) Cap {
	if name == "" {
		return Cap{}
	}
	if t, ok := c.Tenants[name]; ok {
		return t
	}
	return c.Tenant
}

// CapError says which cap a run reached. It matches [ErrCapReached];
// a run that reaches it ends with a *toolloop.BudgetError of
// toolloop.LimitShared wrapping it.
type CapError struct {
	// Scope is "session" or "tenant", and Name the session's ID or the
	// tenant.
	Scope, Name string
	Spent       Spend
	Cap         Cap
}

// Error implements the error interface.
func (e *CapError) Error() string {
	if e.Cap.Cost > 0 && e.Spent.Cost >= e.Cap.Cost {
		return fmt.Sprintf("session: %s %q has spent $%.4f of its $%g cap", e.Scope, e.Name, e.Spent.Cost, e.Cap.Cost)
	}
	return fmt.Sprintf("session: %s %q has spent %d tokens of its %d-token cap", e.Scope, e.Name, e.Spent.Tokens(), e.Cap.Tokens)
}

// Is reports whether target is ErrCapReached.
func (e *CapError) Is(target error) bool { return target == ErrCapReached }

// Options configure [Sessions]. The zero value is ready.
type Options struct {
	// Holder names this process in leases; empty means host name, process
	// ID and a random suffix.
	Holder string
	// LeaseTTL is how long a writer's lease lasts unless renewed, which a
	// running session does every third of it: how soon a session whose
	// process crashed can be opened again. 0 means 30 seconds.
	LeaseTTL time.Duration
	// Caps bound spending across runs.
	Caps Caps
	// Redact, if set, is applied to every event before it is stored, as
	// eventlog.Options.Redact is (a sanitize.Redactor's RedactEvent). It
	// must not change the event it is given.
	Redact func(toolloop.Event) toolloop.Event
}

// Sessions keeps conversations in a [Store]: it runs an
// [toolloop.AgentLoop] on a session's transcript and stores the run's
// events as it goes, and lists, forks, rewinds and deletes sessions.
// Build one with [New]; it is safe for concurrent use, and several
// processes may use the same store, one writer per session at a time.
type Sessions struct {
	store Store
	opts  Options
}

// New returns Sessions on store.
func New(store Store, opts Options) *Sessions {
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 30 * time.Second
	}
	if opts.Holder == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		opts.Holder = fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	return &Sessions{store: store, opts: opts}
}

// Store returns the store the Sessions use.
func (ss *Sessions) Store() Store { return ss.store }

// State is what a session's records say: its transcript, where its last
// run got to, and what it has spent.
type State struct {
	Info Info
	// Messages is the transcript a next run starts from (before Pending).
	// It may end mid-turn, with calls that have no result, if a run's
	// process died: the next run repairs them (see toolloop.AgentLoop.Run),
	// and runs none of them again.
	Messages []toolloop.Message
	// Paused is the state of a run that waits for approvals, or nil.
	Paused *toolloop.PauseState
	// Pending holds the messages sent into the last run that it did not
	// deliver; the next run starts with them.
	Pending []toolloop.Message
	// LoadedTools names the deferred tools the transcript's tool
	// searches loaded (see toolloop.AgentLoop.Deferred), sorted: the
	// loop reads them from Messages, so a next run offers them too.
	LoadedTools []string
	// RunID is the last run's, and StopReason and Error its end, if it
	// ended.
	RunID      string
	StopReason toolloop.StopReason
	Error      string
}

// loader rebuilds a State from records.
type loader struct {
	rp      eventlog.Replay
	pending []toolloop.Message
	// mac is the seal of the paused state, if its run sealed it.
	mac string
}

func (ld *loader) add(e toolloop.Event) {
	switch e.Type {
	case EventCheckpoint:
		ld.rp.Add(toolloop.Event{Type: toolloop.EventRunStart, RunID: e.RunID, Turn: e.Turn, Messages: e.Messages})
		if e.RunID == "" { // a fork's or a rewind's: no run is under way
			ld.rp.Add(toolloop.Event{Type: toolloop.EventRunEnd, StopReason: toolloop.StopEnd})
		}
	case EventPending:
		ld.pending = e.Messages
	case EventSeal:
		ld.mac = e.Text
	default:
		if e.Type == toolloop.EventRunPaused && e.ParentRunID == "" {
			ld.mac = "" // until its seal comes
		}
		if e.Type == toolloop.EventRunStart && e.ParentRunID == "" {
			ld.pending = nil // the run was handed them
		}
		ld.rp.Add(e)
	}
}

func (ld *loader) state(info Info) *State {
	st := &State{Info: info, Messages: ld.rp.Transcript(), Paused: ld.rp.Paused, Pending: ld.pending, RunID: ld.rp.RunID}
	if ld.rp.Ended {
		st.StopReason, st.Error = ld.rp.StopReason, ld.rp.Error
	}
	loaded := map[string]bool{}
	for _, m := range st.Messages {
		if r := m.Result; r != nil && r.Name == toolloop.ToolSearchName && r.Status == toolloop.StatusOK {
			for _, n := range r.Meta.LoadedTools {
				loaded[n] = true
			}
		}
	}
	st.LoadedTools = slices.Sorted(maps.Keys(loaded))
	return st
}

// decode turns a record into its event.
func decode(id string, r Record) (toolloop.Event, error) {
	var e toolloop.Event
	if err := json.Unmarshal(r.Data, &e); err != nil {
		return e, fmt.Errorf("%w: session %q record %d: %v", ErrCorrupt, id, r.Seq, err)
	}
	if e.Type == "" {
		return e, fmt.Errorf("%w: session %q record %d has no event type", ErrCorrupt, id, r.Seq)
	}
	return e, nil
}

// load reads a session's records from its last base record on.
func (ss *Sessions) load(ctx context.Context, id string) (*loader, Info, error) {
	info, err := ss.store.Stat(ctx, id)
	if err != nil {
		return nil, Info{}, err
	}
	ld := new(loader)
	for r, err := range ss.store.Records(ctx, id, max(info.Base, 1)) {
		if err != nil {
			return nil, Info{}, err
		}
		if r.Seq > info.Head {
			break // appended since the Stat
		}
		e, err := decode(id, r)
		if err != nil {
			return nil, Info{}, err
		}
		ld.add(e)
	}
	return ld, info, nil
}

// Load returns a session's state as its records say, without taking it:
// to show it, not to run it (use [Sessions.Open]). Only what the model
// needs is read: the records from the last checkpoint or run start on
// (Info.Base); [Sessions.History] reads them all.
func (ss *Sessions) Load(ctx context.Context, id string) (*State, error) {
	ld, info, err := ss.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return ld.state(info), nil
}

// List lists sessions, the most recently updated first.
func (ss *Sessions) List(ctx context.Context, f Filter) ([]Info, error) {
	return ss.store.List(ctx, f)
}

// Delete deletes a session and its records; ErrSessionBusy while a
// writer has it open.
func (ss *Sessions) Delete(ctx context.Context, id string) error {
	return ss.store.Delete(ctx, id)
}

// History yields every event a session has stored, from its first on,
// the records of [EventCheckpoint] and [EventPending] included. A record
// that does not decode yields an error wrapping ErrCorrupt, and the
// events after it still come.
func (ss *Sessions) History(ctx context.Context, id string) iter.Seq2[toolloop.Event, error] {
	return func(yield func(toolloop.Event, error) bool) {
		for r, err := range ss.store.Records(ctx, id, 1) {
			if err != nil {
				yield(toolloop.Event{}, err)
				return
			}
			e, err := decode(id, r)
			if !yield(e, err) {
				return
			}
		}
	}
}

// checkCut checks that msgs[:at] is a whole conversation: in range, and no
// call in it without its result.
func checkCut(id string, msgs []toolloop.Message, at int) error {
	if at < 0 || at > len(msgs) {
		return fmt.Errorf("%w: session %q has %d messages; %d is out of range", ErrInvalid, id, len(msgs), at)
	}
	open := map[string]bool{}
	for _, m := range msgs[:at] {
		for _, tc := range m.ToolCalls {
			open[tc.ID] = true
		}
		if m.Result != nil {
			delete(open, m.Result.CallID)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("%w: session %q: the first %d messages hold tool calls without their results; keep fewer or more messages", ErrInvalid, id, at)
	}
	return nil
}

// checkpoint is the record of a checkpoint holding msgs.
func (ss *Sessions) checkpoint(runID string, turn int, why string, msgs []toolloop.Message) ([]byte, error) {
	e := toolloop.Event{Type: EventCheckpoint, Time: time.Now(), RunID: runID, Turn: turn, Text: why, Messages: msgs}
	if ss.opts.Redact != nil {
		e = ss.opts.Redact(e)
	}
	return json.Marshal(e)
}

// Fork makes a new session of the first at messages of session id's
// transcript (as [Sessions.Load] gives it), to carry on from there:
// "try that again from message 12" is Fork(ctx, id, 12, Info{ID: new}).
// The new session's Parent and ForkedAt say where it came from; its User
// and Tenant are the parent's unless into sets them. The first at
// messages must not end between a tool call and its result. Fork reads
// id without taking it, so a session may be forked while it runs: the
// fork has what its records had.
func (ss *Sessions) Fork(ctx context.Context, id string, at int, into Info) (Info, error) {
	st, err := ss.Load(ctx, id)
	if err != nil {
		return Info{}, err
	}
	if err := checkCut(id, st.Messages, at); err != nil {
		return Info{}, err
	}
	data, err := ss.checkpoint("", 0, "fork", st.Messages[:at])
	if err != nil {
		return Info{}, err
	}
	into.Parent, into.ForkedAt = id, at
	if into.User == "" {
		into.User = st.Info.User
	}
	if into.Tenant == "" {
		into.Tenant = st.Info.Tenant
	}
	if err := ss.store.Create(ctx, into); err != nil {
		return Info{}, err
	}
	// The new session is empty until its checkpoint is stored: if that
	// fails, it is deleted again, so that the fork can be retried.
	bg := context.WithoutCancel(ctx)
	l, err := ss.store.Acquire(ctx, into.ID, ss.opts.Holder, ss.opts.LeaseTTL)
	if err == nil {
		err = ss.store.Append(ctx, l, Batch{Records: []Record{{Seq: 1, Base: true, Data: data}}, Status: StatusEnded})
		_ = ss.store.Release(bg, l) // a failed release lapses with the lease
	}
	if err != nil {
		if info, serr := ss.store.Stat(bg, into.ID); serr == nil && info.Head == 0 {
			_ = ss.store.Delete(bg, into.ID)
		}
		return Info{}, fmt.Errorf("session: forking %q into %q: %w", id, into.ID, err)
	}
	return ss.store.Stat(ctx, into.ID)
}

// Rewind cuts session id's transcript back to its first at messages, as
// if the rest had not been said; the next run carries on from there. The
// records stay (History shows them, and what was spent stays spent): a
// checkpoint record marks the new start. A paused session rewound to
// before its pending calls is no longer paused. The first at messages
// must not end between a tool call and its result. Rewind takes the
// session's lease, so it fails with ErrSessionBusy while the session is
// open elsewhere.
func (ss *Sessions) Rewind(ctx context.Context, id string, at int) error {
	s, err := ss.Open(ctx, id)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.rewind(ctx, at)
}
