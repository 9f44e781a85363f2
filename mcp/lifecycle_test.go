//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
	"github.com/toolloop/toolloop/mcp/internal/mcptest"
)

// gone reports whether no process (not even a zombie) has the given ID.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestKillMidCall(t *testing.T) {
	t.Parallel()
	s := newServer(t, "stdio")
	src := s.source(t, "test", nil, nil)
	reg := registry(t, src)
	pid := mcp.PID(src)
	require.NotZero(t, pid)

	var killedAt time.Time
	var once sync.Once
	rec := &looptest.Recorder{}
	onEvent := func(e toolloop.Event) {
		rec.Record(e)
		if e.Type == toolloop.EventProgress && e.CallID == "slow" {
			once.Do(func() {
				killedAt = time.Now()
				require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			})
		}
	}
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("slow", "test__slow", `{"steps":100,"delay_ms":20}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("echo", "test__echo", `{"text":"alive"}`))},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	res := run(t, &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: onEvent}, "go")
	got := looptest.Results(res.Messages)

	require.False(t, killedAt.IsZero(), "no progress arrived")
	slow := got["slow"]
	require.True(t, slow.IsError())
	assert.Equal(t, toolloop.KindExecutionFailed, slow.Error.Kind)
	var doneAt time.Time
	for _, e := range rec.ForCall("slow") {
		if e.Type == toolloop.EventComplete {
			doneAt = e.Time
		}
	}
	assert.Less(t, doneAt.Sub(killedAt), time.Second, "the call did not fail promptly")

	// The next call restarted the server.
	assert.Equal(t, "alive", got["echo"].Text())
	assert.NotEqual(t, pid, mcp.PID(src))
	assert.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "the killed server was not reaped")
}

func TestCloseStopsServer(t *testing.T) {
	t.Parallel()
	s := newServer(t, "stdio")
	src := s.source(t, "test", nil, nil)
	reg := registry(t, src)
	pid := mcp.PID(src)
	require.NotZero(t, pid)
	assert.Eventually(t, func() bool { return s.logs.contains(mcptest.StartLine) }, 5*time.Second, 10*time.Millisecond,
		"the server's stderr did not reach the logger")
	assert.Contains(t, s.logs.String(), "mcp_server=test")

	// A call in flight when Close comes fails at once.
	tool, ok := reg.Lookup(context.Background(), "test__slow")
	require.True(t, ok)
	type outcome struct {
		res *toolloop.ToolResult
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		res, err := tool.Run(context.Background(), &toolloop.Call{ID: "1", Name: "test__slow", Arguments: json.RawMessage(`{"steps":100,"delay_ms":50}`)})
		ch <- outcome{res, err}
	}()
	time.Sleep(100 * time.Millisecond)

	start := time.Now()
	require.NoError(t, src.Close())
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.True(t, gone(pid), "the server process is still there after Close")
	o := <-ch
	var te *toolloop.ToolError
	require.ErrorAs(t, o.err, &te)
	assert.Equal(t, toolloop.KindExecutionFailed, te.Kind)

	require.NoError(t, src.Close(), "Close is idempotent")
	_, err := src.Tools(context.Background())
	assert.ErrorIs(t, err, mcp.ErrClosed)
	_, err = tool.Run(context.Background(), &toolloop.Call{ID: "2", Name: "test__slow", Arguments: json.RawMessage(`{"steps":1,"delay_ms":1}`)})
	require.ErrorAs(t, err, &te)
	assert.Equal(t, toolloop.KindExecutionFailed, te.Kind)
}

// countingServer is an in-process test server whose transport counts
// dials and fails while fail is set.
type countingServer struct {
	mem   *memoryServer
	dials atomic.Int64
	fail  atomic.Bool
}

func newCountingServer() *countingServer {
	c := &countingServer{mem: &memoryServer{}}
	c.mem.srv = mcptest.NewServer(&mcptest.Options{Crash: c.mem.crash, Stderr: &logBuffer{}})
	return c
}

func (c *countingServer) transport(ctx context.Context) (sdk.Transport, error) {
	c.dials.Add(1)
	if c.fail.Load() {
		return nil, errors.New("no server today")
	}
	return c.mem.transport(ctx)
}

func TestLazy(t *testing.T) {
	t.Parallel()
	c := newCountingServer()
	src, err := mcp.New("lazy", mcp.ServerConfig{Lazy: true, Transport: c.transport}, nil)
	require.NoError(t, err)
	defer src.Close()
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	assert.Zero(t, c.dials.Load(), "a lazy source connected at registration")

	specs := reg.Specs(context.Background())
	assert.Equal(t, int64(1), c.dials.Load())
	assert.Len(t, specs, 9)
}

func TestLazyRetriesFailedStart(t *testing.T) {
	t.Parallel()
	c := newCountingServer()
	c.fail.Store(true)
	src, err := mcp.New("lazy", mcp.ServerConfig{Lazy: true, Transport: c.transport}, &mcp.Options{MinBackoff: 10 * time.Millisecond})
	require.NoError(t, err)
	defer src.Close()
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	assert.Empty(t, reg.Specs(context.Background()))
	assert.Equal(t, int64(1), c.dials.Load())

	c.fail.Store(false)
	assert.Eventually(t, func() bool { return len(reg.Specs(context.Background())) == 9 }, 5*time.Second, 5*time.Millisecond)
}

func TestStartBackoff(t *testing.T) {
	t.Parallel()
	c := newCountingServer()
	c.fail.Store(true)
	src, err := mcp.New("down", mcp.ServerConfig{Transport: c.transport}, &mcp.Options{MinBackoff: time.Hour})
	require.NoError(t, err)
	defer src.Close()
	ctx := context.Background()
	for _, wantDials := range []int64{1, 2, 2, 2} {
		_, err := src.Tools(ctx)
		require.Error(t, err)
		assert.Equal(t, wantDials, c.dials.Load())
	}
	// A registry that cannot list the source's tools refuses it.
	var reg toolloop.ToolRegistry
	assert.Error(t, reg.AddSource(ctx, src))
}

func TestCrashLoopBacksOff(t *testing.T) {
	t.Parallel()
	c := newCountingServer()
	src, err := mcp.New("test", mcp.ServerConfig{Transport: c.transport}, &mcp.Options{MinBackoff: time.Hour})
	require.NoError(t, err)
	defer src.Close()
	reg := registry(t, src)
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "test__crash", `{}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c2", "test__crash", `{}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("echo", "test__echo", `{"text":"hi"}`))},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	res := run(t, &toolloop.AgentLoop{Model: model, Tools: reg}, "go")
	got := looptest.Results(res.Messages)
	for _, id := range []string{"c1", "c2", "echo"} {
		require.True(t, got[id].IsError(), id)
		assert.Equal(t, toolloop.KindExecutionFailed, got[id].Error.Kind, id)
	}
	// The first crash restarted the server at once; the second, with no
	// success in between, made it wait before the next attempt.
	assert.Equal(t, int64(2), c.dials.Load())
	assert.Contains(t, got["echo"].Text(), "next restart attempt")
}

func TestServers(t *testing.T) {
	t.Parallel()
	good := stdioConfig(t)
	cfg := &mcp.Config{Servers: map[string]mcp.ServerConfig{
		"good": good,
		"bad":  {Command: "/nonexistent/mcp-server"},
		"off":  {Command: "/nonexistent/mcp-server", Disabled: true},
	}}
	servers, err := mcp.NewServers(cfg, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, servers.Close()) }()
	var names []string
	for _, s := range servers.Sources() {
		names = append(names, s.Name())
	}
	assert.Equal(t, []string{"bad", "good"}, names)
	assert.Nil(t, servers.Source("off"))

	var reg toolloop.ToolRegistry
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = servers.Register(ctx, &reg)
	assert.ErrorContains(t, err, `"bad"`)
	assert.Contains(t, specNames(reg.Specs(ctx)), "good__echo")
	pid := mcp.PID(servers.Source("good"))
	require.NoError(t, servers.Close())
	assert.True(t, gone(pid))
}

func TestCloseKillsStubbornServer(t *testing.T) {
	t.Parallel()
	cfg := stdioConfig(t)
	cfg.Env[serveEnv] = "stubborn"
	src, err := mcp.New("stubborn", cfg, &mcp.Options{ShutdownTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	registry(t, src)
	pid := mcp.PID(src)
	require.NotZero(t, pid)
	start := time.Now()
	require.NoError(t, src.Close())
	// stdin closed, 100ms; SIGTERM ignored, 100ms; then SIGKILL.
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.True(t, gone(pid), "the stubborn server survived Close")
}

func TestCloseKillsServerSlowToReap(t *testing.T) {
	t.Parallel()
	cfg := stdioConfig(t)
	cfg.Env[serveEnv] = "stubborn-parent"
	// A killed server whose child holds its stderr is reaped only once
	// exec gives up on the pipe, a second later: longer than the shutdown
	// timeout, as a loaded machine can make any reaping. The kill worked;
	// Close reports no error, and leaves neither behind.
	src, err := mcp.New("stubborn", cfg, &mcp.Options{ShutdownTimeout: 100 * time.Millisecond, Logger: quietLogger()})
	require.NoError(t, err)
	registry(t, src)
	pid := mcp.PID(src)
	require.NotZero(t, pid)
	require.NoError(t, src.Close())
	assert.True(t, gone(pid), "the stubborn server survived Close")
	assert.Eventually(t, func() bool { return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH) }, 5*time.Second, 10*time.Millisecond,
		"the server's child survived Close")
}

func TestConcurrentCallsShareOneRestart(t *testing.T) {
	t.Parallel()
	c := newCountingServer()
	src, err := mcp.New("test", mcp.ServerConfig{Transport: c.transport}, nil)
	require.NoError(t, err)
	defer src.Close()
	reg := registry(t, src)
	var echoes []toolloop.ToolCall
	for i := range 6 {
		echoes = append(echoes, looptest.Call(fmt.Sprint("e", i), "test__echo", `{"text":"hi"}`))
	}
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("crash", "test__crash", `{}`))},
		looptest.Turn{Reply: looptest.Calls(echoes...)},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	res := run(t, &toolloop.AgentLoop{Model: model, Tools: reg}, "go")
	for id, r := range looptest.Results(res.Messages) {
		if id != "crash" {
			assert.Equal(t, "hi", r.Text(), id)
		}
	}
	assert.Equal(t, int64(2), c.dials.Load(), "the six calls should share one restart")
}
