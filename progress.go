package toolloop

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// reports rate-limits what one running call reports: no two progress
// events, and no two partial-output events, closer together than the
// interval. A report after a quiet interval is sent at once; reports that
// come sooner are held and joined into the next event, which a timer
// sends when the interval since the last event of its kind has passed:
// partial output is joined (up to a byte cap, with a marker counting what
// was dropped), and only the latest progress is kept. Event.Coalesced says
// how many reports an event stands for. What is still held when the call
// finishes is sent before its completion event, at once: the one event of
// each kind that may come sooner.
type reports struct {
	mu       sync.Mutex
	interval time.Duration
	maxBytes int

	lanes             [2]lane // by laneProgress, lanePartial
	partial           strings.Builder
	partialN, dropped int // reports joined into partial; bytes dropped
	progress          *Progress
	progressN         int
	closed            bool
}

// A lane paces the events of one kind.
type lane struct {
	last  time.Time   // when the last event of the kind was sent
	timer *time.Timer // set while reports wait for the interval to end
}

// The lanes of reports.
const (
	laneProgress = iota
	lanePartial
)

// closedReports stands for the reports of a call that ended before its
// tool reported anything.
var closedReports = &reports{closed: true}

// reports returns the call's rate limiter, made on first use.
func (cr *callRun) reports() *reports {
	if r := cr.rep.Load(); r != nil {
		return r
	}
	r := &reports{}
	r.interval, r.maxBytes = cr.rn.lim.ReportInterval, cr.rn.lim.MaxPartialBytes
	if cr.rep.CompareAndSwap(nil, r) {
		return r
	}
	return cr.rep.Load()
}

// lockReports returns the call's rate limiter, locked, or nil when the
// tool is not running (not started, or its call already answered).
func (cr *callRun) lockReports() *reports {
	if cr.state.Load() != callExecuting {
		return nil
	}
	r := cr.reports()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	return r
}

// ReportProgress implements [Reporter] for the loop's calls.
func (cr *callRun) ReportProgress(_ *Call, p Progress) {
	r := cr.lockReports()
	if r == nil {
		return
	}
	defer r.mu.Unlock()
	if r.interval <= 0 {
		cr.emit(&Event{Type: EventProgress, Progress: &p})
		return
	}
	r.progressN++
	r.progress = &p
	cr.paceLocked(r, laneProgress)
}

// ReportPartial implements [Reporter] for the loop's calls.
func (cr *callRun) ReportPartial(_ *Call, text string) {
	if text == "" {
		return
	}
	r := cr.lockReports()
	if r == nil {
		return
	}
	defer r.mu.Unlock()
	if r.interval <= 0 {
		cr.emit(&Event{Type: EventPartialResult, Text: text})
		return
	}
	r.partialN++
	if room := r.maxBytes - r.partial.Len(); len(text) <= room {
		r.partial.WriteString(text)
	} else {
		keep := runeFloor(text, max(room, 0))
		r.partial.WriteString(text[:keep])
		r.dropped += len(text) - keep
	}
	cr.paceLocked(r, lanePartial)
}

// paceLocked sends what lane k holds now if the interval since its last
// event has passed, and otherwise makes sure a timer sends it when the
// interval ends, even if the tool reports nothing more. A timer that is
// already waiting will send it.
func (cr *callRun) paceLocked(r *reports, k int) {
	ln := &r.lanes[k]
	if ln.timer != nil {
		return
	}
	now := time.Now()
	if wait := r.interval - now.Sub(ln.last); wait > 0 {
		ln.timer = time.AfterFunc(wait, func() { cr.timerFired(r, k) })
		return
	}
	cr.flushLocked(r, k, now)
}

// timerFired sends what lane k holds, once its interval has ended.
func (cr *callRun) timerFired(r *reports, k int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lanes[k].timer = nil
	if r.closed || cr.state.Load() != callExecuting {
		return
	}
	cr.paceLocked(r, k)
}

func (cr *callRun) flushLocked(r *reports, k int, now time.Time) {
	if k == lanePartial {
		cr.flushPartialLocked(r, now)
	} else {
		cr.flushProgressLocked(r, now)
	}
}

func (cr *callRun) flushPartialLocked(r *reports, now time.Time) {
	if r.partialN == 0 {
		return
	}
	text := r.partial.String()
	if r.dropped > 0 {
		text += "\n[... " + strconv.Itoa(r.dropped) + " bytes of partial output dropped: the tool reported faster than " +
			strconv.Itoa(r.maxBytes) + " bytes per " + r.interval.String() + " ...]\n"
	}
	e := &Event{Type: EventPartialResult, Text: text}
	if r.partialN > 1 {
		e.Coalesced = r.partialN
	}
	r.partial.Reset()
	r.partialN, r.dropped, r.lanes[lanePartial].last = 0, 0, now
	cr.emit(e)
}

func (cr *callRun) flushProgressLocked(r *reports, now time.Time) {
	if r.progress == nil {
		return
	}
	e := &Event{Type: EventProgress, Progress: r.progress}
	if r.progressN > 1 {
		e.Coalesced = r.progressN
	}
	r.progress, r.progressN, r.lanes[laneProgress].last = nil, 0, now
	cr.emit(e)
}

// closeReports sends what is pending (if send) and stops the reports: the
// call is over. After it, reports are ignored and no timer is left.
func (cr *callRun) closeReports(send bool) {
	r := cr.rep.Load()
	if r == nil {
		if cr.rep.CompareAndSwap(nil, closedReports) {
			return // the tool reported nothing
		}
		r = cr.rep.Load()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	for k := range r.lanes {
		if t := r.lanes[k].timer; t != nil {
			t.Stop()
			r.lanes[k].timer = nil
		}
	}
	if send {
		now := time.Now()
		cr.flushPartialLocked(r, now)
		cr.flushProgressLocked(r, now)
	}
}
