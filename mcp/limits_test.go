package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
	"github.com/toolloop/toolloop/mcp/internal/mcptest"
)

// largeServer serves the test server with its large tool over kind: the
// transports whose output the source cuts while reading it.
func largeServer(t *testing.T, kind string) mcp.ServerConfig {
	t.Helper()
	srv := mcptest.NewServer(&mcptest.Options{Large: true, Stderr: &logBuffer{}})
	getServer := func(*http.Request) *sdk.Server { return srv }
	var h http.Handler
	switch kind {
	case "stdio":
		cfg := stdioConfig(t)
		cfg.Env[serveEnv] = "large"
		return cfg
	case "http":
		h = sdk.NewStreamableHTTPHandler(getServer, nil)
	case "http-json":
		h = sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{JSONResponse: true})
	case "sse":
		ts := httptest.NewServer(sdk.NewSSEHandler(getServer, nil))
		t.Cleanup(ts.Close)
		return mcp.ServerConfig{Type: "sse", URL: ts.URL}
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return mcp.ServerConfig{URL: ts.URL}
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func runLarge(t *testing.T, src *mcp.Source, in mcptest.LargeIn, budget int) (*toolloop.ToolResult, error) {
	t.Helper()
	tool, ok := registry(t, src).Lookup(context.Background(), "test__large")
	require.True(t, ok)
	args, err := json.Marshal(in)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return tool.Run(ctx, &toolloop.Call{ID: "1", Name: "test__large", Arguments: args, MaxOutputBytes: budget})
}

func TestLargeOutputIsCut(t *testing.T) {
	const size, budget = 4 << 20, 64 << 10
	want := mcptest.LargeText(size)
	for _, kind := range []string{"stdio", "http", "http-json", "sse"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			// A stream that serves every call (stdio, SSE) keeps the
			// largest budget of the calls in flight, or the default.
			opts := &mcp.Options{MaxOutputBytes: budget / 2, MaxBinaryBytes: 1000, Logger: quietLogger()}
			src, err := mcp.New("test", largeServer(t, kind), opts)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, src.Close()) })

			res, err := runLarge(t, src, mcptest.LargeIn{Bytes: size, Image: 600}, budget)
			require.NoError(t, err)
			require.False(t, res.IsError(), res.Text())
			require.Len(t, res.Content, 2)
			text := res.Content[0].Text
			assert.LessOrEqual(t, len(text), budget)
			assert.Greater(t, len(text), budget*9/10, "the budget is used")
			head, tail, ok := strings.Cut(text, "[... ")
			require.True(t, ok, "no marker")
			assert.Contains(t, tail, fmt.Sprintf(" of %d bytes cut from the middle of this output ...]\n", size))
			tail = tail[strings.Index(tail, "]\n")+2:]
			assert.True(t, strings.HasPrefix(want, head))
			assert.True(t, strings.HasSuffix(want, tail))
			assert.Equal(t, toolloop.ContentImage, res.Content[1].Type, "an image within its limit is kept")
			assert.Len(t, res.Content[1].Data, 600)
			assert.True(t, res.Meta.Truncated, "the metadata says the output was cut")
			assert.Equal(t, size, res.Meta.Bytes, "and how much the server sent")

			// An image over the limit on binary data is left out, and the
			// result says so.
			res, err = runLarge(t, src, mcptest.LargeIn{Bytes: 10, Image: 3000}, budget)
			require.NoError(t, err)
			require.False(t, res.IsError(), res.Text())
			require.Len(t, res.Content, 2)
			assert.Equal(t, want[:10], res.Content[0].Text)
			assert.Contains(t, res.Content[1].Text, "1 of 2 content blocks cut to fit the output budget")
			assert.Contains(t, res.Content[1].Text, "4000 bytes of base64 data over the 1000 bytes")
			assert.True(t, res.Meta.Truncated, "a block left out is a cut too")
		})
	}
}

func TestOversizedMessageFailsTheCall(t *testing.T) {
	t.Parallel()
	src, err := mcp.New("test", largeServer(t, "http"), &mcp.Options{Logger: quietLogger()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	// Metadata cannot be cut: a message with more of it than the SDK's
	// own limit on a message fails its call, and only its call.
	_, err = runLarge(t, src, mcptest.LargeIn{Bytes: 10, Meta: sdk.DefaultMaxEventSize + 1}, 0)
	var te *toolloop.ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, toolloop.KindExecutionFailed, te.Kind)
	assert.Contains(t, te.Message, fmt.Sprint(sdk.DefaultMaxEventSize))
	res, err := runLarge(t, src, mcptest.LargeIn{Bytes: 10}, 0)
	require.NoError(t, err)
	assert.Equal(t, mcptest.LargeText(10), res.Text())
}

// heedless is a transport whose connection writes even when the context
// of the write is done, as a Transport of one's own may: what the source
// sends on a done context reaches the server.
type heedless struct{ sdk.Transport }

func (h heedless) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := h.Transport.Connect(ctx)
	return heedlessConn{c}, err
}

type heedlessConn struct{ sdk.Connection }

func (c heedlessConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	return c.Connection.Write(context.WithoutCancel(ctx), msg)
}

// countedServer is the test server in this process over heedless
// in-memory transports, counting its starts and the calls it receives.
type countedServer struct {
	srv           *sdk.Server
	starts, calls atomic.Int64
	logs          logBuffer
	src           *mcp.Source
}

func newCountedServer(t *testing.T) *countedServer {
	c := &countedServer{}
	c.srv = mcptest.NewServer(&mcptest.Options{Calls: &c.calls, Stderr: &logBuffer{}})
	src, err := mcp.New("test", mcp.ServerConfig{Transport: func(ctx context.Context) (sdk.Transport, error) {
		c.starts.Add(1)
		ct, st := sdk.NewInMemoryTransports()
		if _, err := c.srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return heedless{ct}, nil
	}}, &mcp.Options{Logger: slog.New(slog.NewTextHandler(&c.logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	c.src = src
	return c
}

// tool lists the source's tools, without a registry, and returns one.
func (c *countedServer) tool(t *testing.T, name string) toolloop.Tool {
	tools, err := c.src.Tools(context.Background())
	require.NoError(t, err)
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// crash stops the server, and waits until the source knows.
func (c *countedServer) crash(t *testing.T) {
	for ss := range c.srv.Sessions() {
		require.NoError(t, ss.Close())
	}
	require.Eventually(t, func() bool { return c.logs.contains("mcp server stopped") }, 5*time.Second, 5*time.Millisecond)
}

var echoCall = &toolloop.Call{ID: "1", Name: "test__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}

func TestNothingSentAfterContextDone(t *testing.T) {
	t.Parallel()
	c := newCountedServer(t)
	echo := c.tool(t, "test__echo")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()

	_, err := echo.Run(canceled, echoCall)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = echo.Run(expired, echoCall)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// Nor does it restart a server that stopped.
	c.crash(t)
	_, err = echo.Run(canceled, echoCall)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int64(1), c.starts.Load(), "a call whose context was done restarted the server")

	c.checkOneCall(t, echo)
	assert.Equal(t, int64(2), c.starts.Load())
}

func TestNothingSentWhenCancelledDuringRestart(t *testing.T) {
	t.Parallel()
	c := newCountedServer(t)
	echo := c.tool(t, "test__echo")
	c.crash(t)
	// The next call restarts the server, and is cancelled as the restart
	// completes (the source reports the restart as a change of its tools
	// just before it would send the call).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.src.Notify(cancel)
	_, err := echo.Run(ctx, echoCall)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int64(2), c.starts.Load())

	c.src.Notify(nil)
	c.checkOneCall(t, echo)
}

// checkOneCall makes a call, and checks that it is the only one the
// server received.
func (c *countedServer) checkOneCall(t *testing.T, echo toolloop.Tool) {
	res, err := echo.Run(context.Background(), echoCall)
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Text())
	// The server reads what it receives in order, but handles calls
	// concurrently: give one sent before a moment to be counted.
	assert.Never(t, func() bool { return c.calls.Load() != 1 }, 100*time.Millisecond, 5*time.Millisecond,
		"a call whose context was done reached the server")
}
