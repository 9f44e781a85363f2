package toolloop_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
)

// cycle is a model that asks for the same calls on odd turns and stops on
// even ones, forever, without checking anything: the cheapest possible
// model, so a benchmark measures the loop.
type cycle struct {
	calls []toolloop.ToolCall
	n     int
}

func (c *cycle) Generate(context.Context, *toolloop.Request) (*toolloop.Response, error) {
	c.n++
	if c.n%2 == 1 {
		return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: c.calls}, StopReason: toolloop.StopToolUse}, nil
	}
	return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("done")}}, StopReason: toolloop.StopEnd}, nil
}

type pathCount struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

// BenchmarkRunOneCall is a whole Run with one tool call: two model turns,
// the call, the transcript.
func BenchmarkRunOneCall(b *testing.B) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("read", "reads", func(_ context.Context, in pathCount) (any, error) { return in.Path, nil }))
	l := &toolloop.AgentLoop{
		Model: &cycle{calls: []toolloop.ToolCall{{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"src/main.go","count":3}`)}}},
		Tools: &reg,
	}
	in := []toolloop.Message{toolloop.UserMessage("go")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Run(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParallel16x10ms is one turn of 16 calls that each take 10 ms.
// Run in parallel, the turn takes a little over 10 ms.
func BenchmarkParallel16x10ms(b *testing.B) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("sleep", "sleeps", func(ctx context.Context, _ struct{}) (any, error) {
		t := time.NewTimer(10 * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return "ok", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	calls := make([]toolloop.ToolCall, 16)
	for i := range calls {
		calls[i] = toolloop.ToolCall{ID: "call_" + strconv.Itoa(i), Name: "sleep", Arguments: json.RawMessage(`{}`)}
	}
	l := &toolloop.AgentLoop{Model: &cycle{calls: calls}, Tools: &reg}
	in := []toolloop.Message{toolloop.UserMessage("go")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := l.Run(ctx, in)
		if err != nil || len(res.Executions) != 16 {
			b.Fatal(err)
		}
	}
}

// BenchmarkTruncate cuts outputs of growing size to the default 64 KiB
// budget. Time grows with the input (one validity scan); allocation stays
// at the size of the output: the input is never copied.
func BenchmarkTruncate(b *testing.B) {
	for _, mb := range []int{1, 10, 100} {
		line := "compiling package github.com/toolloop/toolloop/internal/thing ok\n"
		s := strings.Repeat(line, mb<<20/len(line)+1)
		b.Run(strconv.Itoa(mb)+"MB", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				if out := toolloop.TruncateText(s, toolloop.DefaultMaxResultBytes); len(out) > toolloop.DefaultMaxResultBytes {
					b.Fatal("over budget")
				}
			}
		})
	}
}

// BenchmarkRunCall is one call through the public API a driver uses to
// run calls itself: RunCall, with the same no-op tool as RunOneCall.
func BenchmarkRunCall(b *testing.B) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("read", "reads", func(_ context.Context, in pathCount) (any, error) { return in.Path, nil }))
	l := &toolloop.AgentLoop{Tools: &reg}
	tc := toolloop.ToolCall{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"src/main.go","count":3}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, _ := l.RunCall(ctx, "run_1", 1, tc, nil)
		if res.IsError() {
			b.Fatal(res.Text())
		}
	}
}
