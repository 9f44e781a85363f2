package toolloop

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// reports rate-limits what one running call reports: at most one progress
// and one partial-output event per interval. Reports in between are
// coalesced into the next event: partial output is joined (up to a byte
// cap, with a marker counting what was dropped), and only the latest
// progress is kept. Event.Coalesced says how many reports an event stands
// for. What is still pending when the call finishes is sent before its
// completion event.
type reports struct {
	mu       sync.Mutex
	interval time.Duration
	maxBytes int

	lastPartial, lastProgress time.Time
	partial                   strings.Builder
	partialN, dropped         int // reports joined into partial; bytes dropped
	progress                  *Progress
	progressN                 int
	timer                     *time.Timer
	closed                    bool
}

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
	if now := time.Now(); now.Sub(r.lastProgress) >= r.interval {
		cr.flushProgressLocked(r, now)
		return
	}
	cr.armLocked(r)
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
	if now := time.Now(); now.Sub(r.lastPartial) >= r.interval {
		cr.flushPartialLocked(r, now)
		return
	}
	cr.armLocked(r)
}

// armLocked makes sure what is pending is sent when the interval ends,
// even if the tool reports nothing more.
func (cr *callRun) armLocked(r *reports) {
	if r.timer != nil {
		return
	}
	r.timer = time.AfterFunc(r.interval, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.timer = nil
		if r.closed || cr.state.Load() != callExecuting {
			return
		}
		now := time.Now()
		cr.flushPartialLocked(r, now)
		cr.flushProgressLocked(r, now)
	})
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
	r.partialN, r.dropped, r.lastPartial = 0, 0, now
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
	r.progress, r.progressN, r.lastProgress = nil, 0, now
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
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if send {
		now := time.Now()
		cr.flushPartialLocked(r, now)
		cr.flushProgressLocked(r, now)
	}
}
