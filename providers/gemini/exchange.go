package gemini

import (
	"context"
	"net/http"
	"sync"
)

// The SDK's error for a failed request (genai.APIError) carries the
// status and what the body said, but not the request: to name the URL in
// the error, every call puts an exchange in its context, and the HTTP
// client's transport records in it the request each response answered.

// exchangeKey is the context key of a call's *exchange.
type exchangeKey struct{}

// exchange is the last HTTP exchange of one call.
type exchange struct {
	mu     sync.Mutex
	req    *http.Request
	status int
}

// withExchange returns ctx carrying a new exchange, and the exchange.
func withExchange(ctx context.Context) (context.Context, *exchange) {
	x := new(exchange)
	return context.WithValue(ctx, exchangeKey{}, x), x
}

// last returns the request of the last exchange, if its response had
// status; else nil.
func (x *exchange) last(status int) *http.Request {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.status != status {
		return nil
	}
	return x.req
}

// recorder is the http.RoundTripper that records exchanges: it passes
// every request to next (http.DefaultTransport when nil) unchanged.
type recorder struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	next := r.next
	if next == nil {
		next = http.DefaultTransport
	}
	res, err := next.RoundTrip(req)
	if x, ok := req.Context().Value(exchangeKey{}).(*exchange); ok {
		x.mu.Lock()
		x.req, x.status = req, 0
		if err == nil && res != nil {
			x.status = res.StatusCode
		}
		x.mu.Unlock()
	}
	return res, err
}

// recording returns a copy of c whose transport records exchanges; c
// itself is left alone, as the caller may share it.
func recording(c *http.Client) *http.Client {
	cp := *c
	cp.Transport = recorder{next: c.Transport}
	return &cp
}

// CloseIdleConnections closes next's idle connections, as
// http.Client.CloseIdleConnections expects of a transport that can.
func (r recorder) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	next := r.next
	if next == nil {
		next = http.DefaultTransport
	}
	if c, ok := next.(closeIdler); ok {
		c.CloseIdleConnections()
	}
}
