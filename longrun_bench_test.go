package toolloop_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// steps is a model that asks for one call per turn for n turns, then
// answers, reporting a little usage each turn; it reads nothing, so a
// benchmark measures the loop.
type steps struct{ n, turn int }

func (s *steps) Generate(context.Context, *toolloop.Request) (*toolloop.Response, error) {
	s.turn++
	var r *toolloop.Response
	if s.turn > s.n {
		r = looptest.Text("done")
	} else {
		r = looptest.Calls(toolloop.ToolCall{ID: "c" + strconv.Itoa(s.turn), Name: "read", Arguments: []byte(`{"path":"a.go","count":1}`)})
	}
	r.Model = "gpt-4.1"
	r.Usage = toolloop.Usage{InputTokens: int64(100 + 60*s.turn), OutputTokens: 20}
	return r, nil
}

// BenchmarkTurnCost is the loop's own cost per turn in runs of 10, 100 and
// 1,000 turns of one no-op call each: plain, and with every long-run
// policy on but never firing (two context managers under their
// thresholds, every budget limit set and not reached, a StopWhen, a
// failure policy). The ns/turn metric should stay flat as runs grow.
func BenchmarkTurnCost(b *testing.B) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("read", "reads", func(_ context.Context, in pathCount) (any, error) { return in.Path, nil }))
	for _, policies := range []bool{false, true} {
		for _, n := range []int{10, 100, 1000} {
			name := fmt.Sprintf("plain/turns=%d", n)
			if policies {
				name = fmt.Sprintf("policies/turns=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				in := []toolloop.Message{toolloop.UserMessage("go")}
				b.ReportAllocs()
				for b.Loop() {
					l := &toolloop.AgentLoop{Model: &steps{n: n}, Tools: &reg, Budget: toolloop.Budget{MaxTurns: n + 1}}
					if policies {
						l.ContextManagers = []toolloop.ContextManager{
							&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1 << 40}},
							&toolloop.Compactor{When: toolloop.Threshold{Fraction: 0.9}},
						}
						l.Budget = toolloop.Budget{MaxTurns: n + 1, MaxInputTokens: 1 << 40, MaxOutputTokens: 1 << 40, MaxTotalTokens: 1 << 40,
							MaxCost: 1e9, MaxDuration: time.Hour, MaxToolCalls: 1 << 30,
							MaxConsecutiveFailures: 5,
							StopWhen:               func(st toolloop.RunStatus) bool { return st.Tokens > 1<<40 }}
					}
					if _, err := l.Run(context.Background(), in); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(n+1)), "ns/turn")
			})
		}
	}
}

// BenchmarkContextDecision is what deciding costs, on transcripts of 100
// and 1,000 turns: a Compactor under its threshold, and a
// ClearToolResults over its threshold with every old result already
// cleared (a scan that finds nothing to do).
func BenchmarkContextDecision(b *testing.B) {
	for _, n := range []int{100, 1000} {
		msgs := session(n, 1000)
		cleared, err := (&toolloop.ClearToolResults{}).ManageContext(context.Background(), input(msgs, 500))
		if err != nil || cleared == nil {
			b.Fatal(err)
		}
		stubbed, err := cleared.Apply(msgs)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("compactor-under/turns=%d", n), func(b *testing.B) {
			c := &toolloop.Compactor{}
			in := input(msgs, 100)
			b.ReportAllocs()
			for b.Loop() {
				if e, _ := c.ManageContext(context.Background(), in); e != nil {
					b.Fatal("compacted")
				}
			}
		})
		b.Run(fmt.Sprintf("clear-scan/turns=%d", n), func(b *testing.B) {
			c := &toolloop.ClearToolResults{}
			in := input(stubbed, 500) // half the window: over the threshold
			b.ReportAllocs()
			for b.Loop() {
				if e, _ := c.ManageContext(context.Background(), in); e != nil {
					b.Fatal("cleared again")
				}
			}
		})
		b.Run(fmt.Sprintf("estimate/turns=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if toolloop.EstimateTokens(msgs) == 0 {
					b.Fatal("zero")
				}
			}
		})
	}
}
