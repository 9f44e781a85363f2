package codemode

import (
	"time"

	"github.com/dlclark/regexp2/v2"
)

// regexpTimeout bounds one regular-expression match of a program. The
// interpreter runs the expressions RE2 cannot (backreferences,
// lookaround) on github.com/dlclark/regexp2, whose backtracking can take
// exponential time in native code, where neither the compute limit nor
// the wall clock can interrupt it; regexp2's own match timeout can.
//
// Importing this package sets regexp2.DefaultMatchTimeout, which has no
// other way to be set through the interpreter, to regexpTimeout if it
// still has its default (no timeout). The setting is process-wide: it
// applies to every regexp2 expression compiled afterwards without a
// timeout of its own. A match that times out throws an error the program
// may catch.
const regexpTimeout = 2 * time.Second

func init() {
	if regexp2.DefaultMatchTimeout == time.Duration(1<<63-1) {
		regexp2.DefaultMatchTimeout = regexpTimeout
	}
}
