package builtin

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if code, ok := runTestProbe(); ok {
		// The test binary run as a helper program (see runTestProbe).
		os.Exit(code)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if grepTreeDir != "" {
			_ = os.RemoveAll(grepTreeDir)
		}
	}))
}
