package codemode

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// watchTick is how often the watchdog looks at the program.
const watchTick = 5 * time.Millisecond

// minGCInterval is the least time between two collections the watchdog
// forces.
const minGCInterval = 50 * time.Millisecond

// heapMetric is the bytes of heap objects, live or not yet swept.
const heapMetric = "/memory/classes/heap/objects:bytes"

// heapBytes reads heapMetric.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// watch interrupts the program when the call's context ends, when it
// has used its compute time, or when the heap has grown by more than its
// memory since it started, until quit is closed.
func (r *run) watch(ctx context.Context, quit <-chan struct{}) {
	lim := r.p.limits
	base := heapBytes()
	var lastGC time.Time
	t := time.NewTicker(watchTick)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-ctx.Done():
			r.interrupt(&limitError{limit: LimitWallClock})
			return
		case <-t.C:
		}
		if used := r.busy.used(); used > lim.ComputeTime {
			r.interrupt(&limitError{limit: LimitComputeTime, value: lim.ComputeTime.String()})
			return
		}
		h := heapBytes()
		base = min(base, h) // growth from the lowest point seen
		if h-base <= lim.Memory {
			continue
		}
		// Over: garbage counts until it is swept, so collect before
		// judging, at most every minGCInterval.
		if time.Since(lastGC) < minGCInterval {
			continue
		}
		runtime.GC()
		lastGC = time.Now()
		if heapBytes()-base > lim.Memory {
			r.interrupt(&limitError{limit: LimitMemory, value: formatBytes(lim.Memory)})
			return
		}
	}
}
