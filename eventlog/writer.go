package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
)

// DefaultBufferSize is the size of a Writer's buffer when
// Options.BufferSize is zero.
const DefaultBufferSize = 64 << 10

// Options configure a [Writer]. The zero value writes every event, writes
// each durable event through at once, and syncs at the sync points: before
// a turn's tool calls run, when a paused run resumes, and when a run ends
// (see the package doc for the policies, what each costs and what a crash
// can lose).
//
// Durable events are always written through to the underlying writer
// before Record returns, whatever the options: for a file that puts them in
// the operating system's hands, which is enough to survive the process
// being killed. Syncing (fsync) is what makes them survive the machine
// losing power, and it is the costly part; the options choose how often to
// pay for it. Records that need a sync at the same time, from runs that
// share the Writer, share one.
type Options struct {
	// SyncEvery, if positive, also syncs once this many durable events
	// have been written since the last sync, before Record returns: 1
	// syncs each durable event. 0 syncs at the sync points only.
	SyncEvery int
	// SyncInterval, if positive, syncs by time instead of by count, on top
	// of the sync points: a durable event is synced at once if the last
	// sync is at least this old, and otherwise within this interval (a
	// timer does it if no other event comes).
	SyncInterval time.Duration
	// NoSync never syncs, not even at the sync points or on Close.
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
	//
	// Streamed text, which a secret can be cut across (model.delta,
	// model.reasoning_delta and tool.execution_partial_result events), is
	// held back so that Redact sees each secret whole: once a stream holds
	// 20 KiB, its text is written but its last 4 KiB and any secret not
	// yet whole, and the rest when the stream ends (the model's response,
	// the call's completion, the run's end), on Sync or on Close. The
	// events written carry the stream's text joined and cut at other
	// places than its pieces; each stream holds at most 64 KiB, and all
	// together 1 MiB. Redact is also called on text alone, in events that
	// hold only a type and Text.
	Redact func(toolloop.Event) toolloop.Event
}

// ErrClosed is the error of Flush and Sync on a closed Writer.
var ErrClosed = errors.New("eventlog: writer is closed")

// Writer appends events to a log as JSON Lines. Use its Record method as
// an AgentLoop's OnEvent. It is safe for concurrent use, so several loops
// may share one Writer.
//
// Record never fails and never panics: the first error writing or syncing
// stops the log, and Err and Close report it. A Record that was waiting
// for a sync that failed returns with Err reporting the failure, so an
// event is durable once Record has returned and Err is nil, when the
// policy syncs it. An event that cannot be encoded is skipped and its
// error reported the same way, but the log goes on.
//
// The underlying writer is used without the Writer's lock held, so that
// Records go on while a sync is under way, and the Records that need a
// sync meanwhile share the next one (group commit). An *os.File is written
// to while it is being synced; any other writer gets one call at a time,
// so it need not be safe for concurrent use.
type Writer struct {
	opts  Options
	under io.Writer
	file  *os.File // set when the Writer owns the file
	size  int      // the buffer size

	// streams holds back the tails of streamed text while Options.Redact
	// is set (see stream.go). Its lock is taken before mu, never after.
	streams streams

	mu   sync.Mutex
	cond sync.Cond // on mu: an I/O batch ended
	// pend holds the events appended and not yet written; spare is the
	// buffer of the last batch, kept for reuse (nil while a batch is
	// under way).
	pend, spare []byte
	// Positions in the stream of bytes this Writer appends: the end of the
	// last event appended, of what was written through, of what a sync
	// made durable, and of the last durable event.
	appended, written, synced, durable int64
	// writing, syncing: a goroutine is writing to or syncing the
	// underlying writer, without mu. overlap: the two may happen at once
	// (an *os.File).
	writing, syncing, overlap bool
	// sinceSync counts the durable events appended since the last sync.
	sinceSync int
	lastSync  time.Time
	// unsyncable: the underlying file cannot be synced (a pipe, a
	// terminal), so only write to it. Only the syncing goroutine uses it.
	unsyncable bool
	timer      *time.Timer

	err      error // the first error, reported by Err and Close
	broken   bool  // a write or sync failed: stop
	closed   bool
	closeErr error
}

// NewWriter returns a Writer that appends to w. The Writer does not own w:
// Close flushes it (and syncs it, if it has a Sync method like *os.File)
// but does not close it.
func NewWriter(w io.Writer, opts Options) *Writer {
	size := opts.BufferSize
	if size <= 0 {
		size = DefaultBufferSize
	}
	lw := &Writer{opts: opts, under: w, size: size, pend: make([]byte, 0, min(size, 4<<10)), lastSync: time.Now(), streams: newStreams()}
	lw.cond.L = &lw.mu
	_, lw.overlap = w.(*os.File)
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
// A durable event is written through before Record returns, and synced
// first if the policy says so (see [Options]). After an error or Close
// it does nothing.
func (w *Writer) Record(e toolloop.Event) {
	durable := !e.Type.Transient()
	if !durable && w.opts.DropTransient {
		return
	}
	if w.opts.Redact != nil {
		if streamed(e.Type) {
			w.piece(e) // see stream.go
			return
		}
		if durable {
			w.endStreams(&e)
		}
		e = w.opts.Redact(e)
	}
	w.append(e, durable)
}

// append encodes e and appends it to the log: through at once if
// durable, else to the buffer.
func (w *Writer) append(e toolloop.Event, durable bool) {
	eb := getEncoder()
	defer putEncoder(eb)
	err := eb.enc.Encode(e)

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.broken {
		return
	}
	if err != nil {
		w.note(fmt.Errorf("eventlog: encoding a %s event: %w", e.Type, err))
		return
	}
	w.pend = append(w.pend, eb.buf.Bytes()...)
	w.appended += int64(eb.buf.Len())
	if !durable {
		if len(w.pend) >= w.size {
			w.commit(w.appended, false)
		}
		return
	}
	w.durable = w.appended
	w.commit(w.appended, w.policySyncs(e))
}

// encoder encodes one event at a time, outside the Writer's lock.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	eb := new(encoder)
	eb.enc = json.NewEncoder(&eb.buf)
	eb.enc.SetEscapeHTML(false)
	return eb
}}

func getEncoder() *encoder {
	eb := encoders.Get().(*encoder)
	eb.buf.Reset()
	return eb
}

func putEncoder(eb *encoder) {
	if eb.buf.Cap() <= DefaultBufferSize { // let a huge event's buffer go
		encoders.Put(eb)
	}
}

// Flush writes buffered transient events through to the underlying writer,
// without syncing. The text that streams hold back while Options.Redact is
// set stays held.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.commit(w.appended, false)
	return w.err
}

// Sync writes buffered events through and syncs the underlying writer to
// stable storage, whatever the options say. It does nothing if nothing was
// appended since the last sync. With Options.Redact set, it first writes
// the text that streams hold back (see Options.Redact), so that a secret
// cut in two by this Sync can be written in clear.
func (w *Writer) Sync() error {
	w.flushStreams(false)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.commit(w.appended, true)
	return w.err
}

// Err returns the first error the Writer met, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close writes the log through, syncs it unless Options.NoSync is set, and
// closes the file if the Writer owns it. It returns the first error the
// Writer met. Calling Close again returns the same result and does nothing
// else.
func (w *Writer) Close() error {
	w.flushStreams(true)
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
	w.commit(w.appended, !w.opts.NoSync)
	for w.writing || w.syncing { // a batch that failed, and still has its waiters
		w.cond.Wait()
	}
	if w.file != nil {
		if err := w.file.Close(); err != nil {
			w.note(fmt.Errorf("eventlog: closing: %w", err))
		}
	}
	w.closeErr = w.err
	return w.closeErr
}
