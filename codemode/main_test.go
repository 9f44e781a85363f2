package codemode

import (
	"testing"

	"go.uber.org/goleak"
)

// regexp2's clock goroutine serves every regexp2 match with a timeout in
// the process (see regexpTimeout) and stops by itself a second after the
// last one: it is not one of ours.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock"))
}
