//go:build !plan9 && !windows

package toolloop

import "syscall"

// connErrnos are the system errors of a connection that failed on the
// way, which [IsRetryable] retries: reset, refused or aborted, or a
// broken pipe.
var connErrnos = []error{syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE}
