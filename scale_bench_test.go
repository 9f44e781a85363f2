package toolloop_test

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
)

// BenchmarkScale runs many runs at once in one process, as a server
// would: each on a scripted model that answers after 100 ms, two turns
// with one call each and then text, so that the ideal wall time is
// 0.30 s whatever the number of runs. It reports the wall time, the heap
// and the goroutines at their peak per in-flight run, and the loop's own
// time per turn (the wall time of a turn less the model's 100 ms) at p50
// and p99.
//
//	go test -run '^$' -bench BenchmarkScale -benchtime 1x .
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				scaleOnce(b, n)
			}
		})
	}
}

const scaleLatency = 100 * time.Millisecond

func scaleOnce(b *testing.B, n int) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("noop", "Does nothing.", func(context.Context, struct {
		A string `json:"a"`
		B int    `json:"b"`
	}) (any, error) {
		return "ok", nil
	}))
	var overhead []time.Duration
	var omu sync.Mutex
	model := toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		t := time.NewTimer(scaleLatency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		turn := (len(req.Messages) + 1) / 2
		if turn <= 2 {
			return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: fmt.Sprint("c", turn), Name: "noop", Arguments: []byte(`{"a":"x","b":1}`)}}}}, nil
		}
		return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("done")}}}, nil
	})
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peakHeap atomic.Uint64
	var peakG atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap.Load() {
				peakHeap.Store(ms.HeapInuse)
			}
			if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
				peakG.Store(g)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	msgs := []toolloop.Message{toolloop.UserMessage("go")}
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			t0 := time.Now()
			res, err := loop.Run(context.Background(), msgs)
			if err != nil || res.FinalText != "done" {
				b.Errorf("run: %v", err)
				return
			}
			per := (time.Since(t0) - 3*scaleLatency) / 3
			omu.Lock()
			overhead = append(overhead, per)
			omu.Unlock()
		})
	}
	wg.Wait()
	wall := time.Since(start)
	close(stop)
	sampler.Wait()
	sort.Slice(overhead, func(i, j int) bool { return overhead[i] < overhead[j] })
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(wall.Seconds()/(3*scaleLatency.Seconds()), "x-ideal")
	b.ReportMetric(float64(peakHeap.Load()-min(peakHeap.Load(), before.HeapInuse))/float64(n), "heap-B/run")
	b.ReportMetric(float64(peakHeap.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakG.Load())/float64(n), "goroutines/run")
	if len(overhead) > 0 {
		b.ReportMetric(float64(overhead[len(overhead)/2].Microseconds()), "turn-p50-µs")
		b.ReportMetric(float64(overhead[len(overhead)*99/100].Microseconds()), "turn-p99-µs")
	}
}
