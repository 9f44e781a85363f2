package eval_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
	"github.com/toolloop/toolloop/looptest"
)

// benchCases is the number of cases each iteration of BenchmarkRunner runs.
const benchCases = 100

// benchLoop is one trivial case's loop: a scripted model that calls echo
// once and answers.
func benchLoop(reg *toolloop.ToolRegistry) *toolloop.AgentLoop {
	return &toolloop.AgentLoop{Tools: reg, Model: looptest.Script(
		looptest.Calls(looptest.Call("call_1", "echo", `{"text":"hi"}`)),
		looptest.Text("echoed hi"),
	)}
}

// BenchmarkRunner measures the runner's own overhead per case against
// running the same cases one by one: benchCases trivial cases (one tool
// call and an answer on a scripted model, scored for the call and the
// text) through Runner.Run, beside a plain loop that calls AgentLoop.Run
// for each case and scores nothing. ns/case is the time per case; the
// difference between the sub-benchmarks is what the runner adds
// (building scorers, scoring, the report, scheduling; and with logs,
// writing each trial's event log).
//
//	go test ./eval -run '^$' -bench BenchmarkRunner -benchmem
func BenchmarkRunner(b *testing.B) {
	type echoIn struct {
		Text string `json:"text"`
	}
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("echo", "Echo the text.", func(_ context.Context, in echoIn) (any, error) { return in.Text, nil }))
	cases := make([]eval.Case, benchCases)
	for i := range cases {
		called, err := eval.NewExpectation("tool_called", map[string]any{"name": "echo"})
		if err != nil {
			b.Fatal(err)
		}
		text, err := eval.NewExpectation("text_contains", map[string]any{"text": "hi"})
		if err != nil {
			b.Fatal(err)
		}
		cases[i] = eval.Case{ID: fmt.Sprintf("case-%03d", i), Prompt: "echo hi", Expect: []eval.Expectation{called, text}}
	}
	perCase := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchCases), "ns/case")
	}

	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i := range cases {
				if _, err := benchLoop(&reg).Run(b.Context(), cases[i].Input()); err != nil {
					b.Fatal(err)
				}
			}
		}
		perCase(b)
	})
	for _, bc := range []struct {
		name        string
		concurrency int
		logs        bool
	}{
		{"runner/concurrency=1", 1, false},
		{"runner/concurrency=4", 4, false},
		{"runner/concurrency=1/logs", 1, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			r := &eval.Runner{
				Loop:        func(*eval.Case) (*toolloop.AgentLoop, error) { return benchLoop(&reg), nil },
				Concurrency: bc.concurrency,
			}
			if bc.logs {
				r.LogDir = b.TempDir()
			}
			for b.Loop() {
				rep, err := r.Run(b.Context(), cases)
				if err != nil {
					b.Fatal(err)
				}
				if rep.Summary.Passed != benchCases {
					b.Fatalf("%d of %d cases passed", rep.Summary.Passed, benchCases)
				}
			}
			perCase(b)
		})
	}
}
