package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// BenchmarkStdioLoopVsSDK measures one call of the test server's echo
// tool over stdio made four ways, interleaved in each iteration (in an
// order that alternates), each on a server process of its own (this test
// binary, so no Node start-up or JIT is measured):
//
//   - sdk: the SDK's client calling the server directly, the baseline;
//   - source: the Source's tool, called directly (Tool.Run): what this
//     package adds to a call;
//   - runcall: [toolloop.AgentLoop.RunCall], one call through the whole
//     pipeline (resolve, validate, guard, hooks, execute, truncate,
//     events) to the Source;
//   - run: a whole [toolloop.AgentLoop.Run] of two turns of a scripted
//     model: one tool call, then a final answer.
//
// It reports each one's time per call and their ratios to sdk; ns/op is
// the four together.
func BenchmarkStdioLoopVsSDK(b *testing.B) {
	args := json.RawMessage(`{"text":"hello"}`)
	ctx := context.Background()

	cfg := stdioConfig(b)
	cmd := exec.Command(cfg.Command)
	cmd.Env = append(os.Environ(), serveEnv+"=1", "GORACE=atexit_sleep_ms=0")
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	sdkCall := func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}

	newLoop := func(name string, model toolloop.Model) *toolloop.AgentLoop {
		src, err := mcp.New(name, stdioConfig(b), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = src.Close() })
		return &toolloop.AgentLoop{Model: model, Tools: registry(b, src)}
	}
	// The source's tool, called directly: what the mcp package adds.
	direct := newLoop("d", looptest.Always(looptest.Text("unused")))
	dtool, ok := direct.Tools.Lookup(ctx, "d__echo")
	if !ok {
		b.Fatal("no echo tool")
	}
	dcall := &toolloop.Call{ID: "1", Name: "d__echo", Arguments: args}
	sourceCall := func() {
		res, err := dtool.Run(ctx, dcall)
		if err != nil || res.IsError() {
			b.Fatal(err, res)
		}
	}
	// RunCall needs no model; the loop wants one all the same.
	callLoop := newLoop("a", looptest.Always(looptest.Text("unused")))
	tc := toolloop.ToolCall{ID: "call_1", Name: "a__echo", Arguments: args}
	runCall := func(i int) {
		res, _ := callLoop.RunCall(ctx, "bench", i+1, tc, nil)
		if res == nil || res.IsError() {
			b.Fatal(res)
		}
	}

	callTurn := looptest.Calls(looptest.Call("call_1", "b__echo", string(args)))
	endTurn := looptest.Text("done")
	runLoop := newLoop("b", toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		if req.Messages[len(req.Messages)-1].Role == toolloop.RoleTool {
			return endTurn, nil
		}
		return callTurn, nil
	}))
	msgs := []toolloop.Message{toolloop.UserMessage("echo hello")}
	run := func() {
		res, err := runLoop.Run(ctx, msgs)
		if err != nil || res.Messages[2].Result.IsError() {
			b.Fatal(err, res.Messages[2].Result)
		}
	}

	// Warm all three up, then measure.
	for i := range 50 {
		sdkCall()
		sourceCall()
		runCall(i)
		run()
	}
	var tSDK, tSource, tCall, tRun time.Duration
	timed := func(d *time.Duration, f func()) {
		t := time.Now()
		f()
		*d += time.Since(t)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			timed(&tSDK, sdkCall)
			timed(&tSource, sourceCall)
			timed(&tCall, func() { runCall(i) })
			timed(&tRun, run)
		} else {
			timed(&tRun, run)
			timed(&tCall, func() { runCall(i) })
			timed(&tSource, sourceCall)
			timed(&tSDK, sdkCall)
		}
		i++
	}
	n := float64(i)
	b.ReportMetric(float64(tSDK.Nanoseconds())/n, "sdk-ns/call")
	b.ReportMetric(float64(tSource.Nanoseconds())/n, "source-ns/call")
	b.ReportMetric(float64(tCall.Nanoseconds())/n, "runcall-ns/call")
	b.ReportMetric(float64(tRun.Nanoseconds())/n, "run-ns/call")
	b.ReportMetric(float64(tSource)/float64(tSDK), "source/sdk")
	b.ReportMetric(float64(tCall)/float64(tSDK), "runcall/sdk")
	b.ReportMetric(float64(tRun)/float64(tSDK), "run/sdk")
}

// BenchmarkHTTPServerDies measures how long a call in flight to a
// streamable HTTP server (server-everything, which keeps an event store
// so that the SDK would try to resume the broken stream) takes to fail
// once the server process is killed. Each iteration starts a server,
// makes a long call, kills the server after the call's first progress
// notification, and times the wait for the error from the signal on;
// ms-to-error is the mean, max-ms-to-error the slowest. It needs Node (see npmServer): run it with -benchtime=5x.
func BenchmarkHTTPServerDies(b *testing.B) {
	var total, slowest time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		port := freePort(b)
		srv := startEverythingHTTP(b, port)
		src, err := mcp.New("everything", mcp.ServerConfig{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		long, ok := registry(b, src).Lookup(context.Background(), "everything__trigger-long-running-operation")
		if !ok {
			b.Fatal("no long-running tool")
		}
		took, err := killMidCall(b, long, srv)
		var lost *mcp.ConnectionLostError
		if !errors.As(err, &lost) {
			b.Fatalf("want a lost connection, got %v", err)
		}
		_ = src.Close()
		total += took
		slowest = max(slowest, took)
		n++
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(n), "ms-to-error")
	b.ReportMetric(float64(slowest.Microseconds())/1000, "max-ms-to-error")
}

// BenchmarkRegisterHungServer measures how long Servers.Register blocks,
// with the default options, on a stdio server that starts but never
// answers. Each iteration takes over 30 seconds: run it with
// -benchtime=1x.
func BenchmarkRegisterHungServer(b *testing.B) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		b.Skip("no sh")
	}
	for b.Loop() {
		ss, err := mcp.NewServers(&mcp.Config{Servers: map[string]mcp.ServerConfig{
			"hung": {Command: sh, Args: []string{"-c", "exec sleep 3600"}},
		}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		began := time.Now()
		err = ss.Register(context.Background(), &toolloop.ToolRegistry{})
		b.ReportMetric(time.Since(began).Seconds(), "s-blocked")
		var te *mcp.TimeoutError
		if !errors.As(err, &te) {
			b.Fatalf("want a TimeoutError, got %v", err)
		}
		_ = ss.Close()
	}
}
