package sessiontest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/session"
)

// Benchmark measures a store through [session.Sessions]:
//
//   - AppendTurn: the append of one turn's records (a model response of
//     about 1 KB asking for four calls, and their completions of 2 to
//     8 KB), as a run makes it at the turn's end;
//   - Load1000: the load of a session of one run of 1,000 such turns
//     (5,001 records, 21 MB), decoded and replayed;
//   - Load1000Compacted: the same session with a compaction's checkpoint
//     ten turns before its end, which loading starts from.
//
// newBacking returns a function that opens a Store on a fresh backing.
func Benchmark(b *testing.B, newBacking func(b *testing.B) func() session.Store) {
	b.Run("AppendTurn", func(b *testing.B) {
		st := newBacking(b)()
		ctx := context.Background()
		if err := st.Create(ctx, session.Info{ID: "bench"}); err != nil {
			b.Fatal(err)
		}
		l, err := st.Acquire(ctx, "bench", "bench", time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		turn := benchTurn(1)
		bytes := 0
		for _, d := range turn {
			bytes += len(d)
		}
		b.SetBytes(int64(bytes))
		b.ReportAllocs()
		seq := int64(1)
		for b.Loop() {
			batch := session.Batch{Records: make([]session.Record, len(turn)), Spend: session.Spend{InputTokens: 1000, OutputTokens: 100}}
			for i, d := range turn {
				batch.Records[i] = session.Record{Seq: seq, Data: d}
				seq++
			}
			if err := st.Append(ctx, l, batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, compacted := range []bool{false, true} {
		name := "Load1000"
		if compacted {
			name += "Compacted"
		}
		b.Run(name, func(b *testing.B) {
			st := newBacking(b)()
			ctx := context.Background()
			if err := st.Create(ctx, session.Info{ID: "long"}); err != nil {
				b.Fatal(err)
			}
			l, err := st.Acquire(ctx, "long", "bench", time.Hour)
			if err != nil {
				b.Fatal(err)
			}
			seq := int64(1)
			add := func(base bool, data ...[]byte) {
				batch := session.Batch{}
				for _, d := range data {
					batch.Records = append(batch.Records, session.Record{Seq: seq, Base: base, Data: d})
					seq++
				}
				if err := st.Append(ctx, l, batch); err != nil {
					b.Fatal(err)
				}
			}
			start, _ := json.Marshal(toolloop.Event{Type: toolloop.EventRunStart, RunID: "run_1", Messages: []toolloop.Message{toolloop.UserMessage("go")}})
			add(true, start)
			for turn := 1; turn <= 1000; turn++ {
				add(false, benchTurn(turn)...)
				if compacted && turn == 990 {
					msgs := []toolloop.Message{toolloop.UserMessage("a summary of 990 turns: " + strings.Repeat("s", 4000))}
					cp, _ := json.Marshal(toolloop.Event{Type: session.EventCheckpoint, RunID: "run_1", Turn: turn, Text: "compact", Messages: msgs})
					add(true, cp)
				}
			}
			ss := session.New(st, session.Options{})
			b.ReportAllocs()
			for b.Loop() {
				s, err := ss.Load(ctx, "long")
				if err != nil {
					b.Fatal(err)
				}
				if want := 1 + 5*1000; !compacted && len(s.Messages) != want {
					b.Fatalf("loaded %d messages, want %d", len(s.Messages), want)
				}
			}
		})
	}
}

// benchTurn returns the records of one turn: a model response of about
// 1 KB asking for four calls, and their completions of 2, 4, 6 and 8 KB.
func benchTurn(turn int) [][]byte {
	calls := make([]toolloop.ToolCall, 4)
	for i := range calls {
		calls[i] = toolloop.ToolCall{ID: fmt.Sprintf("call_%d_%d", turn, i), Name: "read_file",
			Arguments: fmt.Appendf(nil, `{"path":"src/pkg%d/file%d.go"}`, turn, i)}
	}
	resp := toolloop.Event{Type: toolloop.EventModelResponse, RunID: "run_1", Turn: turn, Response: &toolloop.Response{
		Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent(strings.Repeat("Let me read those files. ", 32))},
			ToolCalls: calls}, Usage: toolloop.Usage{InputTokens: 1000, OutputTokens: 100}, Model: "bench"}}
	out := make([][]byte, 0, 5)
	d, _ := json.Marshal(resp)
	out = append(out, d)
	for i, c := range calls {
		res := &toolloop.ToolResult{CallID: c.ID, Name: c.Name, Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.TextContent(strings.Repeat("package main // line of code\n", (i+1)*2048/29))}}
		d, _ := json.Marshal(toolloop.Event{Type: toolloop.EventComplete, RunID: "run_1", Turn: turn, CallID: c.ID, Tool: c.Name, Result: res})
		out = append(out, d)
	}
	return out
}
