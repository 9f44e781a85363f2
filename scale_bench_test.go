package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
)

// BenchmarkScale runs many runs at once in one process, as a server
// would: one goroutine per run, each on a scripted model that answers
// after 100 ms, two turns with one call each and then text, so that the
// ideal wall time is 0.30 s whatever the number of runs. It reports:
//
//   - wall-s and x-ideal: the wall time, and its ratio to 0.30 s;
//
//   - cpu-µs/run: the process's CPU time (user and system) per run, which
//     a machine shared with other work disturbs less than the wall time
//     (unix only);
//
//   - peak-inflight: the most runs in flight at one sample (every 20 ms);
//     heap-B/inflight and goroutines/inflight are taken at that sample:
//     the heap in use above what it was before the runs, and the
//     goroutines, per run in flight (the run's own goroutine counts);
//
//   - peak-heap-MiB and peak-stack-MiB: the most heap in use, and the most
//     goroutine stack memory, at any sample;
//
//   - turn-p50-µs and turn-p99-µs: the loop's time per turn, that is a
//     run's wall time less the model's three 100 ms, over three, across
//     runs; it includes the time a run waits for a core.
//
//     go test -run '^$' -bench BenchmarkScale -benchtime 1x .
//
// BenchmarkScaleBaseline does the same with a hand-rolled loop in place
// of AgentLoop: its figures are the benchmark's own cost (goroutines,
// timers, the model's responses, decoding the arguments), which no loop
// can go below.
func BenchmarkScale(b *testing.B) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("noop", "Does nothing.", scaleTool))
	loop := &toolloop.AgentLoop{Model: toolloop.ModelFunc(scaleModel), Tools: &reg}
	msgs := []toolloop.Message{toolloop.UserMessage("go")}
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				scaleOnce(b, n, func() error {
					res, err := loop.Run(context.Background(), msgs)
					if err == nil && res.FinalText != "done" {
						err = fmt.Errorf("final text %q", res.FinalText)
					}
					return err
				})
			}
		})
	}
}

// BenchmarkScaleBaseline is BenchmarkScale with a hand-rolled loop: the
// model's turns, each call's arguments decoded and the tool's function
// called directly, the transcript appended to. No validation, guard,
// hooks, timeout, hang protection or result building.
func BenchmarkScaleBaseline(b *testing.B) {
	msgs := []toolloop.Message{toolloop.UserMessage("go")}
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				scaleOnce(b, n, func() error { return scaleBaseline(context.Background(), msgs) })
			}
		})
	}
}

// BenchmarkScaleRunAlone is one run of BenchmarkScale's load at a time,
// on a model that answers at once: the loop's own CPU time and
// allocations per run, with no other run to share the cores, the caches
// or the garbage collector with.
func BenchmarkScaleRunAlone(b *testing.B) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("noop", "Does nothing.", scaleTool))
	loop := &toolloop.AgentLoop{Model: toolloop.ModelFunc(scaleAnswer), Tools: &reg}
	msgs := []toolloop.Message{toolloop.UserMessage("go")}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := loop.Run(context.Background(), msgs); err != nil || res.FinalText != "done" {
			b.Fatal(err)
		}
	}
}

const scaleLatency = 100 * time.Millisecond

type scaleIn struct {
	A string `json:"a"`
	B int    `json:"b"`
}

func scaleTool(context.Context, scaleIn) (any, error) { return "ok", nil }

// scaleIDs are the call IDs of turns 1 and 2, made once: a provider's
// decoder makes each ID's string as it reads the response, which the
// response's own allocation stands for here.
var scaleIDs = [...]string{"", "c1", "c2"}

// scaleModel answers after scaleLatency, as a provider would over the
// network: with a call on turns 1 and 2, with text on turn 3.
func scaleModel(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	t := time.NewTimer(scaleLatency)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return nil, ctx.Err()
	}
	return scaleAnswer(ctx, req)
}

// scaleAnswer is scaleModel's answer, given at once.
func scaleAnswer(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	turn := (len(req.Messages) + 1) / 2
	if turn <= 2 {
		return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
			{ID: scaleIDs[turn], Name: "noop", Arguments: []byte(`{"a":"x","b":1}`)}}}}, nil
	}
	return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("done")}}}, nil
}

// scaleBaseline is a run without the loop.
func scaleBaseline(ctx context.Context, in []toolloop.Message) error {
	msgs := append(make([]toolloop.Message, 0, len(in)+4), in...)
	for {
		resp, err := scaleModel(ctx, &toolloop.Request{Messages: msgs})
		if err != nil {
			return err
		}
		msgs = append(msgs, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			if resp.Message.Text() != "done" {
				return errors.New("no final text")
			}
			return nil
		}
		for _, tc := range resp.Message.ToolCalls {
			var args scaleIn
			if err := json.Unmarshal(tc.Arguments, &args); err != nil {
				return err
			}
			out, err := scaleTool(ctx, args)
			if err != nil {
				return err
			}
			text, _ := out.(string)
			msgs = append(msgs, toolloop.ToolMessage(&toolloop.ToolResult{CallID: tc.ID, Name: tc.Name,
				Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent(text)}}))
		}
	}
}

// scaleSample is what the sampler saw at one moment.
type scaleSample struct {
	inflight int64
	heap     uint64
	g        int
}

// scaleOnce starts n runs of run at once, each on its own goroutine, and
// reports what they cost.
func scaleOnce(b *testing.B, n int, run func() error) {
	overhead := make([]time.Duration, n)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	baseG := runtime.NumGoroutine() + 1 // and the sampler
	var inflight atomic.Int64
	var atPeak scaleSample
	var peakHeap, peakStack uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			s := scaleSample{inflight: inflight.Load(), heap: ms.HeapInuse, g: runtime.NumGoroutine()}
			if s.inflight > atPeak.inflight {
				atPeak = s
			}
			peakHeap, peakStack = max(peakHeap, ms.HeapInuse), max(peakStack, ms.StackInuse)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	cpu0, hasCPU := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			inflight.Add(1)
			defer inflight.Add(-1)
			t0 := time.Now()
			if err := run(); err != nil {
				b.Errorf("run: %v", err)
				return
			}
			overhead[i] = (time.Since(t0) - 3*scaleLatency) / 3
		})
	}
	wg.Wait()
	wall := time.Since(start)
	cpu1, _ := processCPU()
	close(stop)
	sampler.Wait()
	slices.Sort(overhead)
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(wall.Seconds()/(3*scaleLatency.Seconds()), "x-ideal")
	if hasCPU {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(n), "cpu-µs/run")
	}
	if atPeak.inflight > 0 {
		b.ReportMetric(float64(atPeak.inflight), "peak-inflight")
		b.ReportMetric(float64(atPeak.heap-min(atPeak.heap, before.HeapInuse))/float64(atPeak.inflight), "heap-B/inflight")
		b.ReportMetric(float64(atPeak.g-baseG)/float64(atPeak.inflight), "goroutines/inflight")
	}
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakStack)/(1<<20), "peak-stack-MiB")
	b.ReportMetric(float64(overhead[n/2].Microseconds()), "turn-p50-µs")
	b.ReportMetric(float64(overhead[n*99/100].Microseconds()), "turn-p99-µs")
}
