package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolloop/toolloop/session"
)

// Acquire gives holder the session's writer lease for ttl, or returns
// session.ErrSessionBusy at once if another unexpired lease is held (see
// [session.Store.Acquire]). Tokens come from one counter for the whole
// file, so none ever repeats.
func (s *Store) Acquire(ctx context.Context, id, holder string, ttl time.Duration) (session.Lease, error) {
	if ttl <= 0 {
		return session.Lease{}, fmt.Errorf("sqlite: acquire session %q: %w: the lease's ttl %v is not positive", id, session.ErrInvalid, ttl)
	}
	var l session.Lease
	err := s.write(ctx, func(tx *sql.Tx) error {
		var held string
		var token, expires int64
		err := tx.QueryRowContext(ctx, `SELECT lease_holder, lease_token, lease_expires FROM sessions WHERE id = ?`, id).
			Scan(&held, &token, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return session.ErrNotFound
		}
		if err != nil {
			return err
		}
		t, tn := now()
		if token != 0 && expires > tn {
			return fmt.Errorf("%w: %q holds its lease until %s", session.ErrSessionBusy, held, fromNanos(expires).Format(timeFormat))
		}
		if err := tx.QueryRowContext(ctx, `UPDATE counters SET value = value + 1 WHERE name = 'lease_token' RETURNING value`).
			Scan(&token); err != nil {
			return fmt.Errorf("next lease token: %w", err)
		}
		exp := t.Add(ttl)
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET lease_holder = ?, lease_token = ?, lease_expires = ? WHERE id = ?`,
			holder, token, exp.UnixNano(), id); err != nil {
			return err
		}
		l = session.Lease{Session: id, Holder: holder, Token: token, Expires: exp}
		return nil
	})
	if err != nil {
		return session.Lease{}, fmt.Errorf("sqlite: acquire session %q for %q: %w", id, holder, err)
	}
	return l, nil
}

// Renew extends a lease still held to ttl from now; a lease that expired
// or was released gives session.ErrLeaseLost (see [session.Store.Renew]).
func (s *Store) Renew(ctx context.Context, l session.Lease, ttl time.Duration) (session.Lease, error) {
	if ttl <= 0 {
		return session.Lease{}, fmt.Errorf("sqlite: renew lease %d on session %q: %w: the ttl %v is not positive", l.Token, l.Session, session.ErrInvalid, ttl)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		t, tn := now()
		exp := t.Add(ttl)
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET lease_expires = ?
			WHERE id = ? AND lease_token = ? AND lease_token != 0 AND lease_expires > ?`,
			exp.UnixNano(), l.Session, l.Token, tn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("%w: it expired, was released, or the session was deleted", session.ErrLeaseLost)
		}
		l.Expires = exp
		return nil
	})
	if err != nil {
		return session.Lease{}, fmt.Errorf("sqlite: renew lease %d on session %q: %w", l.Token, l.Session, err)
	}
	return l, nil
}

// Release ends a lease; releasing one no longer held does nothing (see
// [session.Store.Release]).
func (s *Store) Release(ctx context.Context, l session.Lease) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET lease_holder = '', lease_token = 0, lease_expires = 0
			WHERE id = ? AND lease_token = ? AND lease_token != 0`, l.Session, l.Token)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: release lease %d on session %q: %w", l.Token, l.Session, err)
	}
	return nil
}
