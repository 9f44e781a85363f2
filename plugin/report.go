package plugin

import (
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// maxPendingPartial bounds the partial output a plugin holds for one call
// that the host has not taken yet. Output beyond it is dropped, and the
// text sent next says how much.
const maxPendingPartial = 64 << 10

// hostReporter forwards a call's reports to the host, from a goroutine of
// its own, so that a tool never waits for the host, and what waits for
// the host is bounded. While a report is on its way, the next ones are
// coalesced: partial output is appended into one text of at most
// maxPendingPartial bytes, beyond which it is dropped and a marker in the
// text says how many bytes were; progress keeps only the latest report,
// which supersedes the others. Reports are sent in the order they were
// made, progress before partial output within a batch; finish sends what
// is left before the call's result goes.
type hostReporter struct {
	ss    *session
	token uint64

	mu       sync.Mutex
	progress *toolloop.Progress // the latest, not sent yet
	partial  []byte             // not sent yet
	dropped  int                // bytes dropped after partial
	sending  bool               // the sender goroutine runs
	finished bool
	wg       sync.WaitGroup
}

// ReportProgress implements [toolloop.Reporter].
func (r *hostReporter) ReportProgress(_ *toolloop.Call, p toolloop.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	r.progress = &p
	r.kick()
}

// ReportPartial implements [toolloop.Reporter].
func (r *hostReporter) ReportPartial(_ *toolloop.Call, text string) {
	if text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	if r.dropped == 0 {
		keep := text
		if room := maxPendingPartial - len(r.partial); len(keep) > room {
			keep = keep[:runeFloor(keep, room)]
		}
		r.partial = append(r.partial, keep...)
		text = text[len(keep):]
	}
	// Once something is dropped, everything is until the pending text is
	// sent, so that what arrives has one gap, which the marker fills.
	r.dropped += len(text)
	r.kick()
}

// kick starts the sender if it does not run. r.mu is held.
func (r *hostReporter) kick() {
	if !r.sending {
		r.sending = true
		r.wg.Add(1)
		go r.send()
	}
}

// send sends what is pending until nothing is.
func (r *hostReporter) send() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		p, text, dropped := r.progress, r.partial, r.dropped
		r.progress, r.partial, r.dropped = nil, nil, 0
		if p == nil && len(text) == 0 && dropped == 0 {
			r.sending = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		if p != nil {
			r.call(wire.Report{Token: r.token, Progress: p})
		}
		if len(text) > 0 || dropped > 0 {
			s := string(text)
			if dropped > 0 {
				s += droppedMarker(dropped)
			}
			r.call(wire.Report{Token: r.token, Partial: s})
		}
	}
}

// finish sends what is pending and stops the reporter: reports made
// after it are dropped, as the call is over.
func (r *hostReporter) finish() {
	r.mu.Lock()
	r.finished = true
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *hostReporter) call(rep wire.Report) {
	r.ss.mu.Lock()
	host := r.ss.host
	r.ss.mu.Unlock()
	if host != nil {
		_ = host.Call(wire.MethodReport, rep, &wire.Empty{}) // a lost host is noticed elsewhere
	}
}

// droppedMarker says how much partial output was dropped at its place.
func droppedMarker(n int) string {
	return "\n[... " + strconv.Itoa(n) + " bytes of partial output dropped: the host was taking it more slowly than the tool made it ...]\n"
}

// runeFloor returns the largest i <= n that starts a rune of s.
func runeFloor(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return max(n, 0)
}
