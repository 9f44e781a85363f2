package session

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
)

// The errors of a Store and of [Sessions]. Stores return them wrapped or
// as they are; match them with errors.Is.
var (
	// ErrNotFound: no session has the ID.
	ErrNotFound = errors.New("session: no such session")
	// ErrExists: a session with the ID already exists.
	ErrExists = errors.New("session: a session with this ID already exists")
	// ErrSessionBusy: another writer holds the session's lease, and it
	// has not expired. It is returned at once, never after waiting.
	ErrSessionBusy = errors.New("session: the session is in use by another writer")
	// ErrLeaseLost: the lease expired and may have been taken by another
	// writer, or was released; nothing was written with it.
	ErrLeaseLost = errors.New("session: the lease on the session was lost")
	// ErrConflict: an append's first record does not follow the
	// session's last one; nothing was written.
	ErrConflict = errors.New("session: the records do not follow the session's last record")
	// ErrCorrupt: a stored record or session does not decode.
	ErrCorrupt = errors.New("session: corrupt record")
	// ErrSchemaVersion: the store's schema is of a version this build
	// does not know (written by a newer release); nothing was changed.
	ErrSchemaVersion = errors.New("session: unknown schema version")
	// ErrInvalid: an argument is not valid (an empty or too long ID, a
	// negative limit, a message index out of range).
	ErrInvalid = errors.New("session: invalid argument")
)

// MaxIDLength bounds the length of a session ID, in bytes.
const MaxIDLength = 200

// CheckID returns an error wrapping [ErrInvalid] if id cannot name a
// session: it must be 1 to [MaxIDLength] bytes of ASCII letters, digits
// and the characters "-_.:@", and not start with a dot. Stores call it in
// Create. The rule keeps IDs printable, safe in logs and free of path
// separators; a store that names files after them still has to escape
// what a file system refuses or folds (Dir escapes ":", upper case and
// device names such as "nul").
func CheckID(id string) error {
	if id == "" || len(id) > MaxIDLength {
		return fmt.Errorf("%w: a session ID must be 1 to %d bytes long, not %d", ErrInvalid, MaxIDLength, len(id))
	}
	if id[0] == '.' {
		return fmt.Errorf("%w: session ID %q starts with a dot", ErrInvalid, id)
	}
	for _, r := range id {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:@", r) {
			continue
		}
		return fmt.Errorf("%w: session ID %q holds %q: use letters, digits and -_.:@", ErrInvalid, id, r)
	}
	return nil
}

// Status is where a session's last run got to, as its records say.
type Status string

// The statuses of a session.
const (
	// StatusNew: no run has been recorded.
	StatusNew Status = "new"
	// StatusRunning: a run started and has not ended: it is under way,
	// or its process died (the next run repairs it).
	StatusRunning Status = "running"
	// StatusPaused: the last run waits for approvals (see
	// [Session.Resume]).
	StatusPaused Status = "paused"
	// StatusEnded: the last run ended, with an answer or an error.
	StatusEnded Status = "ended"
)

// Spend is what a session, or a tenant's sessions together, have spent
// on model turns: tokens and US dollars (priced as
// [toolloop.AgentLoop.ModelTable] says).
type Spend struct {
	InputTokens  int64   `json:"input_tokens,omitempty"`
	OutputTokens int64   `json:"output_tokens,omitempty"`
	Cost         float64 `json:"cost_usd,omitempty"`
}

// Tokens returns the input and output tokens together.
func (s Spend) Tokens() int64 { return s.InputTokens + s.OutputTokens }

// Add returns s plus o.
func (s Spend) Add(o Spend) Spend {
	return Spend{InputTokens: s.InputTokens + o.InputTokens, OutputTokens: s.OutputTokens + o.OutputTokens, Cost: s.Cost + o.Cost}
}

// IsZero reports whether nothing was spent.
func (s Spend) IsZero() bool { return s == Spend{} }

// Info is a session's metadata, as a Store keeps it.
type Info struct {
	// ID names the session (see [CheckID]).
	ID string `json:"id"`
	// User and Tenant say whose it is; [Filter] selects on them, and
	// spending caps apply per Tenant (see [Caps]).
	User   string `json:"user,omitempty"`
	Tenant string `json:"tenant,omitempty"`
	// Title describes it for people.
	Title string `json:"title,omitempty"`
	// Labels are the caller's own.
	Labels map[string]string `json:"labels,omitempty"`
	// Parent is the session this one was forked from, and ForkedAt the
	// number of the parent's messages it kept (see [Sessions.Fork]).
	Parent   string `json:"parent,omitempty"`
	ForkedAt int    `json:"forked_at,omitempty"`

	// The store sets the fields below; Create ignores them.

	// Created and Updated are when the session was created and last
	// appended to, by the store's clock.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Head is the Seq of the session's last record, 0 if it has none.
	Head int64 `json:"head"`
	// Base is the Seq of its last record marked Base, from which loading
	// starts; 0 if none is.
	Base int64 `json:"base"`
	// Status is the last Status an append set; StatusNew before any.
	Status Status `json:"status"`
	// Spent is what the session has spent, the sum of its appends'.
	Spent Spend `json:"spent,omitzero"`
}

// Filter selects sessions for [Store.List]. Zero fields select all.
type Filter struct {
	User   string
	Tenant string
	Status Status
	// UpdatedSince selects the sessions updated at or after it.
	UpdatedSince time.Time
	// Limit bounds how many are returned (0: no bound), after skipping
	// Offset of them.
	Limit, Offset int
}

// Record is one stored record of a session: an event of one of its runs
// (a [toolloop.Event] as JSON) or a record the session package writes
// itself, such as a checkpoint. Stores keep Data as it is, byte for
// byte, and never look into it.
type Record struct {
	// Seq numbers the session's records from 1, without gaps.
	Seq int64
	// Base marks a record that loading may start from: it holds the
	// whole transcript so far (a run's start, a checkpoint).
	Base bool
	// Data is the record: JSON, which a store may check (refusing other
	// data with an error wrapping ErrInvalid).
	Data []byte
}

// Lease is a writer's hold on a session (see [Store.Acquire]).
type Lease struct {
	// Session is the session's ID and Holder the writer's name.
	Session string
	Holder  string
	// Token fences the lease: each Acquire of a session gets a larger one
	// than any before it, and no token repeats for an ID, even after the
	// session is deleted and created again, so a writer whose lease has
	// expired and been taken cannot append with it.
	Token int64
	// Expires is when the lease ends unless renewed, by the store's
	// clock.
	Expires time.Time
}

// Batch is what one [Store.Append] writes: a run's records since the last
// append, and what they change in the session's metadata, all or
// nothing.
type Batch struct {
	// Records are appended in order; the first's Seq must be the
	// session's Head plus one, and each next one's one more.
	Records []Record
	// Spend is added to the session's Spent and to its tenant's.
	Spend Spend
	// Status, if set, is the session's new Status.
	Status Status
}

// Store keeps sessions: their metadata and their records. It is the
// interface a backend implements (this package's [Dir], the sqlite and
// postgres modules); programs use it through [Sessions]. The conformance
// tests in package sessiontest check an implementation.
//
// Every method is safe for concurrent use, and so are several Stores on
// the same backing (other processes, other machines) as far as the
// implementation says: leases and appends are then atomic across them.
type Store interface {
	// Create stores a new session with info's ID, User, Tenant, Title,
	// Labels, Parent and ForkedAt, no records, and StatusNew. It returns
	// ErrExists if the ID is taken, and an error wrapping ErrInvalid if
	// [CheckID] refuses it.
	Create(ctx context.Context, info Info) error
	// Stat returns a session's metadata, or ErrNotFound.
	Stat(ctx context.Context, id string) (Info, error)
	// List returns the sessions f selects, the most recently updated
	// first, then by ID.
	List(ctx context.Context, f Filter) ([]Info, error)
	// Delete removes a session and its records. It returns ErrNotFound
	// if there is none, and ErrSessionBusy while another writer's lease
	// on it has not expired. A tenant's spend keeps what the session
	// spent.
	Delete(ctx context.Context, id string) error

	// Acquire gives holder the session's writer lease until ttl from now,
	// with a new Token, if no lease on it is held or the one held has
	// expired (a crashed writer's lease lapses so). Otherwise it returns
	// ErrSessionBusy at once, even to the same holder. ErrNotFound if
	// there is no session.
	Acquire(ctx context.Context, id, holder string, ttl time.Duration) (Lease, error)
	// Renew extends a lease still held to ttl from now; a lease that
	// expired or was released gives ErrLeaseLost, even if nobody took it
	// since.
	Renew(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)
	// Release ends a lease. Releasing a lease that is no longer held is
	// not an error: it does nothing.
	Release(ctx context.Context, l Lease) error

	// Append writes b with the lease l: all of it or, with an error,
	// nothing. It returns ErrLeaseLost if l is not the session's current
	// lease or has expired, ErrConflict if b's first record does not
	// follow the session's Head, and an error wrapping ErrInvalid if
	// b's Seqs do not follow each other. It sets Updated, and leaves the
	// lease's expiry as it was.
	Append(ctx context.Context, l Lease, b Batch) error
	// Records yields the session's records with Seq at or after from,
	// in order. It yields ErrNotFound if there is no session. Records
	// appended while it runs may or may not be yielded.
	Records(ctx context.Context, id string, from int64) iter.Seq2[Record, error]

	// TenantSpend returns what the sessions of tenant have spent
	// together, deleted sessions included.
	TenantSpend(ctx context.Context, tenant string) (Spend, error)
}
