package wire

import (
	"log/slog"
	"net/http"

	"github.com/toolloop/toolloop/providers"
)

// StatusKind returns the sentinel for an HTTP status, or nil: 429 is
// ErrRateLimit, 503 and 529 are ErrOverloaded, 401 and 403 are ErrAuth,
// and 413 (a request too large to accept) is ErrContextLength. Providers
// refine it with what their error bodies say.
func StatusKind(status int) error {
	switch status {
	case http.StatusTooManyRequests:
		return providers.ErrRateLimit
	case http.StatusServiceUnavailable, 529:
		return providers.ErrOverloaded
	case http.StatusUnauthorized, http.StatusForbidden:
		return providers.ErrAuth
	case http.StatusRequestEntityTooLarge:
		return providers.ErrContextLength
	}
	return nil
}

// discard is the logger used when none is set.
var discard = slog.New(slog.DiscardHandler)

// Logger returns l, or a logger that discards everything when l is nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return discard
}

// FirstNonEmpty returns the first of s that is not empty.
func FirstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
