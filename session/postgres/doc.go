// Package postgres is a [session.Store] on PostgreSQL (version 12 or
// later), for sessions that many processes on many machines share. It
// uses pgx (github.com/jackc/pgx/v5) and its pool.
//
// [Open] connects with a connection string and owns the pool; [New] takes
// a *pgxpool.Pool the caller made (for its own pool settings, tracing or
// TLS) and leaves it open on Close.
//
// # Many processes
//
// Every method is one statement (Create, Stat, List, Delete, Acquire,
// Renew, Release, Append, TenantSpend) or a series of independent ones
// (Records' pages), in autocommit: the Store never holds a transaction
// or a connection between calls, so any number of Stores in any number
// of processes can use one database at once. What must be atomic across
// them is atomic in the database: a lease is taken by one UPDATE of the
// session's row, and an append checks and writes in one statement.
//
// # Leases and fencing
//
// A session's row holds its lease: the holder, a token and the expiry.
// Expiry is by the database's clock (clock_timestamp()), never a
// client's, so machines whose clocks disagree still agree on whether a
// lease has lapsed; [session.Lease.Expires] is the database's time too.
// Acquire takes the lease only if none is held or the held one has
// expired, in one UPDATE … WHERE … RETURNING: of processes racing for a
// session, one wins and the others get [session.ErrSessionBusy] as soon
// as the winner's statement commits (they wait for that row lock alone,
// never for a transaction, as the Store holds none). Tokens come from one
// sequence of the schema, so they grow and never repeat, even for a
// session deleted and created again. Append checks the token and the
// expiry in the same statement that writes, with the row locked, so a
// writer whose lease lapsed and was taken cannot write with it: its
// append is refused with [session.ErrLeaseLost], whatever its own clock
// says.
//
// # Round trips
//
// An Append is one statement and one network round trip: data-modifying
// common table expressions lock the session's row, check the lease and
// the head, insert the records (unnest over arrays of seqs, bases and
// data), move the head, base, status and spend, and add the spend to the
// tenant's, all or nothing. [session.ErrLeaseLost] and
// [session.ErrConflict] come back from that one statement; Seqs that do
// not follow each other are refused before it, with [session.ErrInvalid].
// pgx prepares a statement the first time a pooled connection runs it
// (one more round trip, once per connection), and pgxpool pings a
// connection that was idle for over a second before it hands it out (set
// ShouldPing on your own pool and use New to change that). Records reads
// a page of at most 1,000 records or about 4 MB per round trip (keyset
// pagination on Seq), so memory is bounded by a page; each page is read
// on its own, holding nothing while the caller handles the records.
// Every other method is one round trip.
//
// Appends of one tenant with spend serialize on that tenant's row of
// spend for the moment of their statements; appends of different
// sessions are otherwise independent.
//
// # Schema and migrations
//
// The tables (toolloop_sessions, toolloop_records, toolloop_tenant_spend,
// toolloop_schema_version) and the sequence toolloop_lease_token go in
// the first schema of the connection's search_path; set search_path in
// the connection string to use another schema. Open and New migrate the
// schema to this build's version ([SchemaVersion]) from SQL files
// embedded in the package, in one transaction under an advisory lock on
// the schema's name: of several processes starting at once, one migrates
// and the others wait, then find nothing to do. A schema of a newer
// version than this build knows is refused with an error wrapping
// [session.ErrSchemaVersion], and left as it is.
//
// A stored row that does not decode (labels that are not a JSON object of
// strings, an unknown status) gives an error wrapping [session.ErrCorrupt]
// that names the session. Errors of a canceled or expired context match
// the context's error with errors.Is.
//
// # What a crash loses
//
// An append that returned nil was committed by Postgres: a crash of the
// writer's process loses nothing of it (a crash of the database server
// loses it only if the server runs with synchronous_commit or fsync off).
// An append whose call did not return (the process died, the connection
// broke) was committed whole or not at all; read the session's Head to
// know which. A crashed writer's lease lapses at its expiry, and the next
// writer takes the session then.
package postgres
