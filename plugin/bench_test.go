package plugin

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
)

// BenchmarkBigResult runs a real plugin process whose tool returns 1 GiB
// of text, called as the loop calls it (with the loop's default output
// budget), and reports the host's peak heap above what it held before.
// A plugin built with Serve cuts the text to the budget; an old one (or
// a hostile one) sends it whole, and the host skips it unread: the call
// fails with execution_failed.
//
//	go test -run '^$' -bench BigResult -benchtime 3x ./plugin/
func BenchmarkBigResult(b *testing.B) {
	tests := []struct {
		name    string
		env     []string
		wantErr bool
	}{
		{name: "plugin=current"},
		{name: "plugin=old", env: []string{"SAMPLE_OLD=1"}, wantErr: true},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			src := newSample(b, Config{Env: tt.env})
			tools, err := src.Tools(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			big := find(b, tools, "big")
			args := mustJSON(b, map[string]int{"bytes": 1 << 30})
			b.ReportAllocs()
			peak := startPeakHeap()
			for b.Loop() {
				res, err := big.Run(context.Background(), &toolloop.Call{
					ID: "big", Name: "big", Arguments: json.RawMessage(args),
					MaxOutputBytes: (1 << 20),
				})
				if res == nil {
					res = toolloop.ErrorResult(err)
				}
				if res.IsError() != tt.wantErr {
					b.Fatalf("%s (peak heap so far: %.0f MiB)", res.Text(), peak())
				}
			}
			b.StopTimer()
			b.ReportMetric(peak(), "peak-heap-MiB")
		})
	}
}

// startPeakHeap samples the heap (live and not yet freed objects) every
// millisecond from a goroutine until the returned function is called,
// which stops it and returns the highest sample above the heap at the
// start, in MiB.
func startPeakHeap() (stop func() float64) {
	const name = "/memory/classes/heap/objects:bytes"
	sample := []metrics.Sample{{Name: name}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var (
		mu   sync.Mutex
		peak = base
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		s := []metrics.Sample{{Name: name}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
				metrics.Read(s)
				mu.Lock()
				peak = max(peak, s[0].Value.Uint64())
				mu.Unlock()
			}
		}
	}()
	var once sync.Once
	return func() float64 {
		once.Do(func() { close(done) })
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return float64(max(peak, read())-base) / (1 << 20)
	}
}
