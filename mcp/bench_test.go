package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// BenchmarkStdioCall compares one call of the test server's echo tool over
// stdio, made three ways in the same run:
//
//   - sdk: directly with the SDK's client, the baseline;
//   - source: through the Source's Tool.Run, what toolloop adds to a call;
//   - loop: through a whole AgentLoop run of one tool call and a final
//     answer from a scripted model (resolve, validate, execute, truncate,
//     events off), the cost an agent pays per call.
func BenchmarkStdioCall(b *testing.B) {
	args := json.RawMessage(`{"text":"hello"}`)
	ctx := context.Background()

	b.Run("sdk", func(b *testing.B) {
		cfg := stdioConfig(b)
		cmd := exec.Command(cfg.Command)
		cmd.Env = append(os.Environ(), serveEnv+"=1")
		client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})

	src, err := mcp.New("bench", stdioConfig(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	reg := registry(b, src)
	tool, ok := reg.Lookup(ctx, "bench__echo")
	if !ok {
		b.Fatal("no echo tool")
	}

	b.Run("source", func(b *testing.B) {
		call := &toolloop.Call{ID: "1", Name: "bench__echo", Arguments: args}
		b.ReportAllocs()
		for b.Loop() {
			res, err := tool.Run(ctx, call)
			if err != nil || res.IsError() {
				b.Fatal(err, res)
			}
		}
	})

	b.Run("loop", func(b *testing.B) {
		callTurn := &toolloop.Response{Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{
			{ID: "call_1", Name: "bench__echo", Arguments: args}}}}
		endTurn := &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("done")}}}
		model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			if req.Messages[len(req.Messages)-1].Role == toolloop.RoleTool {
				return endTurn, nil
			}
			return callTurn, nil
		})
		loop := &toolloop.AgentLoop{Model: model, Tools: reg}
		msgs := []toolloop.Message{toolloop.UserMessage("echo hello")}
		b.ReportAllocs()
		for b.Loop() {
			res, err := loop.Run(ctx, msgs)
			if err != nil || res.Messages[2].Result.IsError() {
				b.Fatal(err, res.Messages[2].Result)
			}
		}
	})
}

// BenchmarkLargeResult measures what one call costs the client when the
// server returns 100 MiB of text. The server is this test binary in a
// process of its own (so its memory is not counted), serving streamable
// HTTP on loopback and answering with an event stream (sse) or a JSON
// body (json). The call's budget is the loop's default, 1 MiB.
//
// peak-heap-MiB is the most heap in use during the calls beyond what was
// in use before them, sampled every 100µs.
func BenchmarkLargeResult(b *testing.B) {
	const size = 100 << 20
	for _, mode := range []string{"sse", "json"} {
		b.Run(mode, func(b *testing.B) {
			url := startHTTPServer(b, mode == "json")
			src, err := mcp.New("big", mcp.ServerConfig{URL: url}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			tool, ok := registry(b, src).Lookup(context.Background(), "big__large")
			if !ok {
				b.Fatal("no large tool")
			}
			call := &toolloop.Call{ID: "1", Name: "big__large", Arguments: json.RawMessage(fmt.Sprintf(`{"bytes":%d}`, size)),
				MaxOutputBytes: (1 << 20)}
			ctx := context.Background()
			b.SetBytes(size)
			b.ReportAllocs()
			peak := startHeapPeak()
			for b.Loop() {
				res, err := tool.Run(ctx, call)
				if err != nil || res.IsError() {
					b.Fatal(err, res)
				}
				if n := len(res.Text()); n > (1<<20) || !strings.Contains(res.Text(), "bytes cut from the middle") {
					b.Fatalf("the result was not cut to the budget: %d bytes", n)
				}
			}
			b.ReportMetric(peak.stop(), "peak-heap-MiB")
		})
	}
}

// startHTTPServer runs the test server with its large tool in a process
// of its own, and returns its URL.
func startHTTPServer(b *testing.B, jsonResponse bool) string {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	mode := "http"
	if jsonResponse {
		mode = "http-json"
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close() // the server stops when its stdin closes
		_ = cmd.Wait()
	})
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(url)
}

// heapPeak samples the heap in use until stopped.
type heapPeak struct {
	base, peak uint64
	quit, done chan struct{}
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	h := &heapPeak{quit: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	h.base = read()
	h.peak = h.base
	tick := time.NewTicker(100 * time.Microsecond)
	go func() {
		defer close(h.done)
		defer tick.Stop()
		for {
			select {
			case <-h.quit:
				return
			case <-tick.C:
				h.peak = max(h.peak, read())
			}
		}
	}()
	return h
}

// stop stops the sampling and returns the peak over the base, in MiB.
func (h *heapPeak) stop() float64 {
	close(h.quit)
	<-h.done
	return float64(h.peak-h.base) / (1 << 20)
}
