package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// TestToolOrderAcrossReconnect: a server that lists the same tools in
// another order after a reconnect gives the registry the same specs, byte
// for byte, so a model's prompt cache holds.
func TestToolOrderAcrossReconnect(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "order", Version: "1"}, nil)
	for _, name := range []string{"zeta", "alpha", "mid"} {
		srv.AddTool(&sdk.Tool{Name: name, Description: "The " + name + " tool.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"b":{"type":"string","description":"B."},"a":{"type":"integer"}},"required":["b"]}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
			})
	}
	// Every listing after the first comes in reverse order. The server
	// has sessions (it refuses server/discover, so the client falls back
	// to initialize): the SDK's ServerSession.Close can hang while the
	// stateless protocol's subscriptions/listen runs on an in-memory
	// transport, and the test closes sessions to make the client
	// reconnect.
	var listings atomic.Int64
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "server/discover" {
				return nil, errors.New("this server has sessions: initialize")
			}
			res, err := next(ctx, method, req)
			if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil && listings.Add(1) > 1 {
				slices.Reverse(lr.Tools)
			}
			return res, err
		}
	})
	var (
		mu       sync.Mutex
		sessions []*sdk.ServerSession
	)
	var connects atomic.Int64
	cfg := mcp.ServerConfig{Transport: func(ctx context.Context) (sdk.Transport, error) {
		ct, st := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		connects.Add(1)
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct, nil
	}}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, ss := range sessions {
			_ = ss.Close()
		}
	})
	src := (&server{cfg: cfg, logs: &logBuffer{}}).source(t, "order", nil, &mcp.Options{MinBackoff: time.Millisecond})
	reg := registry(t, src)
	ctx := t.Context()
	before, err := json.Marshal(reg.Specs(ctx))
	require.NoError(t, err)
	assert.Equal(t, []string{"order__alpha", "order__mid", "order__zeta"}, specNames(reg.Specs(ctx)))

	// The server drops the session; the next call reconnects, and the
	// registry lists the tools again.
	mu.Lock()
	_ = sessions[0].Close()
	mu.Unlock()
	tool, ok := reg.Lookup(ctx, "order__alpha")
	require.True(t, ok)
	require.Eventually(t, func() bool {
		_, err := tool.Run(ctx, &toolloop.Call{ID: "1", Name: "order__alpha", Arguments: json.RawMessage(`{"b":"x"}`)})
		return err == nil && connects.Load() == 2
	}, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool {
		_ = reg.Specs(ctx)
		return listings.Load() >= 2
	}, 10*time.Second, 5*time.Millisecond, "the registry lists the tools again after the reconnect")

	after, err := json.Marshal(reg.Specs(ctx))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	// The source's own listing is in name order too, whatever the
	// server's.
	tools, err := src.Tools(ctx)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	assert.Equal(t, []string{"order__alpha", "order__mid", "order__zeta"}, names)
}

// TestServeToolOrder: Serve lists a registry's tools sorted by name, the
// same way every time, whatever order they were registered in.
func TestServeToolOrder(t *testing.T) {
	t.Parallel()
	reg := &toolloop.ToolRegistry{}
	for _, name := range []string{"zeta", "alpha", "mid", "beta"} {
		require.NoError(t, reg.Register(toolloop.NewTool(name, "The "+name+" tool.",
			func(context.Context, struct {
				B string `json:"b"`
				A int    `json:"a"`
			}) (any, error) {
				return "ok", nil
			})))
	}
	srv, err := mcp.NewServer(&toolloop.AgentLoop{Tools: reg}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	var lists []string
	for range 3 {
		// A new client each time, as after a reconnect, and two listings
		// on it.
		cs := connectMemory(t, srv, nil, nil)
		for range 2 {
			res, err := cs.ListTools(t.Context(), nil)
			require.NoError(t, err)
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			assert.Equal(t, []string{"alpha", "beta", "mid", "zeta"}, names)
			b, err := json.Marshal(res.Tools)
			require.NoError(t, err)
			lists = append(lists, string(b))
		}
	}
	for _, l := range lists[1:] {
		assert.Equal(t, lists[0], l)
	}
}

// TestSchemaKeyOrder: over the transports whose messages the package
// reads, a tool's schemas keep the server's key order; over a Transport
// of your own, the keys are sorted. Either way, two listings give the
// same bytes.
func TestSchemaKeyOrder(t *testing.T) {
	t.Parallel()
	const input = `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["b"]}`
	const output = `{"type":"object","properties":{"z":{"type":"string"},"y":{"type":"string"}}}`
	const sorted = `{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["b"],"type":"object"}`
	newSrv := func() *sdk.Server {
		srv := sdk.NewServer(&sdk.Implementation{Name: "keys", Version: "1"}, nil)
		srv.AddTool(&sdk.Tool{Name: "t", InputSchema: json.RawMessage(input), OutputSchema: json.RawMessage(output)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
		return srv
	}
	tests := map[string]struct {
		cfg  func(t *testing.T) mcp.ServerConfig
		want string
	}{
		"http": {func(t *testing.T) mcp.ServerConfig {
			srv := newSrv()
			ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
			t.Cleanup(ts.Close)
			return mcp.ServerConfig{URL: ts.URL}
		}, input},
		"sse": {func(t *testing.T) mcp.ServerConfig {
			srv := newSrv()
			ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
			t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
			return mcp.ServerConfig{Type: "sse", URL: ts.URL}
		}, input},
		"own transport": {func(t *testing.T) mcp.ServerConfig {
			srv := newSrv()
			return mcp.ServerConfig{Transport: func(ctx context.Context) (sdk.Transport, error) {
				ct, st := sdk.NewInMemoryTransports()
				ss, err := srv.Connect(ctx, st, nil)
				if err != nil {
					return nil, err
				}
				t.Cleanup(func() { _ = ss.Close() })
				return ct, nil
			}}
		}, sorted},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := (&server{cfg: tt.cfg(t), logs: &logBuffer{}}).source(t, "keys", nil, nil)
			var got []string
			for range 2 {
				tools, err := src.Tools(t.Context())
				require.NoError(t, err)
				require.Len(t, tools, 1)
				got = append(got, string(tools[0].Spec().InputSchema))
			}
			assert.Equal(t, tt.want, got[0])
			assert.Equal(t, got[0], got[1])
			if tt.want == input {
				tools, err := src.Tools(t.Context())
				require.NoError(t, err)
				assert.Equal(t, output, string(tools[0].Spec().OutputSchema))
			}
		})
	}
}
