package eventlog

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolloop/toolloop"
)

// Streamed text (a model's text and reasoning deltas, a tool's partial
// output) reaches Record in pieces that can cut a secret in two, and
// Options.Redact, which sees one event at a time, finds neither half. So
// with Options.Redact set, the Writer holds back the tail of each stream
// and writes its text only once redacting what it holds shows that the
// part written holds no piece of a secret:
//
//   - A stream is the deltas of one type of one run (a model turn's text
//     or reasoning), or the partial output of one call. Its pieces are
//     joined as they come; the events written carry the joined text
//     redacted, cut at other places than the pieces were, and their
//     Coalesced counts the pieces each stands for.
//   - Once a stream holds holdBack+holdStep bytes (20 KiB), the Writer
//     redacts what it holds and writes what comes before its last
//     holdBack bytes (4 KiB), cut after a space, a line break, a quote, a
//     comma or a semicolon (never inside a token), if the text before the
//     cut and the text after it, each redacted on its own, come out as
//     all of it does: then no secret, nor the context that makes it one
//     (its name, a PEM block's BEGIN line), is cut in two. Otherwise it
//     tries the starts of up to three lines before, then holds on. A
//     secret and its context within holdBack bytes are thus always
//     redacted whole, and so is a longer secret that Redact knows by its
//     start, such as a private key block.
//   - The held tail is written, redacted whole, when the stream ends: on
//     the durable event that ends it (model.response or any other durable
//     event of the run without a call ID, for model streams;
//     tool.execution_complete of the call, for partial output; run.end or
//     run.paused, for all of a run's streams), and on Sync and Close.
//     Flush leaves it held.
//
// Memory: a stream holds at most holdMax bytes (64 KiB, the longest
// private key block the sanitize package's Redactor looks for) once
// Record returns, and all of a Writer's streams together at most
// holdTotal (1 MiB): past either, the Writer writes out what it must,
// redacted as well as the text it holds allows (past holdMax, all but the
// last holdBack bytes; past holdTotal, the whole of the streams that
// hold the most).
const (
	// holdBack is how much of a stream's latest text is always held: the
	// sanitize package's Redactor looks no further ahead than this for a
	// secret's value.
	holdBack = 4 << 10
	// holdStep is how much text a stream gathers past holdBack before
	// the Writer tries to write some of it, so that the cost of redacting
	// what it holds (two to three times holdBack+holdStep) is shared by
	// that much text.
	holdStep = 16 << 10
	// holdMax bounds what one stream holds while a secret may be open.
	holdMax = 64 << 10
	// holdTotal bounds what all of a Writer's streams hold together.
	holdTotal = 1 << 20
)

// streamKey names a stream: the deltas of one type in one run, or the
// partial output of one call.
type streamKey struct {
	run  string
	typ  toolloop.EventType
	call string
}

// stream is the text of a stream that is not yet written.
type stream struct {
	held []byte
	// last is the stream's latest event, without its text: what the text
	// written is sent as.
	last toolloop.Event
	// pieces counts the pieces (by Coalesced) that the held text holds
	// some of; tried is how much text was held when a try to write some
	// found no cut, so that the next try waits for holdStep more.
	pieces, tried int
}

// streams is a Writer's held streams.
type streams struct {
	mu     sync.Mutex
	m      map[streamKey]*stream
	held   int // the bytes all streams hold
	closed bool
	// holdBack, holdStep, holdMax and holdTotal are the constants, or a
	// test's.
	holdBack, holdStep, holdMax, holdTotal int
}

func newStreams() streams {
	return streams{holdBack: holdBack, holdStep: holdStep, holdMax: holdMax, holdTotal: holdTotal}
}

// streamed reports whether events of type t carry a piece of a stream.
func streamed(t toolloop.EventType) bool {
	switch t {
	case toolloop.EventModelDelta, toolloop.EventModelReasoningDelta, toolloop.EventPartialResult, toolloop.EventJobOutput:
		return true
	}
	return false
}

func keyOf(e *toolloop.Event) streamKey {
	k := streamKey{run: e.RunID, typ: e.Type}
	if e.Type == toolloop.EventPartialResult || e.Type == toolloop.EventJobOutput {
		k.call = e.CallID
	}
	return k
}

// ends reports whether the durable event e ends the stream k.
func ends(e *toolloop.Event, k streamKey) bool {
	if k.run != e.RunID {
		return false
	}
	switch e.Type {
	case toolloop.EventRunEnd, toolloop.EventRunPaused:
		return true
	case toolloop.EventComplete:
		return k.call != "" && k.call == e.CallID && k.typ == toolloop.EventPartialResult
	case toolloop.EventJobFinished:
		return k.call != "" && k.call == e.CallID && k.typ == toolloop.EventJobOutput
	}
	return k.call == "" && e.CallID == ""
}

// redactText returns s as Options.Redact redacts the text of an event of
// type t.
func (w *Writer) redactText(t toolloop.EventType, s string) string {
	return w.opts.Redact(toolloop.Event{Type: t, Text: s}).Text
}

// piece records e, the latest piece of its stream: its text joins what
// the stream holds, and what of that can be written is.
func (w *Writer) piece(e toolloop.Event) {
	ss := &w.streams
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed || e.Text == "" && e.Coalesced == 0 {
		return
	}
	k := keyOf(&e)
	st := ss.m[k]
	if st == nil {
		if ss.m == nil {
			ss.m = make(map[streamKey]*stream)
		}
		st = new(stream)
		ss.m[k] = st
	}
	st.held = append(st.held, e.Text...)
	ss.held += len(e.Text)
	st.pieces += max(e.Coalesced, 1)
	st.last = e
	st.last.Text, st.last.Coalesced = "", 0
	if len(st.held) >= ss.holdBack+ss.holdStep && len(st.held)-st.tried >= ss.holdStep {
		w.cut(st)
	}
	if len(st.held) > ss.holdMax {
		w.force(st)
	}
	for ss.held > ss.holdTotal {
		// Write out the stream that holds the most.
		var big streamKey
		for k, st := range ss.m {
			if len(st.held) > 0 && (ss.m[big] == nil || len(st.held) > len(ss.m[big].held)) {
				big = k
			}
		}
		w.end(big)
	}
}

// cut writes what st holds up to the last cut at least holdBack bytes
// before its end that leaves every secret whole: where the text before
// the cut and the text after it, each redacted on its own, come out as
// all of it does. It tries the cut and the starts of up to three lines
// before it.
func (w *Writer) cut(st *stream) {
	ss := &w.streams
	h := string(st.held)
	r := w.redactText(st.last.Type, h)
	c := lastCut(h, len(h)-ss.holdBack)
	if r == h && c > 0 {
		// No secret anywhere: the text before the cut is as it is.
		w.write(st, h[:c], c)
		return
	}
	for tries := 0; c > 0 && tries < 4; tries++ {
		if a := w.redactText(st.last.Type, h[:c]); strings.HasPrefix(r, a) && w.redactText(st.last.Type, h[c:]) == r[len(a):] {
			w.write(st, a, c)
			return
		}
		c = strings.LastIndexByte(h[:c-1], '\n') + 1 // the start of the line
	}
	st.tried = len(h)
}

// force writes what st holds but its last holdBack bytes, redacted as it
// is: st holds more than holdMax, and no cut was found that keeps every
// secret whole.
func (w *Writer) force(st *stream) {
	h := string(st.held)
	c := lastCut(h, len(h)-w.streams.holdBack)
	if c == 0 {
		c = len(h) - w.streams.holdBack
		for c > 0 && !utf8.RuneStart(h[c]) {
			c--
		}
	}
	if c > 0 {
		w.write(st, w.redactText(st.last.Type, h[:c]), c)
	}
}

// write writes text, the redacted form of the first n bytes st holds, as
// an event of st's stream, and drops those bytes.
func (w *Writer) write(st *stream, text string, n int) {
	e := w.opts.Redact(st.last)
	e.Text = text
	if st.pieces > 1 {
		e.Coalesced = st.pieces
	}
	st.held = st.held[:copy(st.held, st.held[n:])]
	if cap(st.held) > w.streams.holdMax {
		st.held = append([]byte(nil), st.held...) // let a huge piece's array go
	}
	w.streams.held -= n
	st.pieces, st.tried = 0, 0
	if len(st.held) > 0 {
		st.pieces = 1 // the piece whose rest is still held
	}
	if text != "" {
		w.append(e, false)
	}
}

// end writes what the stream k holds, redacted whole, and forgets it.
// ss.mu is held.
func (w *Writer) end(k streamKey) {
	ss := &w.streams
	st := ss.m[k]
	if st == nil {
		return
	}
	delete(ss.m, k)
	if len(st.held) > 0 {
		w.write(st, w.redactText(st.last.Type, string(st.held)), len(st.held))
	}
}

// endStreams writes what the streams that the durable event e ends hold,
// before e.
func (w *Writer) endStreams(e *toolloop.Event) {
	ss := &w.streams
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.m) == 0 {
		return
	}
	var keys []streamKey
	for k := range ss.m {
		if ends(e, k) {
			keys = append(keys, k)
		}
	}
	w.endAll(keys)
}

// endAll ends the streams keys, in a stable order. ss.mu is held.
func (w *Writer) endAll(keys []streamKey) {
	slices.SortFunc(keys, func(a, b streamKey) int {
		return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.typ, b.typ), cmp.Compare(a.call, b.call))
	})
	for _, k := range keys {
		w.end(k)
	}
}

// flushStreams writes what every stream holds; with closing, it also
// stops holding any more.
func (w *Writer) flushStreams(closing bool) {
	ss := &w.streams
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.closed = ss.closed || closing
	w.endAll(slices.Collect(maps.Keys(ss.m)))
}

// lastCut returns the last index at or before limit just after a byte
// that no token holds (a space, a line break, a quote, an angle bracket,
// a comma or a semicolon), or 0 if there is none.
func lastCut(s string, limit int) int {
	for i := min(limit, len(s)); i > 0; i-- {
		switch s[i-1] {
		case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>', ',', ';':
			return i
		}
	}
	return 0
}
