package postgres_test

import (
	"testing"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sessiontest"
)

// newBacking makes a fresh database for one test; its Opener opens
// another Store on it each call, closed when that test ends.
func newBacking(t *testing.T) sessiontest.Opener {
	dsn := newDatabase(t)
	return func(t *testing.T) session.Store { return open(t, dsn) }
}

func TestConformance(t *testing.T) {
	sessiontest.TestStore(t, newBacking)
}

func TestSessions(t *testing.T) {
	sessiontest.TestSessions(t, newBacking)
}

func TestProcesses(t *testing.T) {
	sessiontest.TestProcesses(t, func(t *testing.T) string { return newDatabase(t) }, openDSN)
}

func BenchmarkStore(b *testing.B) {
	sessiontest.Benchmark(b, func(b *testing.B) func() session.Store {
		dsn := newDatabase(b)
		return func() session.Store { return open(b, dsn) }
	})
}
