package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolloop/toolloop/session"
)

// The schema's migrations, applied in order of their number: 0001_init.sql
// takes an empty schema to version 1, 0002_….sql takes version 1 to 2,
// and so on. A released file is never changed; a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order, and checks that
// they are numbered 1, 2, 3… without a gap.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: the name must start with its version number and an underscore", base)
		}
		data, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(data)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d there", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the version of the schema this build creates and
// knows: the number of its last migration.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // the embedded files are checked by the tests
	}
	return len(ms)
}

// migrate brings the schema up to this build's version, in one
// transaction under a transaction-level advisory lock on the schema's
// name, so that of several processes starting at once one migrates and
// the others wait for it and then find nothing to do. A schema of a
// newer version than this build knows is left as it is, with an error
// wrapping session.ErrSchemaVersion.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('toolloop/session/postgres:' || current_schema(), 0))`); err != nil {
			return fmt.Errorf("lock the schema: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS toolloop_schema_version (
	version integer PRIMARY KEY,
	name    text NOT NULL,
	applied timestamptz NOT NULL DEFAULT now()
)`); err != nil {
			return fmt.Errorf("create the version table: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM toolloop_schema_version`).Scan(&have); err != nil {
			return fmt.Errorf("read the schema version: %w", err)
		}
		if have > len(ms) {
			return fmt.Errorf("%w: the database's schema is at version %d, and this build knows versions up to %d: upgrade github.com/toolloop/toolloop/session/postgres",
				session.ErrSchemaVersion, have, len(ms))
		}
		for _, m := range ms[have:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO toolloop_schema_version (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
		}
		return nil
	})
}
