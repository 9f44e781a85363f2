//go:build unix

package mcp

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// sigpipe counts the sessions that need SIGPIPE caught.
var sigpipe struct {
	mu sync.Mutex
	n  int
	c  chan os.Signal
}

// catchSIGPIPE makes a write to a closed stdout or stderr fail with EPIPE
// instead of killing the program, until release is called: the Go runtime
// kills a program that writes to a broken pipe on fd 1 or 2 unless it
// asked for SIGPIPE with signal.Notify. The signals are dropped. Calls
// nest; release is idempotent.
func catchSIGPIPE() (release func()) {
	sigpipe.mu.Lock()
	defer sigpipe.mu.Unlock()
	if sigpipe.n == 0 {
		sigpipe.c = make(chan os.Signal, 1)
		signal.Notify(sigpipe.c, syscall.SIGPIPE)
	}
	sigpipe.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			sigpipe.mu.Lock()
			defer sigpipe.mu.Unlock()
			if sigpipe.n--; sigpipe.n == 0 {
				signal.Stop(sigpipe.c)
				sigpipe.c = nil
			}
		})
	}
}
