package builtin

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if grepTreeDir != "" {
			_ = os.RemoveAll(grepTreeDir)
		}
	}))
}
