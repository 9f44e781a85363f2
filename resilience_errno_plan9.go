package toolloop

// connErrnos is empty on Plan 9, whose network errors are strings:
// [IsRetryable] retries only its timeouts and cut responses.
var connErrnos []error
