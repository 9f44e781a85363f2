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
