package toolloop

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"
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

// BenchmarkCallHandOff is the baseline's work handed to another goroutine
// and its result handed back, with a timer armed while it runs: what it
// costs at least to run a call where its caller can stop waiting for it
// (as internal/compare/eino's BenchmarkHandOff). CallHandOff minus
// CallBaseline is the hand-off alone.
func BenchmarkCallHandOff(b *testing.B) {
	ctx := context.Background()
	jobs := make(chan func() any)
	results := make(chan any, 1)
	go func() {
		for f := range jobs {
			results <- f()
		}
	}()
	defer close(jobs)
	work := func() any {
		var in benchIn
		if err := json.Unmarshal(benchArgs, &in); err != nil {
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

// BenchmarkCacheCheck is what telling a cache bust costs per model
// request (see EventCacheBust), on transcripts of 100 and 1,000 turns
// with 20 tools: a turn that appended to the run's transcript (the
// usual case); one whose tool list is a new slice of the same specs (as
// with the tool search or output tool); and two whose messages are
// compared one by one: a request a hook copied to a new array, and one
// after an edit halfway (it compares up to the edit).
func BenchmarkCacheCheck(b *testing.B) {
	tools := make([]ToolSpec, 20)
	for i := range tools {
		tools[i] = ToolSpec{Name: "tool_" + string(rune('a'+i)), Description: "Does a thing.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	for _, n := range []int{100, 1000} {
		msgs := []Message{SystemMessage("sys"), UserMessage("task")}
		for i := range n {
			id := "c" + string(rune('0'+i%10))
			msgs = append(msgs, Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: benchArgs}}},
				ToolMessage(&ToolResult{CallID: id, Name: "read", Status: StatusOK, Content: []Content{TextContent("output")}}))
		}
		prev := msgs[:len(msgs)-2]
		copied := append([]Message(nil), msgs...)
		edited := append([]Message(nil), msgs...)
		edited[len(msgs)/2] = ToolMessage(&ToolResult{CallID: "x", Name: "read", Status: StatusOK})
		cases := []struct {
			name            string
			cur, transcript []Message
			tools           []ToolSpec
			editAt          int
		}{
			{"append", msgs, msgs, tools, len(prev)},
			{"new-tool-slice", msgs, msgs, append([]ToolSpec(nil), tools...), len(prev)},
			{"hook-copied", copied, msgs, tools, len(prev)},
			{"edited-half", edited, edited, tools, len(msgs) / 2},
		}
		for _, c := range cases {
			b.Run(c.name+"/turns="+itoa(n), func(b *testing.B) {
				req := &Request{Messages: c.cur, Tools: c.tools}
				var w cacheWatch
				b.ReportAllocs()
				for b.Loop() {
					w = cacheWatch{on: true, own: true, msgs: prev, tools: tools, editAt: c.editAt}
					sink, _ = w.check(req, c.transcript)
				}
			})
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
