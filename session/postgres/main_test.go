package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/postgres"
	"github.com/toolloop/toolloop/session/postgres/internal/pgtest"
	"github.com/toolloop/toolloop/session/sessiontest"
)

// openDSN opens a Store as a process of its own does: the child processes
// of sessiontest.TestProcesses open theirs with it.
func openDSN(dsn string) (session.Store, error) {
	return postgres.Open(context.Background(), dsn)
}

func TestMain(m *testing.M) {
	// A child of TestProcesses runs its role and exits here, before any
	// cluster is started: it uses its parent's.
	sessiontest.Child(openDSN)
	code := m.Run()
	if err := pgtest.StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newDatabase returns the connection string of a fresh database (see
// package pgtest: it skips without Postgres binaries).
func newDatabase(t testing.TB) string {
	t.Helper()
	return pgtest.NewDatabase(t)
}

// open opens a Store on dsn and closes it when t ends.
func open(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}
