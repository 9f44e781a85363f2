package sessiontest

import (
	"testing"

	"github.com/toolloop/toolloop/session"
)

// OpenDSN opens a Store on the backing a string names (a file path, a
// connection string), as a process of its own does.
type OpenDSN func(dsn string) (session.Store, error)

// Child runs the role of a child process of [TestProcesses] and exits,
// when the environment says this process is one; otherwise it returns at
// once. Call it first in TestMain:
//
//	func TestMain(m *testing.M) {
//		sessiontest.Child(open)
//		goleak.VerifyTestMain(m)
//	}
func Child(open OpenDSN) {
	// TODO(issue 37): the child roles.
}

// TestProcesses runs the fault tests across processes against the
// backings newDSN makes: it starts this test binary again as children
// (which must call [Child] in TestMain).
func TestProcesses(t *testing.T, newDSN func(t *testing.T) string, open OpenDSN) {
	t.Skip("TODO(issue 37): not written yet")
}

// Benchmark measures a store: the append of a turn and the load of a
// 1,000-turn session.
func Benchmark(b *testing.B, newBacking func(b *testing.B) func() session.Store) {
	b.Skip("TODO(issue 37): not written yet")
}
