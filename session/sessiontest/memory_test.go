package sessiontest_test

import (
	"testing"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sessiontest"
)

func TestMemory(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T) sessiontest.Opener {
		m := sessiontest.NewMemory()
		return func(*testing.T) session.Store { return m }
	})
}

func TestMemorySessions(t *testing.T) {
	sessiontest.TestSessions(t, func(t *testing.T) sessiontest.Opener {
		m := sessiontest.NewMemory()
		return func(*testing.T) session.Store { return m }
	})
}

func BenchmarkMemory(b *testing.B) {
	sessiontest.Benchmark(b, func(*testing.B) func() session.Store {
		m := sessiontest.NewMemory()
		return func() session.Store { return m }
	})
}
