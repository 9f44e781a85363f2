package sink_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: the
// examples and tests run real loops.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
