package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/toolloop/toolloop/session"
)

// wrapErr turns an error of pgx into the store's: pgx.ErrNoRows is
// session.ErrNotFound; an error while ctx is done matches ctx's error
// with errors.Is (pgx's own does not always); a Postgres error keeps its
// *pgconn.PgError for errors.As. The message names the operation and the
// session or tenant.
func wrapErr(ctx context.Context, op, id string, err error) error {
	what := op
	if id != "" {
		what = fmt.Sprintf("%s %q", op, id)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("session/postgres: %s: %w", what, session.ErrNotFound)
	case errors.Is(err, session.ErrCorrupt) || errors.Is(err, session.ErrSchemaVersion):
		return fmt.Errorf("session/postgres: %s: %w", what, err)
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("session/postgres: %s: %w (%w)", what, cerr, err)
	}
	return fmt.Errorf("session/postgres: %s: %w", what, err)
}
