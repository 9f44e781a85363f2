package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// serveGoneEnv makes the test binary run mcp.Serve over stdio with the
// tool spew, instead of the tests, reporting to the file the variable
// names: "pid N" first, "canceled" when spew saw its context end, then
// "serve nil", "serve gone" or "serve error: ..." for what Serve returned,
// and "exit" last. Read in init, as serveStdioEnv is.
const serveGoneEnv = "TOOLLOOP_SERVE_GONE"

func init() {
	report := os.Getenv(serveGoneEnv)
	if report == "" {
		return
	}
	say := func(line string) {
		f, err := os.OpenFile(report, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			os.Exit(3)
		}
		_, _ = fmt.Fprintln(f, line)
		_ = f.Close()
	}
	say("pid " + strconv.Itoa(os.Getpid()))
	reg := &toolloop.ToolRegistry{}
	reg.MustRegister(spewTool{canceled: func() { say("canceled") }})
	loop := &toolloop.AgentLoop{Tools: reg, Limits: toolloop.Limits{ReportInterval: -1}}
	err := mcp.Serve(context.Background(), loop, nil)
	switch {
	case err == nil:
		say("serve nil")
	case errors.Is(err, mcp.ErrClientGone):
		say("serve gone")
	default:
		say("serve error: " + err.Error())
	}
	say("exit")
	os.Exit(0)
}

// spewTool reports progress, a write to stdout each time, until its call
// is cancelled.
type spewTool struct{ canceled func() }

func (spewTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "spew", Description: "Reports progress until cancelled."}
}

func (t spewTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	for i := 0; ; i++ {
		call.ReportProgress(toolloop.Progress{Done: float64(i), Message: strings.Repeat("x", 1024)})
		select {
		case <-ctx.Done():
			t.canceled()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// goneServer is mcp.Serve in a process of its own (see serveGoneEnv),
// spoken to over pipes.
type goneServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	lines  *bufio.Reader
	report string
}

func startGoneServer(t *testing.T) *goneServer {
	t.Helper()
	s := &goneServer{report: filepath.Join(t.TempDir(), "report")}
	s.cmd = exec.Command(os.Args[0])
	s.cmd.Env = append(os.Environ(), serveGoneEnv+"="+s.report, "GORACE=atexit_sleep_ms=0")
	s.cmd.Stderr = os.Stderr
	var err error
	s.stdin, err = s.cmd.StdinPipe()
	require.NoError(t, err)
	s.stdout, err = s.cmd.StdoutPipe()
	require.NoError(t, err)
	s.lines = bufio.NewReader(s.stdout)
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	return s
}

func (s *goneServer) send(t *testing.T, msg string) {
	t.Helper()
	_, err := io.WriteString(s.stdin, msg+"\n")
	require.NoError(t, err)
}

// recv reads messages until one has the method (or, for "", is a reply).
func (s *goneServer) recv(t *testing.T, method string) {
	t.Helper()
	for {
		line, err := s.lines.ReadBytes('\n')
		require.NoError(t, err)
		var m struct {
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		if m.Method == method && (method != "" || m.Result != nil) {
			return
		}
	}
}

func (s *goneServer) initialize(t *testing.T) {
	t.Helper()
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	s.recv(t, "")
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// exit waits for the process to exit by itself, and returns its exit code
// (-1 if a signal killed it) and its report.
func (s *goneServer) exit(t *testing.T) (int, []string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		require.Fail(t, "the server did not exit", "report: %q", readReport(t, s.report))
	}
	return s.cmd.ProcessState.ExitCode(), readReport(t, s.report)
}

func readReport(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[1:] // without the pid
}

// TestServeClientGone: mcp.Serve over stdio survives a client that stops
// reading its stdout (no death by SIGPIPE): the call in flight is
// cancelled and Serve returns ErrClientGone, by itself, though stdin stays
// open.
func TestServeClientGone(t *testing.T) {
	t.Parallel()
	t.Run("stdout closed mid-call", func(t *testing.T) {
		t.Parallel()
		s := startGoneServer(t)
		s.initialize(t)
		s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spew","arguments":{},"_meta":{"progressToken":"p"}}}`)
		s.recv(t, "notifications/progress")
		require.NoError(t, s.stdout.Close()) // the next progress fails with EPIPE
		code, report := s.exit(t)
		assert.Equal(t, 0, code, "report: %q", report)
		assert.Equal(t, []string{"canceled", "serve gone", "exit"}, report)
	})
	t.Run("stdout closed without a call", func(t *testing.T) {
		t.Parallel()
		s := startGoneServer(t)
		require.NoError(t, s.stdout.Close())
		s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		code, report := s.exit(t)
		assert.Equal(t, 0, code, "report: %q", report)
		assert.Equal(t, []string{"serve gone", "exit"}, report)
	})
	t.Run("stdin closed mid-call", func(t *testing.T) {
		t.Parallel()
		s := startGoneServer(t)
		s.initialize(t)
		s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spew","arguments":{},"_meta":{"progressToken":"p"}}}`)
		s.recv(t, "notifications/progress")
		require.NoError(t, s.stdin.Close())
		code, report := s.exit(t)
		assert.Equal(t, 0, code, "report: %q", report)
		assert.Equal(t, []string{"canceled", "serve gone", "exit"}, report)
	})
	t.Run("stdin closed between calls", func(t *testing.T) {
		// The session's orderly end: no error.
		t.Parallel()
		s := startGoneServer(t)
		s.initialize(t)
		require.NoError(t, s.stdin.Close())
		code, report := s.exit(t)
		assert.Equal(t, 0, code, "report: %q", report)
		assert.Equal(t, []string{"serve nil", "exit"}, report)
	})
}

// TestServeClientKilledTypeScript: the TypeScript SDK's client, killed in
// the middle of a call, leaves mcp.Serve (its child) alive; it sees stdin
// end, cancels the call, and returns ErrClientGone.
func TestServeClientKilledTypeScript(t *testing.T) {
	t.Parallel()
	node, _ := npmPeer(t, filepath.Join("sdk", "package.json"))
	report := filepath.Join(t.TempDir(), "report")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "npm", "killed_client.mjs"), os.Args[0])
	cmd.Env = append(os.Environ(), serveGoneEnv+"="+report, "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the client was to kill itself")

	// The server is an orphan now: wait for its report to end.
	var lines []string
	assert.Eventually(t, func() bool {
		lines = readReport(t, report)
		return len(lines) > 0 && lines[len(lines)-1] == "exit"
	}, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, []string{"canceled", "serve gone", "exit"}, lines)
	if t.Failed() {
		// Do not leave it behind.
		if b, err := os.ReadFile(report); err == nil {
			if pid, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "pid ")); err == nil {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
		}
	}
}

// TestRunClientGone: over any transport, a client whose end stops taking
// writes mid-call has the call cancelled, and Run returns ErrClientGone.
func TestRunClientGone(t *testing.T) {
	t.Parallel()
	canceled := make(chan struct{})
	reg := &toolloop.ToolRegistry{}
	reg.MustRegister(spewTool{canceled: func() { close(canceled) }})
	srv, err := mcp.NewServer(&toolloop.AgentLoop{Tools: reg, Limits: toolloop.Limits{ReportInterval: -1}}, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()

	inR, inW := io.Pipe()   // client to server
	outR, outW := io.Pipe() // server to client
	defer inW.Close()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(t.Context(), &sdk.IOTransport{Reader: inR, Writer: outW}) }()
	s := &goneServer{stdin: inW, lines: bufio.NewReader(outR)}
	s.initialize(t)
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spew","arguments":{},"_meta":{"progressToken":"p"}}}`)
	s.recv(t, "notifications/progress")
	require.NoError(t, outR.Close()) // the next write fails
	select {
	case err := <-ran:
		assert.ErrorIs(t, err, mcp.ErrClientGone)
	case <-time.After(30 * time.Second):
		require.Fail(t, "Run did not return")
	}
	select {
	case <-canceled:
	default:
		assert.Fail(t, "the call was not cancelled")
	}
}
