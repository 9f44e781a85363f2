// Package sqlite is a [session.Store] in one SQLite file: the embedded
// default for programs that keep their sessions on one machine.
//
//	st, err := sqlite.Open("sessions.db")
//	if err != nil { ... }
//	defer st.Close()
//
// # The driver
//
// It uses modernc.org/sqlite, SQLite translated to pure Go, through
// database/sql. Of the SQLite drivers it is the one that needs neither
// cgo (mattn/go-sqlite3 does: a C toolchain for every build and
// cross-compile) nor a WebAssembly runtime (ncruces/go-sqlite3 runs SQLite
// compiled to WASM in wazero), and it is the most used pure-Go one. A
// program that imports this module still builds with CGO_ENABLED=0, for
// any platform the driver supports.
//
// # Durability
//
// The file is in WAL mode with synchronous=FULL: a commit is on disk
// before Append returns. A crash (of the process, or of the machine)
// loses nothing Append returned for; a batch whose Append had not
// returned is either all there or not at all. Records are written as
// they are given, byte for byte.
//
// # Several processes
//
// Any number of goroutines may use one [Store], and any number of
// processes on one machine may each [Open] their own on the same file:
// leases and appends are transactions (BEGIN IMMEDIATE), so they are
// atomic across all of them. A writer waits for the file's write lock
// (see [BusyTimeout]) rather than fail; within a process, writes take
// turns before they reach SQLite. Acquire does not wait for a lease: a
// session another writer holds gives [session.ErrSessionBusy] at once.
// Leases expire by the clock of the processes, which on one machine is
// one clock. The file must be on a local disk: SQLite's locking is not
// reliable over network file systems, and WAL mode does not work on them.
//
// Readers never wait for writers, nor block them: [Store.Records] reads
// a session in pages, each its own short query, and holds no transaction
// while the caller handles what it yields.
//
// # Schema
//
// The schema is versioned (PRAGMA user_version) and migrated by Open from
// the SQL files embedded in this package. A file written by a newer
// release, of a version this one does not know, is refused with an error
// wrapping [session.ErrSchemaVersion], and left as it was.
package sqlite
