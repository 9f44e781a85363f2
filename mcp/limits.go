package mcp

import (
	"context"
	"io"
	"mime"
	"net/http"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// DefaultMaxBinaryBytes is the default of [Options.MaxBinaryBytes].
const DefaultMaxBinaryBytes = 8 << 20

// maxRest bounds what a message may hold besides a tool result's text and
// binary data (see [limits]): the SDK's own cap on a message.
const maxRest = sdk.DefaultMaxEventSize

// maxErrorBody bounds the body of an HTTP error the SDK reads.
const maxErrorBody = 64 << 10

// textBudget is the text limit of a call whose MaxOutputBytes is n.
func (s *Source) textBudget(n int) int {
	switch {
	case n > 0:
		return n
	case s.opts.MaxOutputBytes > 0:
		return s.opts.MaxOutputBytes
	}
	return toolloop.Limits{}.WithDefaults().MaxOutputBytes
}

func (s *Source) limits(text int) limits {
	return limits{text: text, bin: orInt(s.opts.MaxBinaryBytes, DefaultMaxBinaryBytes), rest: maxRest}
}

// sharedLimits are the limits of a stream that carries the answers to
// several calls (stdio, SSE): the largest text budget of the calls in
// flight, or the default.
func (s *Source) sharedLimits() limits {
	return s.limits(max(s.textBudget(0), s.inflight.max()))
}

func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// budgetKey marks the context of a call with its text budget, so that
// the response to its HTTP request is cut to it.
type budgetKey struct{}

// inflight counts the text budgets of the calls in flight.
type inflight struct {
	mu     sync.Mutex
	counts map[int]int
}

// add records a call's budget until done is called.
func (f *inflight) add(n int) (done func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts = make(map[int]int)
	}
	f.counts[n]++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.counts[n]--; f.counts[n] == 0 {
			delete(f.counts, n)
		}
	}
}

func (f *inflight) max() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := 0
	for n := range f.counts {
		m = max(m, n)
	}
	return m
}

// newHTTPClient returns the client that carries the source's requests to
// a remote server: Options.HTTPClient, or a transport of the source's own
// configured like http.DefaultTransport, adding the server's headers and
// cutting what the server sends to the limits.
func (s *Source) newHTTPClient() *http.Client {
	var c http.Client
	if s.opts.HTTPClient != nil {
		c = *s.opts.HTTPClient
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
		if t, ok := base.(*http.Transport); ok && s.opts.HTTPClient == nil {
			base, s.ownTransport = t.Clone(), true
		}
	}
	c.Transport = &clipTransport{base: base, headers: s.cfg.Headers, src: s}
	return &c
}

// clipTransport adds a server's configured headers to every request, and
// cuts what the server sends to the limits: the call's, for the answer to
// a call, or the shared ones for the streams that serve every request.
type clipTransport struct {
	base    http.RoundTripper
	headers map[string]string
	src     *Source
}

// RoundTrip implements [http.RoundTripper].
func (t *clipTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(r)
	t.observe(r, resp, err)
	if err == nil {
		noteStreamEnd(r, resp)
	}
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		return resp, err
	}
	lim := t.src.sharedLimits
	if n, ok := r.Context().Value(budgetKey{}).(int); ok {
		l := t.src.limits(n)
		lim = func() limits { return l }
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		resp.Body = limitedBody{io.LimitReader(resp.Body, maxErrorBody), resp.Body}
	case media == "text/event-stream":
		t.watch(r, resp)
		mr := newEventReader(resp.Body, lim, t.src.logger)
		mr.capture = captureOf(r.Context())
		resp.Body = mr
	case media == "application/json":
		mr := newBodyReader(resp.Body, lim, t.src.logger)
		mr.capture = captureOf(r.Context())
		resp.Body = mr
	default:
		resp.Body = limitedBody{io.LimitReader(resp.Body, maxErrorBody), resp.Body}
	}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// CloseIdleConnections closes the idle connections of the transport
// underneath, if it can.
func (t *clipTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type limitedBody struct {
	io.Reader
	io.Closer
}

// withBudget marks ctx with a call's text budget.
func withBudget(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, budgetKey{}, n)
}
