package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/toolloop/toolloop"
	redaction "github.com/toolloop/toolloop/sanitize"
)

// ErrUnauthorized is wrapped by the error of a request to a server
// configured with OAuth that refused our credentials (HTTP 401 or 403)
// even after the handler's Authorize: the server fails to start, and the
// error names its status and challenge (WWW-Authenticate), never a token.
var ErrUnauthorized = errors.New("mcp: the server refused the client's authorization")

// maxChallenge bounds the WWW-Authenticate challenge quoted in an error.
const maxChallenge = 512

// TokenAuth returns an OAuth handler that sends the tokens of ts as
// bearer tokens and cannot authorize again: a server that refuses them
// answers with [ErrUnauthorized]. Wrap ts in oauth2.ReuseTokenSource to
// refresh tokens as they expire.
func TokenAuth(ts oauth2.TokenSource) auth.OAuthHandler { return tokenAuth{ts} }

type tokenAuth struct{ ts oauth2.TokenSource }

func (t tokenAuth) TokenSource(context.Context) (oauth2.TokenSource, error) { return t.ts, nil }

func (tokenAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	return errors.New("the token was refused, and the client has no other")
}

// authTransport authorizes a source's HTTP requests with its OAuth
// handler, as the SDK's streamable transport does with its own: each
// request carries the token source's token, and a 401 or 403 calls
// Authorize, then tries the request once more.
type authTransport struct {
	base   http.RoundTripper
	h      auth.OAuthHandler
	server string
	redact *redaction.Redactor
}

// RoundTrip implements [http.RoundTripper].
func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.send(r)
	if err != nil || !authRefused(resp) {
		return resp, err
	}
	if r.Body != nil && r.GetBody == nil {
		return nil, t.refusal(resp)
	}
	challenge := resp.Header.Get("WWW-Authenticate")
	if err := t.h.Authorize(r.Context(), r, resp); err != nil {
		if r.Context().Err() != nil {
			return nil, r.Context().Err()
		}
		return nil, t.errorf(resp.StatusCode, challenge, err)
	}
	r2 := r.Clone(r.Context())
	if r.GetBody != nil {
		if r2.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	resp, err = t.send(r2)
	if err != nil || !authRefused(resp) {
		return resp, err
	}
	return nil, t.refusal(resp)
}

func authRefused(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
}

// send sends r with the handler's current token.
func (t *authTransport) send(r *http.Request) (*http.Response, error) {
	ts, err := t.h.TokenSource(r.Context())
	if err != nil {
		return nil, t.errorf(0, "", fmt.Errorf("no token source: %w", err))
	}
	if ts != nil {
		tok, err := ts.Token()
		var retrieve *oauth2.RetrieveError
		switch {
		case errors.As(err, &retrieve) && retrieve.ErrorCode == "invalid_grant":
			// The grant expired: send no token, and let the refusal
			// call Authorize (as the SDK's transport does).
		case err != nil:
			return nil, t.errorf(0, "", fmt.Errorf("getting a token: %w", err))
		default:
			r = r.Clone(r.Context())
			tok.SetAuthHeader(r)
		}
	}
	return t.base.RoundTrip(r)
}

// refusal closes a refused response and returns its error.
func (t *authTransport) refusal(resp *http.Response) error {
	challenge := resp.Header.Get("WWW-Authenticate")
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	return t.errorf(resp.StatusCode, challenge, nil)
}

// errorf builds an error wrapping ErrUnauthorized, with what it quotes
// redacted: a token source's error may quote a token endpoint's answer.
func (t *authTransport) errorf(status int, challenge string, cause error) error {
	msg := fmt.Sprintf("server %q", t.server)
	if status != 0 {
		msg += fmt.Sprintf(" answered %d %s", status, http.StatusText(status))
	}
	if challenge != "" {
		c, _ := t.redact.Redact(toolloop.TruncateText(challenge, maxChallenge))
		msg += " (WWW-Authenticate: " + c + ")"
	}
	if cause != nil {
		c, _ := t.redact.Redact(toolloop.TruncateText(cause.Error(), maxChallenge))
		msg += ": " + c
	}
	return &authError{msg: msg}
}

// authError is an authorization failure; its message is already redacted,
// and it wraps nothing but ErrUnauthorized, so that no token can be
// reached through it.
type authError struct{ msg string }

func (e *authError) Error() string { return ErrUnauthorized.Error() + ": " + e.msg }
func (e *authError) Unwrap() error { return ErrUnauthorized }

// CloseIdleConnections closes the idle connections of the transport
// underneath.
func (t *authTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
