package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/toolloop/toolloop/session"
)

// Create stores a new session (see [session.Store.Create]).
func (s *Store) Create(ctx context.Context, info session.Info) error {
	if err := session.CheckID(info.ID); err != nil {
		return fmt.Errorf("sqlite: create: %w", err)
	}
	var labels sql.NullString
	if len(info.Labels) > 0 {
		b, err := json.Marshal(info.Labels)
		if err != nil {
			return fmt.Errorf("sqlite: create session %q: labels: %w", info.ID, err)
		}
		labels = sql.NullString{String: string(b), Valid: true}
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?)`, info.ID).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return session.ErrExists
		}
		_, t := now()
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions
			(id, user, tenant, title, labels, parent, forked_at, created, updated, status)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			info.ID, info.User, info.Tenant, info.Title, labels, info.Parent, info.ForkedAt, t, t, string(session.StatusNew))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create session %q: %w", info.ID, err)
	}
	return nil
}

// infoColumns are the columns scanInfo reads, in its order.
const infoColumns = `id, user, tenant, title, labels, parent, forked_at, created, updated,
	head, base, status, spent_in, spent_out, spent_cost`

// scanInfo reads a session's row of infoColumns. A row that does not
// decode gives an error wrapping session.ErrCorrupt.
func scanInfo(row interface{ Scan(...any) error }) (session.Info, error) {
	var (
		in               session.Info
		labels           sql.NullString
		created, updated int64
		status           string
	)
	if err := row.Scan(&in.ID, &in.User, &in.Tenant, &in.Title, &labels, &in.Parent, &in.ForkedAt, &created, &updated,
		&in.Head, &in.Base, &status, &in.Spent.InputTokens, &in.Spent.OutputTokens, &in.Spent.Cost); err != nil {
		return in, err
	}
	in.Created, in.Updated = fromNanos(created), fromNanos(updated)
	in.Status = session.Status(status)
	if !knownStatus(in.Status) {
		return in, fmt.Errorf("%w: session %q has the unknown status %q", session.ErrCorrupt, in.ID, status)
	}
	if labels.Valid {
		if err := json.Unmarshal([]byte(labels.String), &in.Labels); err != nil {
			return in, fmt.Errorf("%w: session %q: its labels are not a JSON object of strings: %v", session.ErrCorrupt, in.ID, err)
		}
	}
	return in, nil
}

func knownStatus(st session.Status) bool {
	switch st {
	case session.StatusNew, session.StatusRunning, session.StatusPaused, session.StatusEnded:
		return true
	}
	return false
}

// Stat returns a session's metadata (see [session.Store.Stat]).
func (s *Store) Stat(ctx context.Context, id string) (session.Info, error) {
	if err := s.usable(ctx); err != nil {
		return session.Info{}, fmt.Errorf("sqlite: stat session %q: %w", id, err)
	}
	in, err := scanInfo(s.db.QueryRowContext(ctx, `SELECT `+infoColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = session.ErrNotFound
	}
	if err != nil {
		return session.Info{}, fmt.Errorf("sqlite: stat session %q: %w", id, err)
	}
	return in, nil
}

// List returns the sessions f selects, the most recently updated first,
// then by ID (see [session.Store.List]).
func (s *Store) List(ctx context.Context, f session.Filter) ([]session.Info, error) {
	if f.Limit < 0 || f.Offset < 0 {
		return nil, fmt.Errorf("sqlite: list: %w: limit %d and offset %d must not be negative", session.ErrInvalid, f.Limit, f.Offset)
	}
	if err := s.usable(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: list: %w", err)
	}
	var where []string
	var args []any
	add := func(cond string, arg any) {
		where = append(where, cond)
		args = append(args, arg)
	}
	if f.User != "" {
		add("user = ?", f.User)
	}
	if f.Tenant != "" {
		add("tenant = ?", f.Tenant)
	}
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	if !f.UpdatedSince.IsZero() {
		add("updated >= ?", clampNanos(f.UpdatedSince))
	}
	q := `SELECT ` + infoColumns + ` FROM sessions`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	limit := int64(-1) // SQLite: no bound
	if f.Limit > 0 {
		limit = int64(f.Limit)
	}
	q += ` ORDER BY updated DESC, id LIMIT ? OFFSET ?`
	args = append(args, limit, f.Offset)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list: %w", err)
	}
	defer rows.Close()
	var out []session.Info
	for rows.Next() {
		in, err := scanInfo(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list: %w", err)
	}
	return out, nil
}

// Delete removes a session and its records (see [session.Store.Delete]).
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		var sid, token, expires int64
		var holder string
		err := tx.QueryRowContext(ctx, `SELECT sid, lease_holder, lease_token, lease_expires FROM sessions WHERE id = ?`, id).
			Scan(&sid, &holder, &token, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return session.ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, t := now(); token != 0 && expires > t {
			return fmt.Errorf("%w: %q holds its lease until %s", session.ErrSessionBusy, holder, fromNanos(expires).Format(timeFormat))
		}
		// The records go with the session (ON DELETE CASCADE).
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE sid = ?`, sid)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete session %q: %w", id, err)
	}
	return nil
}

// timeFormat is how errors show a lease's expiry.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// TenantSpend returns what the sessions of tenant have spent together,
// deleted sessions included (see [session.Store.TenantSpend]).
func (s *Store) TenantSpend(ctx context.Context, tenant string) (session.Spend, error) {
	if err := s.usable(ctx); err != nil {
		return session.Spend{}, fmt.Errorf("sqlite: spend of tenant %q: %w", tenant, err)
	}
	var sp session.Spend
	err := s.db.QueryRowContext(ctx, `SELECT spent_in, spent_out, spent_cost FROM tenants WHERE tenant = ?`, tenant).
		Scan(&sp.InputTokens, &sp.OutputTokens, &sp.Cost)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return session.Spend{}, fmt.Errorf("sqlite: spend of tenant %q: %w", tenant, err)
	}
	return sp, nil
}

// clampNanos is t in Unix nanoseconds, the column's unit, held to the
// range an int64 spans (years 1678 to 2262), where UnixNano overflows.
func clampNanos(t time.Time) int64 {
	switch {
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	}
	return t.UnixNano()
}
