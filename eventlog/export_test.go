package eventlog

// Queued returns the events appended to w that no batch has taken yet, for
// tests that need to know who waits for the next batch.
func Queued(w *Writer) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.pend...)
}

// SetOverlap lets w write to its underlying writer while syncing it, as it
// does an *os.File, for tests that fake one.
func SetOverlap(w *Writer, on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.overlap = on
}

// SetHold sets how much of each stream w holds back, how much more it
// gathers before it writes some, and its bounds per stream and in all
// (see stream.go), for tests that need streams cut in many places.
func SetHold(w *Writer, back, step, max, total int) {
	w.streams.mu.Lock()
	defer w.streams.mu.Unlock()
	w.streams.holdBack, w.streams.holdStep, w.streams.holdMax, w.streams.holdTotal = back, step, max, total
}

// Held returns the most that one stream of w holds and what all hold.
func Held(w *Writer) (most, total int) {
	w.streams.mu.Lock()
	defer w.streams.mu.Unlock()
	for _, st := range w.streams.m {
		most = max(most, len(st.held))
	}
	return most, w.streams.held
}
