// Package session keeps conversations in a store, across runs and
// processes: each session's events, its transcript and pause state, and
// what it has spent.
//
// [Store] is the small interface a backend implements, in the manner of
// database/sql/driver: sessions' metadata, their records (a run's events,
// as JSON), a writer's lease, and spend per session and tenant. This
// package holds [Dir], JSON Lines files in a folder; the nested modules
// github.com/toolloop/toolloop/session/sqlite (one file, the embedded
// default) and github.com/toolloop/toolloop/session/postgres (many
// processes) hold the others. Package sessiontest checks a Store.
package session
