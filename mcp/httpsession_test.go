package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
	"github.com/toolloop/toolloop/mcp/internal/mcptest"
)

// forgetful is a streamable HTTP server that can forget its sessions at
// once, as a server that restarted between two requests has, answering
// requests of the sessions it forgot as the given function does.
type forgetful struct {
	mu      sync.Mutex
	h       http.Handler
	seen    map[string]bool // the session IDs of the current handler
	forgot  map[string]bool
	reject  func(w http.ResponseWriter)
	servers []*sdk.Server
	calls   atomic.Int64 // tools/call requests the handler served
	refused atomic.Int64 // requests of forgotten sessions
}

func newForgetful(reject func(http.ResponseWriter)) *forgetful {
	f := &forgetful{reject: reject, forgot: map[string]bool{}}
	f.forget()
	return f
}

// close ends the sessions the servers keep, as a dead server's would.
func (f *forgetful) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, srv := range f.servers {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	}
}

// forget replaces the server with a new one, which knows no session.
func (f *forgetful) forget() {
	srv := mcptest.NewServer(&mcptest.Options{Stderr: io.Discard})
	f.mu.Lock()
	defer f.mu.Unlock()
	for sid := range f.seen {
		f.forgot[sid] = true
	}
	f.seen = map[string]bool{}
	f.servers = append(f.servers, srv)
	f.h = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
}

func (f *forgetful) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	f.mu.Lock()
	h, forgotten := f.h, f.forgot[sid]
	if sid != "" && !forgotten {
		f.seen[sid] = true
	}
	f.mu.Unlock()
	if forgotten {
		f.refused.Add(1)
		f.reject(w)
		return
	}
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			f.calls.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	h.ServeHTTP(w, r)
}

// TestHTTPSessionForgotten: the first call to a server that forgot the
// session (it answers 404, as the protocol says, or 400 with the JSON-RPC
// code -32000, as servers built on the TypeScript SDK's examples do)
// starts a new session and succeeds, and reaches the server once.
func TestHTTPSessionForgotten(t *testing.T) {
	t.Parallel()
	tests := map[string]func(http.ResponseWriter){
		"404": func(w http.ResponseWriter) { http.Error(w, "session not found", http.StatusNotFound) },
		"400": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0",
				"error": map[string]any{"code": -32000, "message": "Bad Request: No valid session ID provided"}})
		},
	}
	for name, reject := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newForgetful(reject)
			ts := httptest.NewServer(f)
			defer ts.Close()
			defer f.close()
			logs := &logBuffer{}
			src := (&server{cfg: mcp.ServerConfig{URL: ts.URL}, logs: logs}).source(t, "remote", nil, nil)
			tool, ok := registry(t, src).Lookup(context.Background(), "remote__echo")
			require.True(t, ok)
			echo := func() (*toolloop.ToolResult, error) {
				return tool.Run(context.Background(), &toolloop.Call{ID: "1", Name: "remote__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
			}
			_, err := echo()
			require.NoError(t, err)
			require.EqualValues(t, 1, f.calls.Load())

			f.forget()
			res, err := echo()
			require.NoError(t, err, "logs:\n%s", logs)
			assert.Equal(t, "hi", res.Text())
			assert.EqualValues(t, 2, f.calls.Load(), "the call reached a server once")
			// The old session's event stream is still open (to the old
			// server): the call itself found the session gone.
			assert.Positive(t, f.refused.Load())
			assert.True(t, logs.contains("sending it on a new session"), "logs:\n%s", logs)
			require.NoError(t, src.Close())
		})
	}
}

// TestHTTPServerDiesMidCall: a streamable HTTP server that keeps an event
// store (so that the SDK would try, for 15 to 25 seconds, to resume the
// broken stream of a call) goes away in the middle of a call: the call
// fails at once, with a lost connection.
func TestHTTPServerDiesMidCall(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer(&mcptest.Options{Stderr: io.Discard})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)}))
	defer ts.Close()
	// First, as a dead server's would, its sessions end, and with them
	// the call still running there.
	defer func() {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	}()
	logs := &logBuffer{}
	src := (&server{cfg: mcp.ServerConfig{URL: ts.URL}, logs: logs}).source(t, "remote", nil, nil)
	slow, ok := registry(t, src).Lookup(context.Background(), "remote__slow")
	require.True(t, ok)

	running := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := slow.Run(context.Background(), &toolloop.Call{ID: "1", Name: "remote__slow",
			Arguments: json.RawMessage(`{"steps":30,"delay_ms":100}`),
			Reporter:  progressFunc(func(toolloop.Progress) { once.Do(func() { close(running) }) })})
		done <- err
	}()
	<-running
	// The server goes away: its connections break, its address refuses
	// connections.
	ts.Listener.Close()
	ts.CloseClientConnections()
	killed := time.Now()
	select {
	case err := <-done:
		var lost *mcp.ConnectionLostError
		require.ErrorAs(t, err, &lost, "logs:\n%s", logs)
		assert.Equal(t, "remote", lost.Server)
		// A regression bound, well under the SDK's 15 to 25 seconds.
		assert.Less(t, time.Since(killed), 5*time.Second)
	case <-time.After(30 * time.Second):
		t.Fatalf("the call did not fail; logs:\n%s", logs)
	}
}
