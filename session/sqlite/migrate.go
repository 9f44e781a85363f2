package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/toolloop/toolloop/session"
)

// The schema's migrations: migrations/NNNN_name.sql takes the file from
// version NNNN-1 to NNNN. They are numbered from 1 without gaps, and a
// released one is never edited: a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the migrations' SQL in order: the one at index i
// makes version i+1.
func migrations() ([]string, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	out := make([]string, len(names))
	for _, name := range names {
		num, _, _ := strings.Cut(path.Base(name), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 || v > len(names) || out[v-1] != "" {
			return nil, fmt.Errorf("migration %s: want names numbered 0001_ to %04d_, once each", name, len(names))
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out[v-1] = string(b)
	}
	return out, nil
}

// schemaVersion is the version of the schema this release writes
// (PRAGMA user_version of the file).
var schemaVersion = func() int {
	m, err := migrations()
	if err != nil {
		panic("sqlite: " + err.Error())
	}
	return len(m)
}()

// migrate brings the file's schema to schemaVersion. It first reads the
// version without changing anything, so that a file of a newer version is
// left as it was; then it turns WAL mode on (a lasting property of the
// file) and applies the migrations missing, in one transaction.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	version := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) (int, error) {
		var v int
		if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return 0, fmt.Errorf("read the schema version: %w", err)
		}
		if v > schemaVersion {
			return v, fmt.Errorf("%w: the file's schema is version %d, and this release knows versions up to %d: open it with a newer release",
				session.ErrSchemaVersion, v, schemaVersion)
		}
		return v, nil
	}
	v, err := version(conn)
	if err != nil {
		return err
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("turn on WAL mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("turn on WAL mode: the journal mode is still %q", mode)
	}
	if v == schemaVersion {
		return nil
	}
	steps, err := migrations()
	if err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// Another process may have migrated the file since.
	if v, err = version(tx); err != nil {
		return err
	}
	for i := v; i < schemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, steps[i]); err != nil {
			return fmt.Errorf("migrate the schema to version %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("record the schema version: %w", err)
	}
	return tx.Commit()
}
