//go:build unix

package mcp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCatchSIGPIPENests: SIGPIPE stays caught until the last of nested
// catches is released; a release counts once however often it is called.
func TestCatchSIGPIPENests(t *testing.T) {
	count := func() int {
		sigpipe.mu.Lock()
		defer sigpipe.mu.Unlock()
		return sigpipe.n
	}
	base := count() // other tests' sessions may hold it
	r1 := catchSIGPIPE()
	r2 := catchSIGPIPE()
	assert.Equal(t, base+2, count())
	r1()
	r1()
	assert.Equal(t, base+1, count())
	r2()
	assert.Equal(t, base, count())
}
