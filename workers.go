package toolloop

import (
	"sync"
	"time"
)

// Calls run on pooled goroutines. A goroutine that has run a call waits a
// short while (workerLinger, at most twice over) for the next one, from any
// run or RunCall in the process, and then exits. So calls start on
// goroutines whose stacks have already grown to what decoding and tools
// need, a driver calling RunCall back to back starts no goroutine per call,
// and a program whose loop is idle has no goroutine of ours left after
// 2×workerLinger: well inside the time goleak's default retries wait.
//
// A goroutine stuck in a tool that ignores its context is not idle: it
// lives until the tool returns, as before.

// bubbleEpoch is a year after the clock of a testing/synctest bubble
// starts: 2000-01-01 UTC.
var bubbleEpoch = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// inBubble reports whether now, the time a call starts, comes from the
// fake clock of a testing/synctest bubble (or from a machine whose clock
// was never set). A pooled worker may have been started outside the
// bubble, and a goroutine outside a bubble may not use the bubble's
// channels, nor one inside it outlive the bubble; so such calls get a
// goroutine of their own, as they did before the pool.
func inBubble(now time.Time) bool { return now.Before(bubbleEpoch) }

// workerLinger is how long an idle worker waits for another call.
const workerLinger = 50 * time.Millisecond

// workers is the process's pool.
var workers workerPool

// workerPool keeps idle workers and retires those left idle. One timer
// for the whole pool does the retiring (see reap): a worker waits for its
// next call on its channel alone, since a timer in that wait would be
// added to and taken off the runtime's timer heap at every call.
type workerPool struct {
	mu    sync.Mutex
	idle  []*worker // last in, first out: the warmest first
	total int       // workers alive
	// reaper runs reap every workerLinger while workers are alive.
	reaper  *time.Timer
	reaping bool
}

type worker struct {
	job chan job // buffered: handing over never blocks
	// gen counts the calls the worker ran; seen is gen at the last reap.
	// Both are guarded by the pool's mutex.
	gen, seen uint64
}

// job is a worker's work: a call (see callRun.run).
type job interface{ run() }

// run runs f on an idle worker, or on a new one.
func (p *workerPool) run(f job) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.job <- f
		return
	}
	p.total++
	if !p.reaping {
		p.reaping = true
		if p.reaper == nil {
			p.reaper = time.AfterFunc(workerLinger, p.reap)
		} else {
			p.reaper.Reset(workerLinger)
		}
	}
	p.mu.Unlock()
	w := &worker{job: make(chan job, 1)}
	go w.loop(p, f)
}

// loop runs f, then every call handed to the worker, until the pool
// retires it (a nil job).
func (w *worker) loop(p *workerPool, f job) {
	for f != nil {
		f.run()
		p.mu.Lock()
		w.gen++
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		f = <-w.job
	}
}

// reap retires the workers that ran no call since the last reap and are
// idle: each has waited at least workerLinger, and less than twice that.
// An idle worker's channel is empty (a call goes to a worker only once it
// is off the idle list), so the nil that tells it to exit never blocks.
func (p *workerPool) reap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	keep := p.idle[:0]
	for _, w := range p.idle {
		if w.gen == w.seen {
			w.job <- nil
			p.total--
			continue
		}
		w.seen = w.gen
		keep = append(keep, w)
	}
	clear(p.idle[len(keep):])
	p.idle = keep
	if p.total > 0 {
		p.reaper.Reset(workerLinger)
	} else {
		p.reaping = false
	}
}

// busy reports how many workers are running a call (or about to). Tests
// use it to wait for every call's goroutine to be done.
func (p *workerPool) busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total - len(p.idle)
}
