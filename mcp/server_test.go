package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
	"github.com/toolloop/toolloop/mcp/internal/mcptest"
)

var transports = []string{"memory", "stdio", "http", "sse"}

// eachTransport runs f against the test server over every transport.
func eachTransport(t *testing.T, f func(t *testing.T, s *server)) {
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f(t, newServer(t, kind))
		})
	}
}

func run(t *testing.T, loop *toolloop.AgentLoop, prompt string) *toolloop.RunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage(prompt)})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	return res
}

func TestListTools(t *testing.T) {
	eachTransport(t, func(t *testing.T, s *server) {
		reg := registry(t, s.source(t, "test", nil, nil))
		specs := reg.Specs(context.Background())
		// Nine tools, two to a page: the listing paginated.
		assert.Equal(t, []string{
			"test__add", "test__add_tool", "test__crash", "test__dotted_name", "test__echo",
			"test__fail", "test__image", "test__rich", "test__slow",
		}, specNames(specs))
		echo := specs[slices.IndexFunc(specs, func(s toolloop.ToolSpec) bool { return s.Name == "test__echo" })]
		assert.Equal(t, "Echoes its text.", echo.Description)
		assert.Equal(t, toolloop.Annotations{Title: "Echo", ReadOnly: true, OpenWorld: true}, echo.Annotations)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(echo.InputSchema, &schema))
		assert.Equal(t, "object", schema["type"])
		assert.Contains(t, schema["properties"], "text")
	})
}

func TestAllowDeny(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		want        []string
	}{
		{"allow", []string{"echo", "add"}, nil, []string{"t__add", "t__echo"}},
		{"pattern", []string{"add*"}, nil, []string{"t__add", "t__add_tool"}},
		{"deny wins", []string{"add*"}, []string{"add_tool"}, []string{"t__add"}},
		{"deny only", nil, []string{"crash", "add_tool", "slow", "rich", "image", "fail", "dotted.name"}, []string{"t__add", "t__echo"}},
	}
	s := newServer(t, "memory")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := s.source(t, "t", func(c *mcp.ServerConfig) { c.AllowTools, c.DenyTools = tt.allow, tt.deny }, nil)
			assert.Equal(t, tt.want, specNames(registry(t, src).Specs(context.Background())))
		})
	}
}

func TestCalls(t *testing.T) {
	eachTransport(t, func(t *testing.T, s *server) {
		reg := registry(t, s.source(t, "test", nil, nil))
		rec := &looptest.Recorder{}
		model := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(
				looptest.Call("echo", "test__echo", `{"text":"hi"}`),
				looptest.Call("dotted", "test__dotted_name", `{"text":"dot"}`),
				looptest.Call("add", "test__add", `{"a":2,"b":3}`),
				looptest.Call("fail", "test__fail", `{"message":"no such file"}`),
				looptest.Call("image", "test__image", `{}`),
				looptest.Call("rich", "test__rich", `{}`),
				looptest.Call("slow", "test__slow", `{"steps":3,"delay_ms":20}`),
				looptest.Call("bad", "test__add", `{"a":"two"}`),
			)},
			looptest.Turn{Reply: looptest.Text("done")},
		)
		loop := &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: rec.Record}
		res := run(t, loop, "go")
		got := looptest.Results(res.Messages)

		for id, r := range got {
			assert.Equal(t, toolloop.SourceMCP, r.Meta.Source, id)
			assert.Equal(t, "test", r.Meta.SourceName, id)
		}
		assert.Equal(t, "hi", got["echo"].Text())
		assert.Equal(t, "add", got["add"].Meta.Extra["mcp_tool"])
		assert.Equal(t, "dot", got["dotted"].Text())
		assert.Equal(t, "dotted.name", got["dotted"].Meta.Extra["mcp_tool"])

		// Structured output whose JSON text fallback says the same is sent
		// once, as the text.
		require.Len(t, got["add"].Content, 1)
		assert.Equal(t, toolloop.ContentText, got["add"].Content[0].Type)
		assert.JSONEq(t, `{"sum":5}`, got["add"].Content[0].Text)

		require.True(t, got["fail"].IsError())
		assert.Equal(t, toolloop.KindExecutionFailed, got["fail"].Error.Kind)
		assert.Equal(t, "no such file", got["fail"].Text())

		assert.Equal(t, []toolloop.Content{toolloop.ImageContent("image/png", mcptest.TinyPNG)}, got["image"].Content)
		assert.Equal(t, "image/png", got["image"].Meta.MIMEType)

		var types []toolloop.ContentType
		for _, c := range got["rich"].Content {
			types = append(types, c.Type)
		}
		assert.Equal(t, []toolloop.ContentType{"text", "image", "audio", "resource", "resource", "resource", "json"}, types)

		assert.Equal(t, "done after 3 steps", got["slow"].Text())
		// The core validates arguments before the server sees them.
		require.True(t, got["bad"].IsError())
		assert.Equal(t, toolloop.KindInvalidArgs, got["bad"].Error.Kind)

		var progress []toolloop.Progress
		for _, e := range rec.ForCall("slow") {
			if e.Type == toolloop.EventProgress {
				assert.Equal(t, toolloop.SourceMCP, e.Source)
				assert.Equal(t, "test", e.SourceName)
				progress = append(progress, *e.Progress)
			}
		}
		require.NotEmpty(t, progress, "no progress events")
		assert.Equal(t, toolloop.Progress{Message: "step 1 of 3", Done: 1, Total: 3}, progress[0])
		for _, e := range rec.Of(toolloop.EventStart) {
			assert.Equal(t, "test", e.SourceName, e.CallID)
		}
	})
}

func TestContentTypes(t *testing.T) {
	s := newServer(t, "memory")
	reg := registry(t, s.source(t, "test", nil, nil))
	tool, ok := reg.Lookup(context.Background(), "test__rich")
	require.True(t, ok)
	res, err := tool.Run(context.Background(), &toolloop.Call{ID: "1", Name: "test__rich", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, []toolloop.Content{
		toolloop.TextContent("hello"),
		toolloop.ImageContent("image/png", mcptest.TinyPNG),
		{Type: toolloop.ContentAudio, MIMEType: "audio/wav", Data: []byte("RIFF")},
		{Type: toolloop.ContentResource, URI: "file:///notes.txt", MIMEType: "text/plain"},
		{Type: toolloop.ContentResource, URI: "mem://a.txt", MIMEType: "text/plain", Text: "embedded text"},
		{Type: toolloop.ContentResource, URI: "mem://b.bin", MIMEType: "application/octet-stream", Data: []byte{0, 1, 2}},
		toolloop.JSONContent(json.RawMessage(`{"ok":true}`)),
	}, res.Content)
}

func TestTimeoutCancelsOnServer(t *testing.T) {
	eachTransport(t, func(t *testing.T, s *server) {
		reg := registry(t, s.source(t, "test", nil, nil))
		model := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("slow", "test__slow", `{"steps":100,"delay_ms":100}`))},
			looptest.Turn{Reply: looptest.Text("done")},
		)
		loop := &toolloop.AgentLoop{Model: model, Tools: reg, Limits: toolloop.Limits{ToolTimeout: 300 * time.Millisecond}}
		start := time.Now()
		res := run(t, loop, "go")
		got := looptest.Results(res.Messages)
		require.True(t, got["slow"].IsError())
		assert.Equal(t, toolloop.KindTimeout, got["slow"].Error.Kind)
		// The tool would take 10 s; the loop did not wait for it.
		assert.Less(t, time.Since(start), 8*time.Second)
		// The server was told, and stopped working on the call.
		assert.Eventually(t, s.sawCancel, 5*time.Second, 10*time.Millisecond, "the server never saw the cancellation")
		// The session survives a cancelled call. The next call has a
		// timeout of its own, so a loaded machine cannot fail it.
		echo, _ := (&toolloop.AgentLoop{Tools: reg, Limits: toolloop.Limits{ToolTimeout: time.Minute}}).RunCall(context.Background(), "r", 1,
			looptest.Call("echo", "test__echo", `{"text":"still here"}`), nil)
		assert.Equal(t, "still here", echo.Text())
	})
}

func TestListChanged(t *testing.T) {
	eachTransport(t, func(t *testing.T, s *server) {
		reg := registry(t, s.source(t, "test", nil, nil))
		hasExtra := func(req *toolloop.Request) bool {
			return slices.Contains(specNames(req.Tools), "test__extra")
		}
		model := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("add", "test__add_tool", `{"name":"extra"}`))},
			looptest.Turn{
				Check: func(req *toolloop.Request) string {
					// The notification may trail the call's result by a moment.
					if !hasExtra(req) {
						time.Sleep(200 * time.Millisecond)
					}
					return ""
				},
				Reply: looptest.Calls(looptest.Call("extra", "test__extra", `{"text":"new"}`)),
			},
			looptest.Turn{Reply: looptest.Text("done")},
		)
		res := run(t, &toolloop.AgentLoop{Model: model, Tools: reg}, "go")
		r := looptest.Results(res.Messages)["extra"]
		if !assert.False(t, r.IsError(), r.Text()) {
			return
		}
		assert.Equal(t, "new", r.Text())
		assert.Contains(t, specNames(reg.Specs(context.Background())), "test__extra")
	})
}

func TestCrashRestarts(t *testing.T) {
	eachTransport(t, func(t *testing.T, s *server) {
		reg := registry(t, s.source(t, "test", nil, nil))
		model := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("crash", "test__crash", `{}`))},
			looptest.Turn{Reply: looptest.Calls(looptest.Call("echo", "test__echo", `{"text":"back"}`))},
			looptest.Turn{Reply: looptest.Text("done")},
		)
		rec := &looptest.Recorder{}
		res := run(t, &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: rec.Record, Limits: toolloop.Limits{ToolTimeout: time.Minute}}, "go")
		got := looptest.Results(res.Messages)
		require.True(t, got["crash"].IsError())
		assert.Equal(t, toolloop.KindExecutionFailed, got["crash"].Error.Kind)
		// Reported when the server died, not when the call timed out: the
		// bound is far below the timeout, so a loaded machine cannot fail it.
		assert.Less(t, got["crash"].Meta.Duration, 20*time.Second)
		assert.Equal(t, "back", got["echo"].Text())
	})
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer(&mcptest.Options{Stderr: &logBuffer{}})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	src, err := mcp.New("auth", mcp.ServerConfig{URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer t0ken"}}, nil)
	require.NoError(t, err)
	defer src.Close()
	tools, err := src.Tools(context.Background())
	require.NoError(t, err)
	assert.Len(t, tools, 9)

	anon, err := mcp.New("anon", mcp.ServerConfig{URL: ts.URL}, nil)
	require.NoError(t, err)
	defer anon.Close()
	_, err = anon.Tools(context.Background())
	assert.Error(t, err)
}

func TestSpecTimeout(t *testing.T) {
	t.Parallel()
	s := newServer(t, "memory")
	src := s.source(t, "t", func(c *mcp.ServerConfig) { c.Timeout = 5 * time.Minute; c.AllowTools = []string{"echo"} }, nil)
	specs := registry(t, src).Specs(context.Background())
	require.Len(t, specs, 1)
	assert.Equal(t, 5*time.Minute, specs[0].Timeout)
}

func TestRemoteServerComesBack(t *testing.T) {
	t.Parallel()
	start := func(l net.Listener) *httptest.Server {
		srv := mcptest.NewServer(&mcptest.Options{Stderr: &logBuffer{}})
		ts := httptest.NewUnstartedServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
		ts.Listener = l
		ts.Start()
		// A server in this process keeps the sessions a dead one would lose.
		t.Cleanup(func() {
			for ss := range srv.Sessions() {
				_ = ss.Close()
			}
		})
		return ts
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	ts := start(l)

	src, err := mcp.New("remote", mcp.ServerConfig{URL: ts.URL}, nil)
	require.NoError(t, err)
	defer src.Close()
	reg := registry(t, src)
	tool, ok := reg.Lookup(context.Background(), "remote__echo")
	require.True(t, ok)
	echo := func() (*toolloop.ToolResult, error) {
		return tool.Run(context.Background(), &toolloop.Call{ID: "1", Name: "remote__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	}
	_, err = echo()
	require.NoError(t, err)

	// The server goes away: the call fails at once.
	ts.CloseClientConnections()
	ts.Close()
	began := time.Now()
	_, err = echo()
	var te *toolloop.ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, toolloop.KindExecutionFailed, te.Kind)
	assert.Less(t, time.Since(began), time.Second)

	// A new server on the same address knows nothing of the old session;
	// the next call starts a new one.
	l, err = net.Listen("tcp", addr)
	require.NoError(t, err)
	ts = start(l)
	defer ts.Close() // after src.Close, which ends the session's open stream
	res, err := echo()
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Text())
	require.NoError(t, src.Close())
}

func TestToolConformance(t *testing.T) {
	for _, kind := range []string{"memory", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			s := newServer(t, kind)
			reg := registry(t, s.source(t, "test", nil, nil))
			tool, ok := reg.Lookup(context.Background(), "test__echo")
			require.True(t, ok)
			looptest.TestTool(t, tool, json.RawMessage(`{"text":"conformance"}`))
		})
	}
}

func TestProtocolError(t *testing.T) {
	t.Parallel()
	server := sdk.NewServer(&sdk.Implementation{Name: "strict", Version: "1"}, nil)
	server.AddTool(&sdk.Tool{Name: "picky", Description: "Rejects every call.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "not today"}
		})
	server.AddTool(&sdk.Tool{Name: "ok", Description: "Works.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "fine"}}}, nil
		})
	src, err := mcp.New("strict", mcp.ServerConfig{Transport: func(ctx context.Context) (sdk.Transport, error) {
		client, srv := sdk.NewInMemoryTransports()
		if _, err := server.Connect(ctx, srv, nil); err != nil {
			return nil, err
		}
		return client, nil
	}}, nil)
	require.NoError(t, err)
	defer src.Close()
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("picky", "strict__picky", `{}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("ok", "strict__ok", `{}`))},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	res := run(t, &toolloop.AgentLoop{Model: model, Tools: registry(t, src)}, "go")
	got := looptest.Results(res.Messages)
	require.True(t, got["picky"].IsError())
	assert.Equal(t, toolloop.KindExecutionFailed, got["picky"].Error.Kind)
	assert.Contains(t, got["picky"].Text(), "not today")
	// A protocol error leaves the session as it was.
	assert.Equal(t, "fine", got["ok"].Text())
}

func TestStartRetriedOnAFreshConnection(t *testing.T) {
	for _, kind := range []string{"http", "sse"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer(&mcptest.Options{Stderr: &logBuffer{}})
			var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
			if kind == "sse" {
				h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
			}
			// The first initialize is lost with its connection, as it is
			// when it goes out on a kept-alive connection the server closed.
			var dropped atomic.Int64
			var conns sync.Map // remote addresses that carried an initialize
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if bytes.Contains(body, []byte(`"method":"initialize"`)) {
						_, seen := conns.LoadOrStore(r.RemoteAddr, true)
						assert.False(t, seen, "the initialize was tried again on the same connection")
						if dropped.Add(1) == 1 {
							conn, _, err := http.NewResponseController(w).Hijack()
							require.NoError(t, err)
							require.NoError(t, conn.Close())
							return
						}
					}
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			cfg := mcp.ServerConfig{URL: ts.URL}
			if kind == "sse" {
				cfg.Type = "sse"
			}
			src, err := mcp.New("test", cfg, &mcp.Options{Logger: quietLogger()})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, src.Close()) })
			tools, err := src.Tools(context.Background())
			require.NoError(t, err)
			assert.Len(t, tools, 9)
			assert.Equal(t, int64(2), dropped.Load(), "the start was not tried exactly twice")
		})
	}
}
