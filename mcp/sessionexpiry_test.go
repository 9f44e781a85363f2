package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// expiring serves h, an MCP server's streamable HTTP handler, and
// expires sessions the way a server with a session timeout does: a
// request carrying an expired session's ID is answered 404, without
// reaching h, and expiring a session cuts the answers h was still
// writing for it.
type expiring struct {
	h http.Handler

	// ttl, if set, is a session's life: a request of an older session
	// that served a call already is answered 404. (The call is there so
	// that a session lives longer than a round trip, as a real server's
	// do, however slow the test runs.)
	ttl time.Duration

	mu      sync.Mutex
	born    map[string]time.Time
	served  map[string]bool // sessions that served a call
	expired map[string]bool
	cuts    map[string]map[*context.CancelFunc]bool // live requests by session ID

	// rejectCalls makes every tools/call request of a session answered
	// 404, as a server that loses every session at once would.
	rejectCalls atomic.Bool
	refused     atomic.Int64 // requests answered 404
}

func newExpiring(h http.Handler) *expiring {
	return &expiring{h: h, born: map[string]time.Time{}, served: map[string]bool{}, expired: map[string]bool{}, cuts: map[string]map[*context.CancelFunc]bool{}}
}

// expireAll expires every session the server has seen so far.
func (e *expiring) expireAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for sid, live := range e.cuts {
		e.expired[sid] = true
		for cancel := range live {
			(*cancel)()
		}
	}
}

func (e *expiring) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	isCall := false
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		isCall = bytes.Contains(body, []byte(`"tools/call"`))
		if bytes.Contains(body, []byte(`"server/discover"`)) {
			// A server with sessions, as servers before the stateless
			// 2026-07-28 protocol are (whose sessions cannot expire):
			// the client falls back to initialize.
			http.Error(w, "Bad Request: server/discover is not served here", http.StatusBadRequest)
			return
		}
	}
	if sid != "" && isCall && e.rejectCalls.Load() {
		e.refused.Add(1)
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	e.mu.Lock()
	if ttl := e.ttl; ttl > 0 && sid != "" && e.served[sid] && time.Since(e.born[sid]) > ttl {
		e.expired[sid] = true
	}
	if e.expired[sid] {
		e.mu.Unlock()
		e.refused.Add(1)
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	key := &cancel
	if isCall {
		e.served[sid] = true
	}
	if sid != "" {
		if e.cuts[sid] == nil {
			e.cuts[sid] = map[*context.CancelFunc]bool{}
		}
		e.cuts[sid][key] = true
	}
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.cuts[sid], key)
		e.mu.Unlock()
	}()
	e.h.ServeHTTP(w, r.WithContext(ctx))
	if newSID := w.Header().Get("Mcp-Session-Id"); sid == "" && newSID != "" {
		// A new session: known, so that expireAll expires it.
		e.mu.Lock()
		e.born[newSID] = time.Now()
		if e.cuts[newSID] == nil {
			e.cuts[newSID] = map[*context.CancelFunc]bool{}
		}
		e.mu.Unlock()
	}
}

// runs counts a served tool's executions by call key.
type runs struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *runs) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
}

func (c *runs) of(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// expiringServer serves, through our own Serve over HTTP wrapped in
// expiring, a registry with the tool "count", which counts its runs by
// key, and, when asked to, expires every session while it runs.
func expiringServer(t *testing.T) (*expiring, *runs, *mcp.Source) {
	t.Helper()
	ran := &runs{}
	var e *expiring
	type countIn struct {
		Key    string `json:"key"`
		Expire bool   `json:"expire,omitempty"`
	}
	count := toolloop.NewTool("count", "Counts its runs by key.", func(_ context.Context, in countIn) (any, error) {
		ran.add(in.Key)
		if in.Expire {
			e.expireAll()
			time.Sleep(100 * time.Millisecond) // the answer is cut before it is ready
		}
		return "ran " + in.Key, nil
	})
	reg := &toolloop.ToolRegistry{}
	require.NoError(t, reg.Register(count))
	srv, err := mcp.NewServer(&toolloop.AgentLoop{Tools: reg}, nil)
	require.NoError(t, err)
	e = newExpiring(srv.Handler())
	hs := httptest.NewServer(e)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		require.NoError(t, srv.Close())
	})
	src := (&server{cfg: mcp.ServerConfig{URL: hs.URL}, logs: &logBuffer{}}).source(t, "remote", nil, nil)
	return e, ran, src
}

func countCall(t *testing.T, tool toolloop.Tool, key string, expire bool) (*toolloop.ToolResult, error) {
	t.Helper()
	args, err := json.Marshal(map[string]any{"key": key, "expire": expire})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return tool.Run(ctx, &toolloop.Call{ID: key, Name: "remote__count", Arguments: args})
}

// TestHTTPSessionsExpireOnATimer: a server that expires each session
// after a few milliseconds (answering 404 to its next request): every call
// succeeds, each run once on the server.
func TestHTTPSessionsExpireOnATimer(t *testing.T) {
	t.Parallel()
	e, ran, src := expiringServer(t)
	tool, ok := registry(t, src).Lookup(context.Background(), "remote__count")
	require.True(t, ok)

	e.mu.Lock()
	e.ttl = 20 * time.Millisecond
	e.mu.Unlock()
	for i := range 40 {
		key := fmt.Sprint("k", i)
		res, err := countCall(t, tool, key, false)
		require.NoError(t, err, "call %d", i)
		assert.Equal(t, "ran "+key, res.Text())
		time.Sleep(8 * time.Millisecond)
	}
	for i := range 40 {
		assert.Equal(t, 1, ran.of(fmt.Sprint("k", i)), "runs of call %d", i)
	}
	assert.Positive(t, e.refused.Load(), "sessions did expire under the calls")
}

// TestHTTPSessionExpiresUnderACall: a session that expires while the
// server runs a call loses the call's answer: the call, which the server
// did process, fails with a lost connection and is not run again; the next
// call starts a new session.
func TestHTTPSessionExpiresUnderACall(t *testing.T) {
	t.Parallel()
	_, ran, src := expiringServer(t)
	tool, ok := registry(t, src).Lookup(context.Background(), "remote__count")
	require.True(t, ok)

	_, err := countCall(t, tool, "cut", true)
	var lost *mcp.ConnectionLostError
	require.ErrorAs(t, err, &lost)
	assert.Equal(t, "remote", lost.Server)
	assertKind(t, err, toolloop.KindExecutionFailed)
	assert.Equal(t, 1, ran.of("cut"), "a call the server processed is not sent again")

	res, err := countCall(t, tool, "next", false)
	require.NoError(t, err)
	assert.Equal(t, "ran next", res.Text())
	assert.Equal(t, 1, ran.of("next"))
	assert.Equal(t, 1, ran.of("cut"))
}

// TestHTTPSessionLostTwice: a call whose retry on a new session is
// refused too fails with a lost connection, having run nowhere.
func TestHTTPSessionLostTwice(t *testing.T) {
	t.Parallel()
	e, ran, src := expiringServer(t)
	tool, ok := registry(t, src).Lookup(context.Background(), "remote__count")
	require.True(t, ok)

	e.rejectCalls.Store(true)
	_, err := countCall(t, tool, "never", false)
	var lost *mcp.ConnectionLostError
	require.ErrorAs(t, err, &lost)
	assertKind(t, err, toolloop.KindExecutionFailed)
	assert.Equal(t, 0, ran.of("never"))
	assert.EqualValues(t, 2, e.refused.Load(), "sent once, then once more on a new session")

	e.rejectCalls.Store(false)
	res, err := countCall(t, tool, "after", false)
	require.NoError(t, err)
	assert.Equal(t, "ran after", res.Text())
}

func assertKind(t *testing.T, err error, kind toolloop.ErrorKind) {
	t.Helper()
	var te *toolloop.ToolError
	if assert.True(t, errors.As(err, &te), "%v is no ToolError", err) {
		assert.Equal(t, kind, te.Kind)
	}
}
