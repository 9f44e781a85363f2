// Package memwatch measures the peak heap of a piece of code, for the
// benchmarks that check memory stays bounded whatever a tool returns.
package memwatch

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

const heapObjects = "/memory/classes/heap/objects:bytes"

// Peak runs f while sampling the bytes of live and not yet swept heap
// objects every interval, and returns the largest sample minus the heap
// measured just before f (after a collection). The sampler's goroutine
// ends before Peak returns.
func Peak(interval time.Duration, f func()) (peak uint64) {
	runtime.GC()
	base := heap()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var max uint64
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			if h := heap(); h > max {
				max = h
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	if h := heap(); h > max {
		max = h
	}
	if max < base {
		return 0
	}
	return max - base
}

func heap() uint64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
