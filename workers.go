package toolloop

import (
	"slices"
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

type workerPool struct {
	mu    sync.Mutex
	idle  []*worker // last in, first out: the warmest first
	total int       // workers alive
}

type worker struct {
	job chan job // buffered: handing over never blocks
	gen uint64   // calls run; only the worker's goroutine touches it
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
	p.mu.Unlock()
	w := &worker{job: make(chan job, 1)}
	go w.loop(p, f)
}

// loop runs f, then every call handed to the worker, until it has been
// idle for a whole linger period.
func (w *worker) loop(p *workerPool, f job) {
	var (
		t     *time.Timer
		armed uint64 // w.gen when t was last set
	)
	for f != nil {
		f.run()
		f = nil
		w.gen++
		p.mu.Lock()
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		if t == nil {
			t, armed = time.NewTimer(workerLinger), w.gen
		}
		f = w.next(p, t, &armed)
	}
	t.Stop()
}

// next waits for the worker's next call. It returns nil when the worker
// was idle for a whole linger period and has left the pool.
func (w *worker) next(p *workerPool, t *time.Timer, armed *uint64) job {
	for {
		select {
		case f := <-w.job:
			return f
		case <-t.C:
		}
		if w.gen != *armed {
			// It ran calls since the timer was set: not idle for a whole
			// period yet. The timer is not reset per call, which would
			// cost every call; an idle worker exits within two periods.
			*armed = w.gen
			t.Reset(workerLinger)
			continue
		}
		p.mu.Lock()
		if i := slices.Index(p.idle, w); i >= 0 {
			p.idle = slices.Delete(p.idle, i, i+1)
			p.total--
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		*armed = w.gen + 1 // the call on its way
		t.Reset(workerLinger)
		return <-w.job // taken from the idle list just now: its call is on the way
	}
}

// busy reports how many workers are running a call (or about to). Tests
// use it to wait for every call's goroutine to be done.
func (p *workerPool) busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total - len(p.idle)
}
