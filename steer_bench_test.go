package toolloop_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/toolloop/toolloop"
)

// streamSteps is steps (longrun_bench_test.go) streamed: each turn
// streams a line of text before its call or its answer, as a model
// thinking aloud does, so that the loop keeps what a turn streamed (the
// text an interrupt now would keep).
type streamSteps struct{ steps }

func (s *streamSteps) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		r, _ := s.Generate(ctx, req)
		const text = "Reading the file the task names. "
		r.Message.Content = []toolloop.Content{toolloop.TextContent(text)}
		if !yield(toolloop.Chunk{Text: text}, nil) {
			return
		}
		yield(toolloop.Chunk{Response: r}, nil)
	}
}

// BenchmarkSteerTurnCost is the loop's cost per turn (BenchmarkTurnCost's
// runs of one no-op call per turn) without steering, with an inbox
// attached (WithInbox) that nothing is ever sent to (the safe point before
// each model request then takes the inbox's lock and finds nothing), and
// through RunStream, which always attaches one: with a model that does not
// stream and one that streams a line per turn. The none and runstream
// rows compare with the same benchmark before steering; idle-inbox with
// none.
func BenchmarkSteerTurnCost(b *testing.B) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("read", "reads", func(_ context.Context, in pathCount) (any, error) { return in.Path, nil }))
	for _, streamed := range []bool{false, true} {
		for _, steer := range steerBenchModes {
			for _, n := range []int{10, 100} {
				model := "generate"
				if streamed {
					model = "stream"
				}
				b.Run(fmt.Sprintf("%s/%s/turns=%d", model, steer.name, n), func(b *testing.B) {
					ctx := context.Background()
					in := []toolloop.Message{toolloop.UserMessage("go")}
					b.ReportAllocs()
					for b.Loop() {
						var m toolloop.Model = &steps{n: n}
						if streamed {
							m = &streamSteps{steps{n: n}}
						}
						l := &toolloop.AgentLoop{Model: m, Tools: &reg, Budget: toolloop.Budget{MaxTurns: n + 1}}
						if err := steer.run(ctx, l, in); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(n+1)), "ns/turn")
				})
			}
		}
	}
}

// steerBenchModes are the steering set-ups BenchmarkSteerTurnCost runs:
// Run with no inbox; Run with an idle inbox; and RunStream, whose run
// always has an inbox (the context's or the stream's own), with a reader
// that does nothing.
var steerBenchModes = []struct {
	name string
	run  func(ctx context.Context, l *toolloop.AgentLoop, in []toolloop.Message) error
}{
	{"none", func(ctx context.Context, l *toolloop.AgentLoop, in []toolloop.Message) error {
		_, err := l.Run(ctx, in)
		return err
	}},
	{"idle-inbox", func(ctx context.Context, l *toolloop.AgentLoop, in []toolloop.Message) error {
		_, err := l.Run(toolloop.WithInbox(ctx, &toolloop.Inbox{}), in)
		return err
	}},
	{"runstream", func(ctx context.Context, l *toolloop.AgentLoop, in []toolloop.Message) error {
		s := l.RunStream(ctx, in)
		for range s.Events() {
		}
		_, err := s.Result()
		return err
	}},
}
