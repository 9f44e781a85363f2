package eino

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolloop/toolloop"
)

// The benchmarks share one no-op tool with a two-field input and one call
// of it, as in issue 38 and the core's BenchmarkCallBaseline.

type pathCount struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

func noop(_ context.Context, in pathCount) (any, error) { return in.Path, nil }

const args = `{"path":"src/main.go","count":3}`

var sink any

// BenchmarkBaseline is what a hand-rolled loop does per call: decode the
// arguments and call the function, on the caller's goroutine. Every other
// benchmark is read as a ratio to this one, from the same run.
func BenchmarkBaseline(b *testing.B) {
	ctx := context.Background()
	raw := []byte(args)
	b.ReportAllocs()
	for b.Loop() {
		var in pathCount
		if err := json.Unmarshal(raw, &in); err != nil {
			b.Fatal(err)
		}
		sink, _ = noop(ctx, in)
	}
}

// BenchmarkHandOff is the baseline's work handed to another goroutine
// and its result handed back, with a timer armed while it runs: the
// least it costs to run a call somewhere its caller can stop waiting for.
// HandOff minus Baseline is the cost of the hand-off alone.
func BenchmarkHandOff(b *testing.B) {
	ctx := context.Background()
	raw := []byte(args)
	jobs := make(chan func() any)
	results := make(chan any, 1)
	go func() {
		for f := range jobs {
			results <- f()
		}
	}()
	defer close(jobs)
	work := func() any {
		var in pathCount
		if err := json.Unmarshal(raw, &in); err != nil {
			return err
		}
		out, _ := noop(ctx, in)
		return out
	}
	timer := time.NewTimer(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		timer.Reset(time.Minute)
		jobs <- work
		select {
		case sink = <-results:
		case <-timer.C:
			b.Fatal("timed out")
		}
		timer.Stop()
	}
}

// BenchmarkEinoToolsNode is one call through eino's ToolsNode: a tool made
// by utils.InferTool, invoked with an assistant message holding one call.
func BenchmarkEinoToolsNode(b *testing.B) {
	ctx := context.Background()
	t, err := utils.InferTool("read", "reads", noop)
	if err != nil {
		b.Fatal(err)
	}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: []tool.BaseTool{t}})
	if err != nil {
		b.Fatal(err)
	}
	msg := schema.AssistantMessage("", []schema.ToolCall{{
		ID: "call_1", Type: "function",
		Function: schema.FunctionCall{Name: "read", Arguments: args},
	}})
	b.ReportAllocs()
	for b.Loop() {
		out, err := node.Invoke(ctx, msg)
		if err != nil || len(out) != 1 {
			b.Fatal(err)
		}
		sink = out
	}
}

func loop(model toolloop.Model) *toolloop.AgentLoop {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("read", "reads", noop))
	return &toolloop.AgentLoop{Model: model, Tools: &reg}
}

var call = toolloop.ToolCall{ID: "call_1", Name: "read", Arguments: json.RawMessage(args)}

// BenchmarkRunCall is one call through AgentLoop.RunCall, the public API
// for running a single call: resolved, validated, guarded, run on a
// goroutine that can be abandoned if it hangs, answered.
func BenchmarkRunCall(b *testing.B) {
	l := loop(nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, _ := l.RunCall(ctx, "run_1", 1, call, nil)
		if res.IsError() {
			b.Fatal(res.Text())
		}
		sink = res
	}
}

// script is the cheapest model: with calls, a turn asking for them and
// then an answer; without, the answer at once.
type script struct {
	calls []toolloop.ToolCall
	n     int
}

var (
	callTurn = &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call}}, StopReason: toolloop.StopToolUse}
	answer   = &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("done")}}, StopReason: toolloop.StopEnd}
)

func (s *script) Generate(context.Context, *toolloop.Request) (*toolloop.Response, error) {
	s.n++
	if len(s.calls) > 0 && s.n%2 == 1 {
		return callTurn, nil
	}
	return answer, nil
}

// BenchmarkRunTurnCall is what one call in a turn of Run costs: a run
// whose model asks for the call and then answers, minus a run whose model
// answers at once, both measured here. Its ns/op and allocs/op are those
// of the whole run with the call; the metrics ns/call, B/call and
// allocs/call are the difference, the cost of the turn that made the call.
func BenchmarkRunTurnCall(b *testing.B) {
	ctx := context.Background()
	in := []toolloop.Message{toolloop.UserMessage("go")}
	with, without := loop(&script{calls: []toolloop.ToolCall{call}}), loop(&script{})
	run := func(l *toolloop.AgentLoop, calls int) {
		res, err := l.Run(ctx, in)
		if err != nil || len(res.Executions) != calls {
			b.Fatal(err)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocs0, bytes0 := ms.Mallocs, ms.TotalAlloc
	b.ReportAllocs()
	for b.Loop() {
		run(with, 1)
	}
	runtime.ReadMemStats(&ms)
	withAllocs, withBytes := ms.Mallocs-allocs0, ms.TotalAlloc-bytes0
	// The run without the call, as many times as b.Loop ran the one with
	// it, timed the same way.
	n := b.N
	allocs0, bytes0 = ms.Mallocs, ms.TotalAlloc
	start := time.Now()
	for range n {
		run(without, 0)
	}
	plain := time.Since(start)
	runtime.ReadMemStats(&ms)
	plainAllocs, plainBytes := ms.Mallocs-allocs0, ms.TotalAlloc-bytes0
	b.ReportMetric(float64(b.Elapsed()-plain)/float64(n), "ns/call")
	b.ReportMetric(float64(int64(withBytes)-int64(plainBytes))/float64(n), "B/call")
	b.ReportMetric(float64(int64(withAllocs)-int64(plainAllocs))/float64(n), "allocs/call")
}
