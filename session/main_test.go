package session_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/toolloop/toolloop/session/sessiontest"
)

// TestMain runs the child roles of sessiontest.TestProcesses, and fails
// the run if any test leaves a goroutine behind.
func TestMain(m *testing.M) {
	sessiontest.Child(openDir)
	goleak.VerifyTestMain(m)
}
