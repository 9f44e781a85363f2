package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sessiontest"
	"github.com/toolloop/toolloop/session/sqlite"
)

func TestMain(m *testing.M) {
	sessiontest.Child(open)
	goleak.VerifyTestMain(m)
}

// open is the store on the file a DSN names, as a process of its own
// opens it.
func open(dsn string) (session.Store, error) {
	st, err := sqlite.Open(dsn)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// newBacking makes a fresh file for one test; each call of its Opener is
// another Store on that file.
func newBacking(t *testing.T) sessiontest.Opener {
	path := filepath.Join(t.TempDir(), "sessions.db")
	return func(t *testing.T) session.Store {
		return openT(t, path)
	}
}

// openT opens the store at path and closes it when t ends.
func openT(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return st
}

func TestConformance(t *testing.T) {
	sessiontest.TestStore(t, newBacking)
}

func TestSessions(t *testing.T) {
	sessiontest.TestSessions(t, newBacking)
}

func TestProcesses(t *testing.T) {
	sessiontest.TestProcesses(t, func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "sessions.db")
	}, open)
}

func BenchmarkStore(b *testing.B) {
	sessiontest.Benchmark(b, func(b *testing.B) func() session.Store {
		path := filepath.Join(b.TempDir(), "sessions.db")
		return func() session.Store {
			return openT(b, path)
		}
	})
}
