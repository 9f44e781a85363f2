package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolloop/toolloop/session"
)

// Store is a [session.Store] on a Postgres database. It is safe for
// concurrent use, and so are any number of Stores on the same database
// in any number of processes (see the package documentation).
type Store struct {
	pool      *pgxpool.Pool
	ownsPool  bool
	closeOnce sync.Once
}

var _ session.Store = (*Store)(nil)

// Open connects to the database connString names (a URL or key=value
// string, as [pgxpool.ParseConfig] reads it, pool settings included),
// migrates its schema to this build's version, and returns a Store that
// owns the pool: Close closes it. The tables go in the first schema of
// the connection's search_path (set search_path in connString to pick
// another).
func Open(ctx context.Context, connString string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("session/postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("session/postgres: %w", err)
	}
	st, err := New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	st.ownsPool = true
	return st, nil
}

// New returns a Store on a pool the caller made and keeps: Close leaves
// it open. It migrates the schema first, as Open does.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("session/postgres: New: %w: a nil pool", session.ErrInvalid)
	}
	if err := migrate(ctx, pool); err != nil {
		return nil, wrapErr(ctx, "migrate the schema", "", err)
	}
	return &Store{pool: pool}, nil
}

// Close closes the pool if Open made it. It is safe to call more than
// once; the Store is not usable after it.
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		if s.ownsPool {
			s.pool.Close()
		}
	})
}

// Create implements [session.Store].
func (s *Store) Create(ctx context.Context, info session.Info) error {
	if err := session.CheckID(info.ID); err != nil {
		return err
	}
	labels := []byte("{}")
	if len(info.Labels) > 0 {
		var err error
		if labels, err = json.Marshal(info.Labels); err != nil {
			return fmt.Errorf("session/postgres: create %q: %w", info.ID, err)
		}
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO toolloop_sessions (id, user_name, tenant, title, labels, parent, forked_at)
VALUES ($1, $2, $3, $4, $5::text::jsonb, $6, $7)
ON CONFLICT (id) DO NOTHING`,
		info.ID, info.User, info.Tenant, info.Title, string(labels), info.Parent, int64(info.ForkedAt))
	if err != nil {
		return wrapErr(ctx, "create", info.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("session/postgres: create %q: %w", info.ID, session.ErrExists)
	}
	return nil
}

// infoColumns are the columns scanInfo reads, in its order.
const infoColumns = `id, user_name, tenant, title, labels::text, parent, forked_at, created, updated,
	head, base, status, input_tokens, output_tokens, cost`

// scanInfo reads a row of infoColumns; a row that does not decode gives
// an error wrapping session.ErrCorrupt.
func scanInfo(row pgx.Row) (session.Info, error) {
	var (
		in       session.Info
		labels   string
		forkedAt int64
		status   string
	)
	err := row.Scan(&in.ID, &in.User, &in.Tenant, &in.Title, &labels, &in.Parent, &forkedAt, &in.Created, &in.Updated,
		&in.Head, &in.Base, &status, &in.Spent.InputTokens, &in.Spent.OutputTokens, &in.Spent.Cost)
	if err != nil {
		return in, err
	}
	in.ForkedAt = int(forkedAt)
	if labels != "{}" {
		if err := json.Unmarshal([]byte(labels), &in.Labels); err != nil {
			return in, fmt.Errorf("%w: session %q: its labels %.100s do not decode: %v", session.ErrCorrupt, in.ID, labels, err)
		}
	}
	switch in.Status = session.Status(status); in.Status {
	case session.StatusNew, session.StatusRunning, session.StatusPaused, session.StatusEnded:
	default:
		return in, fmt.Errorf("%w: session %q has the unknown status %.100q", session.ErrCorrupt, in.ID, status)
	}
	return in, nil
}

// Stat implements [session.Store].
func (s *Store) Stat(ctx context.Context, id string) (session.Info, error) {
	in, err := scanInfo(s.pool.QueryRow(ctx, `SELECT `+infoColumns+` FROM toolloop_sessions WHERE id = $1`, id))
	if err != nil {
		return session.Info{}, wrapErr(ctx, "stat", id, err)
	}
	return in, nil
}

// List implements [session.Store].
func (s *Store) List(ctx context.Context, f session.Filter) ([]session.Info, error) {
	if f.Limit < 0 || f.Offset < 0 {
		return nil, fmt.Errorf("session/postgres: list: %w: a negative limit or offset (%d, %d)", session.ErrInvalid, f.Limit, f.Offset)
	}
	var (
		where []string
		args  []any
	)
	cond := func(sql string, arg any) {
		args = append(args, arg)
		where = append(where, fmt.Sprintf(sql, len(args)))
	}
	if f.User != "" {
		cond("user_name = $%d", f.User)
	}
	if f.Tenant != "" {
		cond("tenant = $%d", f.Tenant)
	}
	if f.Status != "" {
		cond("status = $%d", string(f.Status))
	}
	if !f.UpdatedSince.IsZero() {
		cond("updated >= $%d", f.UpdatedSince)
	}
	q := `SELECT ` + infoColumns + ` FROM toolloop_sessions`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY updated DESC, id`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	if f.Offset > 0 {
		args = append(args, f.Offset)
		q += fmt.Sprintf(` OFFSET $%d`, len(args))
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrapErr(ctx, "list", "", err)
	}
	defer rows.Close()
	var out []session.Info
	for rows.Next() {
		in, err := scanInfo(rows)
		if err != nil {
			return nil, wrapErr(ctx, "list", "", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr(ctx, "list", "", err)
	}
	return out, nil
}

// Delete implements [session.Store]. It is one statement: the session's
// row goes only if no unexpired lease is on it, and its records with it.
func (s *Store) Delete(ctx context.Context, id string) error {
	var found, deleted bool
	err := s.pool.QueryRow(ctx, `WITH d AS (
	DELETE FROM toolloop_sessions
	WHERE id = $1 AND (lease_token IS NULL OR lease_expires <= clock_timestamp())
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM toolloop_sessions WHERE id = $1), EXISTS (SELECT 1 FROM d)`, id).Scan(&found, &deleted)
	switch {
	case err != nil:
		return wrapErr(ctx, "delete", id, err)
	case deleted:
		return nil
	case found:
		return fmt.Errorf("session/postgres: delete %q: %w", id, session.ErrSessionBusy)
	default:
		return fmt.Errorf("session/postgres: delete %q: %w", id, session.ErrNotFound)
	}
}

// TenantSpend implements [session.Store].
func (s *Store) TenantSpend(ctx context.Context, tenant string) (session.Spend, error) {
	var sp session.Spend
	err := s.pool.QueryRow(ctx, `SELECT input_tokens, output_tokens, cost FROM toolloop_tenant_spend WHERE tenant = $1`, tenant).
		Scan(&sp.InputTokens, &sp.OutputTokens, &sp.Cost)
	if err == pgx.ErrNoRows {
		return session.Spend{}, nil
	}
	if err != nil {
		return session.Spend{}, wrapErr(ctx, "tenant spend", tenant, err)
	}
	return sp, nil
}

// micros is d in whole microseconds, Postgres's resolution, at least 1
// for a positive d.
func micros(d time.Duration) int64 {
	us := d.Microseconds()
	if us == 0 && d > 0 {
		us = 1
	}
	return us
}
