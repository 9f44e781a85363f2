package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/toolloop/toolloop"
)

// DefaultBufferSize is the size of a Writer's buffer when
// Options.BufferSize is zero.
const DefaultBufferSize = 64 << 10

// Options configure a [Writer]. The zero value writes every event, writes
// each durable event through at once, and syncs it to stable storage before
// Record returns.
//
// Durable events are always written through to the underlying writer
// before Record returns, whatever the options: for a file that puts them in
// the operating system's hands, which is enough to survive the process
// being killed. Syncing (fsync) is what makes them survive the machine
// losing power, and it is the costly part; the options choose how often to
// pay for it.
type Options struct {
	// SyncEvery syncs once this many durable events have been written since
	// the last sync; 0 means 1, after each one.
	SyncEvery int
	// SyncInterval, if positive, syncs by time instead of by count: a
	// durable event is synced at once if the last sync is at least this
	// old, and otherwise within this interval (a timer does it if no other
	// event comes).
	SyncInterval time.Duration
	// NoSync never syncs, not even on Close.
	NoSync bool

	// DropTransient leaves transient events out of the log. Replaying needs
	// only durable events.
	DropTransient bool
	// BufferSize is the size of the buffer that holds transient events
	// until the next durable one; 0 means DefaultBufferSize.
	BufferSize int

	// Redact, if set, is applied to every event before it is written, so
	// that no secret reaches the file: set it to a sanitize.Redactor's
	// RedactEvent. It must not change the event it is given (RedactEvent
	// copies what it changes), and must be safe for concurrent use.
	Redact func(toolloop.Event) toolloop.Event
}

// ErrClosed is the error of Flush and Sync on a closed Writer.
var ErrClosed = errors.New("eventlog: writer is closed")

// syncer is what *os.File offers to make writes durable.
type syncer interface{ Sync() error }

// cannotSync reports whether a Sync error means the file is of a kind
// that cannot be synced, rather than that syncing failed.
func cannotSync(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported)
}

// flusher is a writer that buffers, like bufio.Writer or gzip.Writer.
type flusher interface{ Flush() error }

// Writer appends events to a log as JSON Lines. Use its Record method as
// an AgentLoop's OnEvent. It is safe for concurrent use, so several loops
// may share one Writer.
//
// Record never fails and never panics: the first error writing or syncing
// stops the log, and Err and Close report it. An event that cannot be
// encoded is skipped and its error reported the same way, but the log goes
// on.
type Writer struct {
	opts   Options
	under  io.Writer
	file   *os.File // set when the Writer owns the file
	mu     sync.Mutex
	bw     *bufio.Writer
	buf    bytes.Buffer
	enc    *json.Encoder
	err    error // the first error, reported by Err and Close
	broken bool  // a write failed: the log may end in a torn line, so stop
	closed bool
	// unsynced counts the durable events written since the last sync.
	unsynced int
	lastSync time.Time
	// unsyncable: the underlying file cannot be synced (a pipe, a
	// terminal), so only flush it.
	unsyncable bool
	timer      *time.Timer
	closeErr   error
}

// NewWriter returns a Writer that appends to w. The Writer does not own w:
// Close flushes it (and syncs it, if it has a Sync method like *os.File)
// but does not close it.
func NewWriter(w io.Writer, opts Options) *Writer {
	size := opts.BufferSize
	if size <= 0 {
		size = DefaultBufferSize
	}
	lw := &Writer{opts: opts, under: w, bw: bufio.NewWriterSize(w, size), lastSync: time.Now()}
	lw.enc = json.NewEncoder(&lw.buf)
	lw.enc.SetEscapeHTML(false)
	return lw
}

// Create creates the log file at path, or truncates it, and returns a
// Writer that owns it. The file is readable by its owner only: events hold
// tool arguments and outputs.
func Create(path string, opts Options) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return own(f, opts, true), nil
}

// Open opens the log file at path for appending, creating it if need be,
// and returns a Writer that owns it. This is how a process that restarts
// after a crash carries on with the same log.
//
// If the file ends in a torn line (the process that wrote it was killed
// mid-write), Open cuts that line off first, so that the next event starts
// on a line of its own.
func Open(path string, opts Options) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := repairTail(f, st.Size(), !opts.NoSync); err != nil {
		f.Close()
		return nil, fmt.Errorf("eventlog: repairing the end of %s: %w", path, err)
	}
	return own(f, opts, st.Size() == 0), nil
}

func own(f *os.File, opts Options, created bool) *Writer {
	if created && !opts.NoSync {
		syncDir(filepath.Dir(f.Name()))
	}
	w := NewWriter(f, opts)
	w.file = f
	return w
}

// syncDir makes a new file's directory entry durable. It is best effort:
// some file systems cannot sync a directory, and that is no reason to
// refuse to log.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// repairTail makes a log that does not end in a newline end in one: a last
// line that is a whole event gets its newline, and a torn one is cut off.
func repairTail(f *os.File, size int64, sync bool) error {
	if size == 0 {
		return nil
	}
	start, err := lastLineStart(f, size)
	if err != nil || start == size {
		return err
	}
	tail := make([]byte, size-start)
	if _, err := f.ReadAt(tail, start); err != nil {
		return err
	}
	if json.Valid(tail) {
		_, err = f.Write([]byte{'\n'})
	} else {
		err = f.Truncate(start)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	return err
}

// lastLineStart returns the offset just after the last newline of the
// file's first size bytes, or 0 if there is none.
func lastLineStart(f *os.File, size int64) (int64, error) {
	const chunk = 32 << 10
	buf := make([]byte, chunk)
	end := size
	for end > 0 {
		n := min(int64(chunk), end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// Record appends e to the log. It is meant to be an AgentLoop's OnEvent.
// After an error or Close it does nothing.
func (w *Writer) Record(e toolloop.Event) {
	durable := !e.Type.Transient()
	if !durable && w.opts.DropTransient {
		return
	}
	if w.opts.Redact != nil {
		e = w.opts.Redact(e)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.broken {
		return
	}
	w.buf.Reset()
	if err := w.enc.Encode(e); err != nil {
		w.note(fmt.Errorf("eventlog: encoding a %s event: %w", e.Type, err))
		return
	}
	if _, err := w.bw.Write(w.buf.Bytes()); err != nil {
		w.fail(err)
		return
	}
	if !durable {
		return
	}
	if err := w.bw.Flush(); err != nil {
		w.fail(err)
		return
	}
	w.unsynced++
	w.maybeSync()
}

// maybeSync syncs if the policy says so. w.mu is held.
func (w *Writer) maybeSync() {
	switch {
	case w.opts.NoSync:
		w.unsynced = 0
	case w.opts.SyncInterval > 0:
		wait := w.opts.SyncInterval - time.Since(w.lastSync)
		if wait <= 0 {
			w.syncLocked()
			return
		}
		if w.timer == nil {
			w.timer = time.AfterFunc(wait, w.onTimer)
		}
	case w.unsynced >= max(w.opts.SyncEvery, 1):
		w.syncLocked()
	}
}

func (w *Writer) onTimer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.closed || w.broken || w.unsynced == 0 {
		return
	}
	w.syncLocked()
}

// syncLocked flushes the buffer and syncs the underlying writer. w.mu is
// held.
func (w *Writer) syncLocked() {
	if err := w.bw.Flush(); err != nil {
		w.fail(err)
		return
	}
	if f, ok := w.under.(flusher); ok {
		if err := f.Flush(); err != nil {
			w.fail(err)
			return
		}
	}
	if s, ok := w.under.(syncer); ok && !w.unsyncable {
		if err := s.Sync(); err != nil {
			if !cannotSync(err) {
				w.fail(err)
				return
			}
			// A pipe or a terminal, such as os.Stdout: writing through is
			// all there is to do.
			w.unsyncable = true
		}
	}
	w.unsynced = 0
	w.lastSync = time.Now()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

func (w *Writer) note(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *Writer) fail(err error) {
	w.note(fmt.Errorf("eventlog: writing: %w", err))
	w.broken = true
}

// Flush writes buffered transient events through to the underlying writer,
// without syncing.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if !w.broken {
		if err := w.bw.Flush(); err != nil {
			w.fail(err)
		}
	}
	return w.err
}

// Sync writes buffered events through and syncs the underlying writer to
// stable storage, whatever the options say.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if !w.broken {
		w.syncLocked()
	}
	return w.err
}

// Err returns the first error the Writer met, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close flushes the log, syncs it unless Options.NoSync is set, and closes
// the file if the Writer owns it. It returns the first error the Writer
// met. Calling Close again returns the same result and does nothing else.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.closeErr
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if !w.broken {
		if w.opts.NoSync {
			if err := w.bw.Flush(); err != nil {
				w.fail(err)
			}
		} else {
			w.syncLocked()
		}
	}
	if w.file != nil {
		if err := w.file.Close(); err != nil {
			w.note(fmt.Errorf("eventlog: closing: %w", err))
		}
	}
	w.closeErr = w.err
	return w.closeErr
}
