package taskbench

import (
	"context"
	"testing"
)

// BenchmarkTask runs every task through every provider with every
// strategy, and reports what the run sent and would cost; the time and
// allocations are the run's in this process (the loop, the request
// builder, the fake server), not a model's.
func BenchmarkTask(b *testing.B) {
	for _, task := range Tasks {
		for _, p := range Providers {
			for _, s := range Strategies {
				b.Run(task.Name+"/"+p.Name+"/"+s.Name, func(b *testing.B) {
					var r *Report
					for b.Loop() {
						var err error
						if r, err = Run(context.Background(), task, p, s, false); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(r.RequestBytes()), "request-bytes/op")
					b.ReportMetric(float64(estTokens(int(r.RequestBytes()))), "est-tokens/op")
					b.ReportMetric(float64(r.RoundTrips()), "round-trips/op")
					b.ReportMetric(float64(r.Edits()), "edits/op")
					b.ReportMetric(100*r.StableShare(false), "stable-prefix-%")
					b.ReportMetric(100*r.StableShare(true), "stable-unedited-%")
					b.ReportMetric(100*r.CacheHitShare(), "cache-hit-%")
					b.ReportMetric(r.Cost(), "cost-usd/op")
				})
			}
		}
	}
}
