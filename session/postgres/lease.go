package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolloop/toolloop/session"
)

// Acquire implements [session.Store]. It is one statement, an UPDATE of
// the session's row that takes the lease only if none is held or the one
// held has expired by the database's clock, with a token from a sequence
// of the schema. Of several racing for it, the first to update the row
// wins; the others wait for that statement alone (not a transaction of
// the winner's: there is none) and find the lease held.
func (s *Store) Acquire(ctx context.Context, id, holder string, ttl time.Duration) (session.Lease, error) {
	if ttl <= 0 {
		return session.Lease{}, fmt.Errorf("session/postgres: acquire %q: %w: a ttl of %v", id, session.ErrInvalid, ttl)
	}
	l := session.Lease{Session: id, Holder: holder}
	var found, won bool
	err := s.pool.QueryRow(ctx, `WITH u AS (
	UPDATE toolloop_sessions
	SET lease_holder = $2, lease_token = nextval('toolloop_lease_token'),
		lease_expires = clock_timestamp() + $3 * interval '1 microsecond'
	WHERE id = $1 AND (lease_token IS NULL OR lease_expires <= clock_timestamp())
	RETURNING lease_token, lease_expires
)
SELECT EXISTS (SELECT 1 FROM toolloop_sessions WHERE id = $1), EXISTS (SELECT 1 FROM u),
	coalesce((SELECT lease_token FROM u), 0), coalesce((SELECT lease_expires FROM u), 'epoch')`,
		id, holder, micros(ttl)).Scan(&found, &won, &l.Token, &l.Expires)
	switch {
	case err != nil:
		return session.Lease{}, wrapErr(ctx, "acquire", id, err)
	case won:
		return l, nil
	case found:
		return session.Lease{}, fmt.Errorf("session/postgres: acquire %q: %w", id, session.ErrSessionBusy)
	default:
		return session.Lease{}, fmt.Errorf("session/postgres: acquire %q: %w", id, session.ErrNotFound)
	}
}

// Renew implements [session.Store]: one UPDATE, of the lease only if it
// is still the session's and has not expired by the database's clock.
func (s *Store) Renew(ctx context.Context, l session.Lease, ttl time.Duration) (session.Lease, error) {
	if ttl <= 0 {
		return session.Lease{}, fmt.Errorf("session/postgres: renew %q: %w: a ttl of %v", l.Session, session.ErrInvalid, ttl)
	}
	err := s.pool.QueryRow(ctx, `UPDATE toolloop_sessions
SET lease_expires = clock_timestamp() + $3 * interval '1 microsecond'
WHERE id = $1 AND lease_token = $2 AND lease_expires > clock_timestamp()
RETURNING lease_expires`, l.Session, l.Token, micros(ttl)).Scan(&l.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Lease{}, fmt.Errorf("session/postgres: renew %q: %w", l.Session, session.ErrLeaseLost)
	}
	if err != nil {
		return session.Lease{}, wrapErr(ctx, "renew", l.Session, err)
	}
	return l, nil
}

// Release implements [session.Store].
func (s *Store) Release(ctx context.Context, l session.Lease) error {
	_, err := s.pool.Exec(ctx, `UPDATE toolloop_sessions SET lease_holder = NULL, lease_token = NULL, lease_expires = NULL
WHERE id = $1 AND lease_token = $2`, l.Session, l.Token)
	if err != nil {
		return wrapErr(ctx, "release", l.Session, err)
	}
	return nil
}
