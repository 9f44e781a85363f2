package builtin

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolloop/toolloop"
)

// headTail keeps the first and the last bytes written to it, and counts
// the rest, so a command may print any amount in bounded memory.
type headTail struct {
	headMax, tailMax int
	head             []byte
	ring             []byte // the tail, a ring buffer of tailMax bytes
	rpos             int    // where the next tail byte goes
	rfull            bool
	total, lines     int64
}

// newHeadTail keeps keep bytes in all: 40% from the start and 60% from
// the end, where errors usually are.
func newHeadTail(keep int) *headTail {
	keep = max(keep, 64)
	h := keep * 2 / 5
	return &headTail{headMax: h, tailMax: keep - h}
}

// Write implements io.Writer; it never fails.
func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	h.lines += int64(bytes.Count(p, []byte{'\n'}))
	if len(h.head) < h.headMax {
		k := min(h.headMax-len(h.head), len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if h.ring == nil {
		h.ring = make([]byte, h.tailMax)
	}
	if len(p) >= h.tailMax {
		copy(h.ring, p[len(p)-h.tailMax:])
		h.rpos, h.rfull = 0, true
		return n, nil
	}
	for len(p) > 0 {
		k := copy(h.ring[h.rpos:], p)
		p = p[k:]
		h.rpos += k
		if h.rpos == h.tailMax {
			h.rpos, h.rfull = 0, true
		}
	}
	return n, nil
}

func (h *headTail) tail() []byte {
	if !h.rfull {
		return h.ring[:h.rpos]
	}
	t := make([]byte, 0, h.tailMax)
	t = append(t, h.ring[h.rpos:]...)
	return append(t, h.ring[:h.rpos]...)
}

// truncated reports whether bytes were dropped from the middle.
func (h *headTail) truncated() bool {
	return h.total > int64(len(h.head)+len(h.tail()))
}

// String returns what was kept as valid UTF-8: everything, or the head and
// the tail around a note saying how much was left out and how to see it.
func (h *headTail) String() string {
	head, tail := h.head, h.tail()
	if !h.truncated() {
		return strings.ToValidUTF8(string(head)+string(tail), "\uFFFD")
	}
	// Cut at line ends when one is near, else at a character boundary.
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)*3/4 {
		head = head[:i+1]
	} else {
		for len(head) > 0 && !utf8.FullRune(head[lastRuneStart(head):]) {
			head = head[:lastRuneStart(head)]
		}
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/4 {
		tail = tail[i+1:]
	} else {
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
	}
	omitted := h.total - int64(len(head)+len(tail))
	lines := h.lines - int64(bytes.Count(head, []byte{'\n'})+bytes.Count(tail, []byte{'\n'}))
	var b strings.Builder
	b.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[... %d bytes (%s) left out of the middle; the command printed %d bytes in %s. To see all of it, send the output to a file in the workspace (command > out.log 2>&1) and read or search that file ...]\n",
		omitted, plural(int(lines), "line", "lines"), h.total, plural(int(h.lines), "line", "lines"))
	b.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return b.String()
}

func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return max(i, 0)
}

// Partial output is reported at most every partialInterval, at most
// partialMax bytes at a time, so that a command printing gigabytes does
// not flood the event stream; the final result still has the head and the
// tail. A background job's output is the exception: it is reported as it
// is read, all of it, because the job keeps it (in bounded memory) for
// job_output, and paces its own events.
const (
	partialInterval = 100 * time.Millisecond
	partialMax      = 8 << 10
)

// streamer reports a command's output as partial results while it runs.
type streamer struct {
	call *toolloop.Call
	// direct: a background job's streamer, which reports each read at
	// once and drops nothing; it has no goroutine.
	direct  bool
	mu      sync.Mutex
	pending []byte
	dropped int64
	stop    chan struct{}
	done    chan struct{}
}

// newStreamer starts a streamer, or returns nil when nobody listens.
func newStreamer(call *toolloop.Call) *streamer {
	if call == nil || call.Reporter == nil {
		return nil
	}
	if call.Job != "" {
		return &streamer{call: call, direct: true}
	}
	s := &streamer{call: call, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *streamer) run() {
	defer close(s.done)
	t := time.NewTicker(partialInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.flush(false)
		case <-s.stop:
			s.flush(true)
			return
		}
	}
}

// add queues output for the next report, or, for a background job,
// reports it now.
func (s *streamer) add(p []byte) {
	if s == nil {
		return
	}
	if s.direct {
		s.mu.Lock()
		s.pending = append(s.pending, p...)
		s.mu.Unlock()
		s.flush(false)
		return
	}
	s.mu.Lock()
	k := min(partialMax-len(s.pending), len(p))
	s.pending = append(s.pending, p[:k]...)
	s.dropped += int64(len(p) - k)
	s.mu.Unlock()
}

// flush reports what is queued. Unless final, an incomplete UTF-8
// character at the end waits for the rest of its bytes.
func (s *streamer) flush(final bool) {
	s.mu.Lock()
	p, dropped := s.pending, s.dropped
	keep := 0
	if !final && len(p) > 0 {
		if i := lastRuneStart(p); !utf8.FullRune(p[i:]) {
			keep = len(p) - i
		}
	}
	text := strings.ToValidUTF8(string(p[:len(p)-keep]), "\uFFFD")
	s.pending = append(s.pending[:0], p[len(p)-keep:]...)
	s.dropped = 0
	s.mu.Unlock()
	if dropped > 0 {
		text += fmt.Sprintf("\n[... %d bytes not streamed ...]\n", dropped)
	}
	if text != "" {
		s.call.ReportPartial(text)
	}
}

// close stops the streamer after a last report.
func (s *streamer) close() {
	if s == nil {
		return
	}
	if s.direct {
		s.flush(true)
		return
	}
	close(s.stop)
	<-s.done
}
