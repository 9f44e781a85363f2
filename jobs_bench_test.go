package toolloop_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// jobSteps is steps (longrun_bench_test.go) with jobs: its first turn
// starts the given number of background jobs, each a call of "serve",
// a tool that runs until its context ends; then come n turns of one
// no-op call each and the answer, while the jobs run. The run's end
// cancels them.
type jobSteps struct {
	steps
	jobs    int
	started bool
}

func (s *jobSteps) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	if s.jobs == 0 || s.started {
		return s.steps.Generate(ctx, req)
	}
	s.started = true // the first turn is the jobs' own, not one of the n
	calls := make([]toolloop.ToolCall, s.jobs)
	for i := range calls {
		calls[i] = looptest.Call("j"+strconv.Itoa(i), "serve", `{"background":true}`)
	}
	r := looptest.Calls(calls...)
	r.Model = "gpt-4.1"
	return r, nil
}

// BenchmarkJobTurnCost is what background jobs add to each turn:
// BenchmarkTurnCost's runs of 10 and 100 turns of one no-op call, with
// 0, 1 and 8 jobs running all along (tools that wait on their context),
// and "plain", the same run with no tool that may run in the background
// (so jobs=0 against plain is the cost of offering the background
// argument). A run with jobs also pays, once, for their start (one more
// turn, counted in ns/turn) and, at its end, for their cancellation; the
// difference between 10 and 100 turns is the cost per turn.
func BenchmarkJobTurnCost(b *testing.B) {
	var plain, reg toolloop.ToolRegistry
	read := toolloop.NewTool("read", "reads", func(_ context.Context, in pathCount) (any, error) { return in.Path, nil })
	plain.MustRegister(read)
	serve := toolloop.NewTool("serve", "serves until stopped", func(ctx context.Context, _ struct{}) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	serve.Background = true
	reg.MustRegister(read, serve)
	for _, jobs := range []int{-1, 0, 1, 8} {
		name, tools := "jobs="+strconv.Itoa(jobs), &reg
		if jobs < 0 {
			name, tools, jobs = "plain", &plain, 0
		}
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/turns=%d", name, n), func(b *testing.B) {
				in := []toolloop.Message{toolloop.UserMessage("go")}
				b.ReportAllocs()
				for b.Loop() {
					m := &jobSteps{steps: steps{n: n}, jobs: jobs}
					l := &toolloop.AgentLoop{Model: m, Tools: tools, Budget: toolloop.Budget{MaxTurns: n + 2}}
					res, err := l.Run(context.Background(), in)
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Jobs) != jobs {
						b.Fatalf("%d jobs ran, want %d", len(res.Jobs), jobs)
					}
				}
				turns := n + 1 // and the answer
				if jobs > 0 {
					turns++ // and the turn that starts the jobs
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
			})
		}
	}
}
