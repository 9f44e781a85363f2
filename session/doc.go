// Package session keeps conversations in a store, across runs and
// processes: each session's events, its transcript and pause state, and
// what it has spent.
//
// [Sessions] is the API programs use. Open a session (a writer's lease on
// it: one process at a time), run an [toolloop.AgentLoop] on it, close
// it; another request, process or machine opens it again and carries on:
//
//	sessions := session.New(store, session.Options{})
//	s, err := sessions.Open(ctx, id) // session.ErrNotFound: sessions.Create
//	if err != nil { ... }            // session.ErrSessionBusy: another writer has it
//	defer s.Close()
//	res, err := s.Run(ctx, loop, toolloop.UserMessage(prompt))
//
// Beside Open and Run: [Session.Resume] resumes a run paused for
// approvals, in whatever process the decision arrives; [Session.Start]
// hands the run to a caller that streams it; [Sessions.List] lists
// sessions by user, tenant, status and time; [Sessions.Fork] copies the
// start of a conversation into a new session ("try again from message
// 12"), and [Sessions.Rewind] cuts one back; [Sessions.Load] and
// [Sessions.History] read a session without taking it.
//
// # What is stored, and when
//
// A run's durable events (see toolloop.EventType.Transient) are stored
// as the run makes them, in one append per turn: the turn's model
// response that asks for calls is stored before any of them starts, as
// are a paused run's resumption and every run's end. So a call runs once
// whatever fails: a process that dies after the response was stored
// leaves calls that the next run answers as interrupted (it may or may
// not have taken effect) and does not run again, the same recovery as
// the eventlog package's; a process that dies before leaves nothing of
// the turn, and the next run asks the model again. A store that fails
// cancels the run before its next call starts. Two processes that resume
// one paused session race for its lease: one gets it, the other
// ErrSessionBusy at once; the winner stores the resumption before the
// approved calls run, so a third finds nothing to resume.
//
// # Loading what the model needs
//
// A run's start holds the whole transcript it was given, and a
// compaction (a context manager's edit that removes messages, such as
// toolloop.Compactor's) is followed by a checkpoint record holding the
// transcript after it: loading a session reads from the last of these
// (Info.Base) on, however long its history. History still yields every
// record.
//
// # Spending caps
//
// [Caps] bound each session's spending and each tenant's, in tokens and
// US dollars, across runs and processes: the store adds each turn's
// spend as it appends, and a run checks the caps before every model
// turn (through toolloop.Budget.Shared), ending with a
// *toolloop.BudgetError wrapping a *[CapError] when one is reached. Runs
// of one tenant at once overspend its cap by at most one turn each.
//
// # Stores
//
// [Store] is the small interface a backend implements, in the manner of
// database/sql/driver: sessions' metadata, their records (events as
// JSON, kept byte for byte), a writer's lease with a fencing token, and
// spend per session and tenant. The conformance suites of package
// sessiontest check an implementation, across processes too.
//
//	Store                        where                          for
//	session.Dir                  JSON Lines files in a folder   one machine, a few sessions, readable files
//	sessiontest.Memory           memory                         tests
//	session/sqlite module        one SQLite file (pure Go)      the embedded default: one machine, many sessions
//	session/postgres module      a Postgres database (pgx)      many processes and machines
package session
