package providers

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// The kinds of provider failure a caller can act on. A *[Error] matches at
// most one of them with errors.Is; a constructor's error matches ErrConfig
// (and ErrAuth for a missing key).
var (
	// ErrContextLength: the transcript (plus the requested output) does not
	// fit the model's context window. Compact or trim the transcript and try
	// again.
	ErrContextLength = errors.New("providers: the request exceeds the model's context window")
	// ErrRateLimit: the provider still answered 429 after the SDK's retries.
	ErrRateLimit = errors.New("providers: rate limited")
	// ErrOverloaded: the provider was still overloaded or unavailable (503,
	// 529) after the SDK's retries.
	ErrOverloaded = errors.New("providers: the provider is overloaded")
	// ErrAuth: the API key is missing, wrong or not allowed to use the model
	// (401, 403).
	ErrAuth = errors.New("providers: authentication failed")
	// ErrConfig: the model was set up with what it cannot work with, and
	// no request was sent. A provider's constructor (openai.New,
	// openai.NewResponses, anthropic.New, gemini.New) returns such an
	// error at once, before any network call: no API key where the
	// provider's own API needs one, a setting the API would refuse on
	// every request. A call whose request the model's config rules out
	// fails with one too. Fix the set-up; asking again cannot help.
	//
	// A missing API key matches ErrAuth as well, so that a check for
	// ErrAuth (a key that is missing, wrong or not allowed) catches it
	// whether it was found at set-up or by the provider's 401. Errors of
	// the provider's API never match ErrConfig: a *[Error] has a kind of
	// its own.
	ErrConfig = errors.New("providers: invalid configuration")
)

// Error is an error response from a provider's API, after the SDK's own
// retries. errors.Is matches it against the sentinel of its kind, if any;
// errors.As reaches the SDK's error through Unwrap.
type Error struct {
	// Provider names the provider: "openai", "anthropic" or "gemini".
	Provider string
	// StatusCode is the HTTP status of the response: 200 for an error
	// event in the middle of a stream.
	StatusCode int
	// Type is the provider's error type or code, such as
	// "context_length_exceeded" or "rate_limit_error", when it sent one.
	Type string
	// Message is the provider's error message.
	Message string
	// Kind is the sentinel this error matches with errors.Is, or nil.
	Kind error
	// Method and URL name the request an error response answered, the
	// URL without its user info, query or fragment (where credentials
	// live); Hint suggests a fix when the URL looks wrong, such as a base
	// URL missing its "/v1". They are empty for an error event inside a
	// stream. The error's message shows them.
	Method, URL, Hint string
	// Wait is how long the provider asked the client to wait before it
	// tries again (an HTTP Retry-After or retry-after-ms header, or
	// Gemini's retry delay); 0 when it did not say. toolloop.Retry waits
	// that long, through RetryAfter.
	Wait time.Duration
	// Err is the SDK's error.
	Err error
}

// RetryAfter returns e.Wait: how long the provider asked the client to
// wait before trying again, or 0.
func (e *Error) RetryAfter() time.Duration { return e.Wait }

// Error implements the error interface.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %d %s", e.Provider, e.StatusCode, http.StatusText(e.StatusCode))
	if e.StatusCode == http.StatusOK {
		s = e.Provider + ": error in the stream"
	}
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is reports whether target is the sentinel of e's kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Unwrap returns the SDK's error.
func (e *Error) Unwrap() error { return e.Err }
