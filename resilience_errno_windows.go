package toolloop

import "syscall"

// connErrnos are the system errors of a connection that failed on the
// way, which [IsRetryable] retries: reset, refused or aborted. Windows
// reports them as Winsock errors, which do not match syscall.ECONNRESET
// and the like.
var connErrnos = []error{syscall.WSAECONNRESET, syscall.WSAECONNABORTED, wsaeconnrefused}

// wsaeconnrefused is WSAECONNREFUSED, which package syscall does not name.
const wsaeconnrefused syscall.Errno = 10061
