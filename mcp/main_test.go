package mcp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
	"github.com/toolloop/toolloop/mcp/internal/mcptest"
)

// serveEnv makes the test binary run the test server on stdio instead of
// the tests, so stdio tests need no separate build.
const serveEnv = "TOOLLOOP_MCPTEST_SERVE"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "1", "large":
		opts := &mcptest.Options{Large: os.Getenv(serveEnv) == "large"}
		if err := mcptest.ServeStdio(context.Background(), opts); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "stubborn", "stubborn-parent":
		// A server that outlives its stdin and ignores SIGTERM; as a
		// parent, it leaves a child holding its stderr, so that its
		// reaping waits for the pipe (exec.Cmd.WaitDelay).
		signal.Ignore(syscall.SIGTERM)
		if os.Getenv(serveEnv) == "stubborn-parent" {
			child := exec.Command(os.Args[0])
			child.Env = append(os.Environ(), serveEnv+"=sleep")
			child.Stderr = os.Stderr
			if err := child.Start(); err != nil {
				os.Exit(1)
			}
		}
		_ = mcptest.ServeStdio(context.Background(), nil)
		time.Sleep(time.Hour)
		os.Exit(0)
	case "sleep":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "http", "http-json":
		// A streamable HTTP server in a process of its own, for benchmarks
		// that measure the client's memory alone.
		if err := mcptest.ServeHTTP(os.Getenv(serveEnv) == "http-json"); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// server is the test server reached over one transport.
type server struct {
	kind string // "memory", "stdio", "http" or "sse"
	cfg  mcp.ServerConfig
	// canceled counts slow calls that saw their cancellation, for servers
	// in this process; stdio servers report it on stderr.
	canceled *atomic.Int64
	logs     *logBuffer
}

// newServer starts (for http) or prepares the test server over kind.
func newServer(t *testing.T, kind string) *server {
	t.Helper()
	s := &server{kind: kind, canceled: new(atomic.Int64), logs: &logBuffer{}}
	switch kind {
	case "stdio":
		s.cfg = stdioConfig(t)
	case "memory":
		h := &memoryServer{}
		h.srv = mcptest.NewServer(&mcptest.Options{Crash: h.crash, Canceled: s.canceled, Stderr: s.logs})
		s.cfg = mcp.ServerConfig{Transport: h.transport}
	case "http":
		var ts *httptest.Server
		srv := mcptest.NewServer(&mcptest.Options{
			Crash:    func() { ts.CloseClientConnections() },
			Canceled: s.canceled, Stderr: s.logs,
		})
		ts = httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
		t.Cleanup(ts.Close)
		s.cfg = mcp.ServerConfig{URL: ts.URL}
	case "sse":
		var ts *httptest.Server
		srv := mcptest.NewServer(&mcptest.Options{
			Crash:    func() { ts.CloseClientConnections() },
			Canceled: s.canceled, Stderr: s.logs,
		})
		ts = httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
		t.Cleanup(ts.Close)
		s.cfg = mcp.ServerConfig{Type: "sse", URL: ts.URL}
	default:
		t.Fatalf("unknown transport %q", kind)
	}
	return s
}

// stdioConfig runs this test binary as the test server.
func stdioConfig(t testing.TB) mcp.ServerConfig {
	exe, err := os.Executable()
	require.NoError(t, err)
	// GORACE: a race-enabled server would otherwise linger a second on exit.
	return mcp.ServerConfig{Command: exe, Env: map[string]string{serveEnv: "1", "GORACE": "atexit_sleep_ms=0"}}
}

// source returns a source for the server, closed when the test ends.
func (s *server) source(t testing.TB, name string, edit func(*mcp.ServerConfig), opts *mcp.Options) *mcp.Source {
	t.Helper()
	cfg := s.cfg
	if edit != nil {
		edit(&cfg)
	}
	var o mcp.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(s.logs, nil))
	}
	src, err := mcp.New(name, cfg, &o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	return src
}

// sawCancel reports whether the server saw a call's cancellation.
func (s *server) sawCancel() bool {
	return s.canceled.Load() > 0 || s.logs.contains(mcptest.CancelLine)
}

// memoryServer serves the test server over the SDK's in-memory transports.
type memoryServer struct {
	srv   *sdk.Server
	mu    sync.Mutex
	conns []sdk.Connection
}

func (m *memoryServer) transport(ctx context.Context) (sdk.Transport, error) {
	ct, st := sdk.NewInMemoryTransports()
	if _, err := m.srv.Connect(ctx, &keepConn{Transport: st, m: m}, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

// crash cuts every connection, as a dying server process would.
func (m *memoryServer) crash() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		_ = c.Close()
	}
	m.conns = nil
}

type keepConn struct {
	sdk.Transport
	m *memoryServer
}

func (k *keepConn) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := k.Transport.Connect(ctx)
	if err == nil {
		k.m.mu.Lock()
		k.m.conns = append(k.m.conns, c)
		k.m.mu.Unlock()
	}
	return c, err
}

// logBuffer collects log output, safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) contains(s string) bool { return strings.Contains(b.String(), s) }

// registry returns a registry holding src.
func registry(t testing.TB, src toolloop.Source) *toolloop.ToolRegistry {
	t.Helper()
	reg := &toolloop.ToolRegistry{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, reg.AddSource(ctx, src))
	return reg
}

func specNames(specs []toolloop.ToolSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}
