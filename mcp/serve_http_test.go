package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// httpReply is what a raw request got.
type httpReply struct {
	status  int
	header  http.Header
	body    string
	jsonrpc struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// rawDo sends body to url as a streamable HTTP client would, with the
// extra headers, and decodes the JSON-RPC reply, plain or the first event
// of a stream.
func rawDo(t *testing.T, method, url string, header map[string]string, body string) httpReply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := httpReply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	text := r.body
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(text) {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				text = data
				break
			}
		}
	}
	_ = json.Unmarshal([]byte(text), &r.jsonrpc)
	return r
}

func TestServeHTTPOrigin(t *testing.T) {
	tests := []struct {
		name    string
		allowed []string
		origin  string
		want    int
	}{
		{"no origin", nil, "", http.StatusOK},
		{"localhost", nil, "http://localhost:5173", http.StatusOK},
		{"127.0.0.1", nil, "http://127.0.0.1:8080", http.StatusOK},
		{"::1", nil, "http://[::1]:3000", http.StatusOK},
		{"https localhost", nil, "https://localhost", http.StatusOK},
		{"foreign", nil, "https://evil.example", http.StatusForbidden},
		{"loopback-looking name", nil, "http://localhost.evil.example", http.StatusForbidden},
		{"null", nil, "null", http.StatusForbidden},
		{"allowed", []string{"https://app.example"}, "https://app.example", http.StatusOK},
		{"allowed, other case", []string{"https://App.Example/"}, "https://app.example", http.StatusOK},
		{"not in the list", []string{"https://app.example"}, "https://evil.example", http.StatusForbidden},
		{"other port", []string{"https://app.example"}, "https://app.example:8443", http.StatusForbidden},
		{"every origin", []string{"*"}, "https://evil.example", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServe(t, newServeFixture(), &mcp.ServeOptions{AllowedOrigins: tt.allowed})
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			var h map[string]string
			if tt.origin != "" {
				h = map[string]string{"Origin": tt.origin}
			}
			r := rawDo(t, http.MethodPost, hs.URL, h, initializeBody)
			assert.Equal(t, tt.want, r.status, r.body)
			if tt.want == http.StatusOK {
				assert.NotEmpty(t, r.header.Get("Mcp-Session-Id"))
			}
		})
	}
}

// TestServeHTTPOriginNotLoopback checks that loopback origins are not
// allowed by default when the listener is not on loopback: the request's
// local address is set as net/http's server sets it.
func TestServeHTTPOriginNotLoopback(t *testing.T) {
	srv := newServe(t, newServeFixture(), &mcp.ServeOptions{AllowedOrigins: []string{"https://app.example"}})
	h := srv.Handler()
	local := &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 443}
	for origin, want := range map[string]int{
		"":                      http.StatusOK,
		"https://app.example":   http.StatusOK,
		"http://localhost:5173": http.StatusForbidden,
		"http://127.0.0.1:8080": http.StatusForbidden,
	} {
		req := httptest.NewRequest(http.MethodPost, "http://mcp.example/", strings.NewReader(initializeBody))
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, want, rec.Code, "origin %q: %s", origin, rec.Body)
	}
}

func TestServeHTTPSessionStatus(t *testing.T) {
	srv := newServe(t, newServeFixture(), nil)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	const list = `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`
	t.Run("missing session", func(t *testing.T) {
		r := rawDo(t, http.MethodPost, hs.URL, nil, list)
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		require.NotNil(t, r.jsonrpc.Error, r.body)
		assert.Equal(t, -32600, r.jsonrpc.Error.Code)
		assert.JSONEq(t, "7", string(r.jsonrpc.ID))
	})
	t.Run("missing session, notification", func(t *testing.T) {
		r := rawDo(t, http.MethodPost, hs.URL, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
	})
	t.Run("missing session, GET", func(t *testing.T) {
		r := rawDo(t, http.MethodGet, hs.URL, nil, "")
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
	})
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		t.Run("unknown session, "+method, func(t *testing.T) {
			r := rawDo(t, method, hs.URL, map[string]string{"Mcp-Session-Id": "no-such-session"}, list)
			assert.Equal(t, http.StatusNotFound, r.status, r.body)
		})
	}
	t.Run("ended session", func(t *testing.T) {
		init := rawDo(t, http.MethodPost, hs.URL, nil, initializeBody)
		require.Equal(t, http.StatusOK, init.status, init.body)
		id := init.header.Get("Mcp-Session-Id")
		require.NotEmpty(t, id)
		h := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
		r := rawDo(t, http.MethodPost, hs.URL, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.Equal(t, http.StatusAccepted, r.status, r.body)
		r = rawDo(t, http.MethodPost, hs.URL, h, list)
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Contains(t, string(r.jsonrpc.Result), `"echo"`)
		r = rawDo(t, http.MethodDelete, hs.URL, h, "")
		require.Equal(t, http.StatusNoContent, r.status, r.body)
		r = rawDo(t, http.MethodPost, hs.URL, h, list)
		assert.Equal(t, http.StatusNotFound, r.status, r.body)
	})
}

// TestServeHTTPStatelessRaw sends requests shaped as the 2026-07-28
// protocol says (no initialize, no session, the version in a header and
// in each request's _meta) to the default handler.
func TestServeHTTPStatelessRaw(t *testing.T) {
	srv := newServe(t, newServeFixture(), nil)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}

	r := rawDo(t, http.MethodPost, hs.URL, h, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Nil(t, r.jsonrpc.Error, r.body)
	var disc struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	require.NoError(t, json.Unmarshal(r.jsonrpc.Result, &disc))
	assert.Contains(t, disc.SupportedVersions, "2026-07-28")
	assert.Contains(t, disc.SupportedVersions, "2025-11-25")
	assert.Empty(t, r.header.Get("Mcp-Session-Id"))

	h["Mcp-Method"] = "tools/call"
	h["Mcp-Name"] = "add"
	r = rawDo(t, http.MethodPost, hs.URL, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40},`+meta+`}}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Nil(t, r.jsonrpc.Error, r.body)
	assert.Contains(t, string(r.jsonrpc.Result), `"sum":42`)
	assert.Empty(t, r.header.Get("Mcp-Session-Id"))
}

// TestServeHTTPEveryVersion connects the SDK's client on each protocol
// version it speaks to the default handler: the stateless 2026-07-28
// client (server/discover, no session) and the older ones (initialize, a
// session), side by side.
func TestServeHTTPEveryVersion(t *testing.T) {
	for _, version := range sdk.SupportedProtocolVersions() {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			f := newServeFixture()
			srv := newServe(t, f, &mcp.ServeOptions{ListPollInterval: 20 * time.Millisecond})
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			changed := make(chan struct{}, 16)
			var progress atomic.Int32
			client := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
				ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
					select {
					case changed <- struct{}{}:
					default:
					}
				},
				ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) {
					progress.Add(1)
				},
				ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
				},
			})
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1},
				&sdk.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			defer cs.Close()
			assert.Equal(t, version, cs.InitializeResult().ProtocolVersion)
			if version >= "2026-07-28" {
				assert.Empty(t, cs.ID(), "the stateless protocol has no session")
			} else {
				assert.NotEmpty(t, cs.ID())
			}

			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}})
			require.NoError(t, err)
			assert.Equal(t, map[string]any{"sum": float64(42)}, res.StructuredContent)

			// An approval: an elicitation during the call, or, on
			// 2026-07-28, the multi round-trip the SDK's client answers
			// with the same handler.
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/tmp/" + version}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%+v", res.Content)
			assert.Contains(t, f.dangerRuns(), "/tmp/"+version)

			// Progress, on the call's stream.
			p := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 2}}
			p.SetProgressToken("p")
			_, err = cs.CallTool(ctx, p)
			require.NoError(t, err)
			assert.Equal(t, int32(2), progress.Load())

			// list_changed: on the session's stream, or, on 2026-07-28,
			// the subscriptions/listen stream the SDK's client opens.
			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "grow", Arguments: map[string]any{}})
			require.NoError(t, err)
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("no notifications/tools/list_changed")
			}
		})
	}
}

// TestServeHTTPMixedVersions serves, on one default handler at once, the
// TypeScript SDK's client (1.32.2, which speaks 2025-11-25 at most: the
// conformance run) and the Go SDK's client on the stateless 2026-07-28
// protocol. The TypeScript SDK pinned in testdata/npm cannot speak
// 2026-07-28, so the Go SDK's client is the one that does.
func TestServeHTTPMixedVersions(t *testing.T) {
	node := nodeForConformance(t)
	f := newServeFixture()
	srv := newServe(t, f, nil)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx := t.Context()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "new"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: hs.URL}, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if !assert.NoError(t, err) {
			return
		}
		defer cs.Close()
		assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
		for i := range 20 {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": i, "b": 1}})
			if !assert.NoError(t, err) {
				return
			}
			assert.Equal(t, map[string]any{"sum": float64(i + 1)}, res.StructuredContent)
		}
	}()
	checkConformance(t, runConformance(t, node, "--url", hs.URL), f)
	<-done
}

// TestServeHTTPStatelessTask runs a task, with requests shaped as the
// 2026-07-28 protocol says, on the default handler: the task's ID alone
// reaches it from the next request, which has no session in common.
func TestServeHTTPStatelessTask(t *testing.T) {
	f := newTaskFixture()
	srv, err := mcp.NewServer(f.loop, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "job"}
	r := rawDo(t, http.MethodPost, hs.URL, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","arguments":{"steps":1},"task":{},`+meta+`}}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Nil(t, r.jsonrpc.Error, r.body)
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	require.NoError(t, json.Unmarshal(r.jsonrpc.Result, &created), r.body)
	require.NotEmpty(t, created.Task.TaskID, r.body)

	h = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/result"}
	r = rawDo(t, http.MethodPost, hs.URL, h, `{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"`+created.Task.TaskID+`",`+meta+`}}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Nil(t, r.jsonrpc.Error, r.body)
	assert.Contains(t, string(r.jsonrpc.Result), "done after 1 steps")

	// tasks/list has no session whose tasks it could list.
	h["Mcp-Method"] = "tasks/list"
	r = rawDo(t, http.MethodPost, hs.URL, h, `{"jsonrpc":"2.0","id":3,"method":"tasks/list","params":{`+meta+`}}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	var list struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal(r.jsonrpc.Result, &list), r.body)
	assert.Empty(t, list.Tasks)
}

// TestServeHTTPSessionOptions checks the session status codes under the
// HTTP options that change them: no body limit still answers a missing
// session with 400; Stateless serves every request without one.
func TestServeHTTPSessionOptions(t *testing.T) {
	const list = `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`
	for name, tt := range map[string]struct {
		opts *sdk.StreamableHTTPOptions
		want int
	}{
		"no body limit": {&sdk.StreamableHTTPOptions{MaxRequestBodyBytes: -1}, http.StatusBadRequest},
		"stateless":     {&sdk.StreamableHTTPOptions{Stateless: true}, http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServe(t, newServeFixture(), &mcp.ServeOptions{HTTP: tt.opts})
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			r := rawDo(t, http.MethodPost, hs.URL, nil, list)
			assert.Equal(t, tt.want, r.status, r.body)
		})
	}
}
