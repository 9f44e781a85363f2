package toolloop

import (
	"context"
	"encoding/json"
	"testing"
)

type benchIn struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

var benchArgs = json.RawMessage(`{"path":"src/main.go","count":3}`)

var sink any

func noop(_ context.Context, in benchIn) (any, error) { return in.Path, nil }

// BenchmarkCallBaseline is what a hand-rolled loop does per call: decode
// the arguments and call the function.
func BenchmarkCallBaseline(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		var in benchIn
		if err := json.Unmarshal(benchArgs, &in); err != nil {
			b.Fatal(err)
		}
		out, _ := noop(ctx, in)
		sink = out
	}
}

// BenchmarkCallPipeline is one call through the whole pipeline:
// normalize, resolve, validate, guard, hooks, execute, truncate.
func BenchmarkCallPipeline(b *testing.B) {
	var reg ToolRegistry
	reg.MustRegister(NewTool("read", "reads", noop))
	l := &AgentLoop{Model: ModelFunc(nil), Tools: &reg}
	rn := l.newRun("bench", nil)
	rn.turn = 1
	ctx := context.Background()
	tc := ToolCall{ID: "call_1", Name: "read", Arguments: benchArgs}
	b.ReportAllocs()
	for b.Loop() {
		res, _ := rn.execCall(ctx, rn.newCall(tc, 0))
		if res.IsError() {
			b.Fatal(res.Text())
		}
		sink = res
	}
}

// BenchmarkCallTurn is one call as the loop runs it: on its own goroutine,
// under the turn's coordinator.
func BenchmarkCallTurn(b *testing.B) {
	var reg ToolRegistry
	reg.MustRegister(NewTool("read", "reads", noop))
	l := &AgentLoop{Model: ModelFunc(nil), Tools: &reg}
	rn := l.newRun("bench", nil)
	rn.turn = 1
	ctx := context.Background()
	calls := []ToolCall{{ID: "call_1", Name: "read", Arguments: benchArgs}}
	b.ReportAllocs()
	for b.Loop() {
		res, _ := rn.runTurn(ctx, calls, nil, nil)
		if res[0].IsError() {
			b.Fatal(res[0].Text())
		}
	}
}
