package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/toolloop/toolloop/session"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// BusyTimeout is how long a write waits for the file's write lock, held
// by another process's write, before it fails. Writes are short (one
// append's records), so the wait is rarely more than milliseconds.
const BusyTimeout = 5 * time.Second

// ErrClosed is returned by the methods of a Store after [Store.Close].
var ErrClosed = errors.New("sqlite: the session store is closed")

// Store is a [session.Store] on one SQLite file. Its methods are safe for
// concurrent use, and other Stores, of this process or others on the same
// machine, may use the same file at the same time. Open one with [Open].
type Store struct {
	db   *sql.DB
	path string
	// writing holds a token while a write transaction of this Store runs:
	// the process's writers take turns here, where waiting honours the
	// context, and only other processes' writers meet at SQLite's lock.
	writing chan struct{}
	closed  atomic.Bool
	// pages counts the queries Records has run, for the tests.
	pages atomic.Int64
}

var _ session.Store = (*Store)(nil)

// Open opens the session store in the SQLite file at path, creating the
// file if there is none, and migrates its schema to this release's
// version. It refuses, with an error wrapping [session.ErrSchemaVersion]
// and nothing changed, a file whose schema is newer than this release
// knows. Close the Store when done.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite: open: %w: the path is empty", session.ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(4)
	s := &Store{db: db, path: path, writing: make(chan struct{}, 1)}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return s, nil
}

// dsn is the driver's name for the file at the absolute path abs, with
// the settings every connection takes: how long to wait for a lock,
// durable commits, foreign keys (records go with their session), and
// write transactions that take the write lock when they begin (BEGIN
// IMMEDIATE), so that none fails to upgrade a read lock half-way.
// Journal mode is set by migrate, once the schema version is known to be
// one this release may touch.
func dsn(abs string) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	q.Set("_synchronous", "FULL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	p := filepath.ToSlash(abs)
	if p != "" && p[0] != '/' {
		p = "/" + p // a Windows drive: file:///C:/...
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// Close closes the store's connections to the file. A second Close does
// nothing. Records iterations still running end with an error.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sqlite: close %s: %w", s.path, err)
	}
	return nil
}

// usable returns ErrClosed after Close, else ctx's error if it is done.
func (s *Store) usable(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// write runs fn in a write transaction: all of it is committed, or, if fn
// or the commit fails, none of it.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	select {
	case s.writing <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.writing }()
	if s.closed.Load() {
		return ErrClosed
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// now is the store's clock: the time, and the same in Unix nanoseconds as
// the file keeps it.
func now() (time.Time, int64) {
	t := time.Now().UTC()
	return t, t.UnixNano()
}

// fromNanos turns a time the file keeps back into a time.Time.
func fromNanos(n int64) time.Time {
	return time.Unix(0, n).UTC()
}
