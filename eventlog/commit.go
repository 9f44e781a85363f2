package eventlog

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/toolloop/toolloop"
)

// syncer is what *os.File offers to make writes durable.
type syncer interface{ Sync() error }

// cannotSync reports whether a Sync error means the file is of a kind
// that cannot be synced, rather than that syncing failed.
func cannotSync(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported)
}

// flusher is a writer that buffers, like bufio.Writer or gzip.Writer.
type flusher interface{ Flush() error }

// SyncPoint reports whether e is one of the events after which a replay
// could run something twice if the log lost it, so that every policy but
// Options.NoSync syncs the log before Record returns:
//
//   - a model response with tool calls: its calls run next, and a replay
//     that did not know of them would ask the model again, which could ask
//     for the same effects again;
//   - a paused run resuming: its approved calls run next, and a replay
//     that did not know of it would still hold the run as paused, to be
//     resumed again;
//   - a run's end (a run that pauses logs run.paused, then run.end): the
//     caller takes over, and may act on the run's result or end the
//     process.
//
// Every other durable event can wait for the next sync point: a lost
// completion leaves its call without a result, which a replay treats as
// interrupted, never to run again.
func SyncPoint(e toolloop.Event) bool {
	switch e.Type {
	case toolloop.EventModelResponse:
		return e.Response != nil && len(e.Response.Message.ToolCalls) > 0
	case toolloop.EventRunResumed, toolloop.EventRunEnd:
		return true
	}
	return false
}

// policySyncs reports whether the policy syncs the durable event e before
// Record returns, and arms the SyncInterval timer if it syncs e later.
// w.mu is held.
func (w *Writer) policySyncs(e toolloop.Event) bool {
	if w.opts.NoSync {
		return false
	}
	w.sinceSync++
	if SyncPoint(e) {
		return true
	}
	if d := w.opts.SyncInterval; d > 0 {
		wait := d - time.Since(w.lastSync)
		if wait <= 0 {
			return true
		}
		if w.timer == nil {
			w.timer = time.AfterFunc(wait, w.onTimer)
		}
		return false
	}
	return w.opts.SyncEvery > 0 && w.sinceSync >= w.opts.SyncEvery
}

func (w *Writer) onTimer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.closed {
		return
	}
	w.commit(w.durable, true)
}

// commit returns once the log is written through up to target, and synced
// up to it if sync is set, or once the log has failed. w.mu is held; it is
// let go while waiting for another goroutine's I/O and while doing its
// own.
//
// This is group commit: whoever finds no write under way writes
// everything appended so far with one Write, and whoever finds no sync
// under way syncs everything written so far with one Sync; everyone who
// came meanwhile waits, and then the next one goes for them all. On an
// *os.File, writes go on while a sync is under way (the sync counts only
// for what was written before it began); any other writer gets one call
// at a time.
func (w *Writer) commit(target int64, sync bool) {
	for !w.broken {
		switch {
		case w.written < target:
			if w.writing || w.syncing && !w.overlap {
				w.cond.Wait()
				continue
			}
			w.writeBatch()
		case sync && w.synced < target:
			if w.syncing || w.writing && !w.overlap {
				w.cond.Wait()
				continue
			}
			w.syncBatch()
		default:
			return
		}
	}
}

// writeBatch writes everything appended so far. w.mu is held, and no
// write is under way.
func (w *Writer) writeBatch() {
	w.writing = true
	chunk, end := w.pend, w.appended
	w.pend, w.spare = w.spare[:0], nil
	w.mu.Unlock()
	err := w.io(func() error {
		_, err := w.under.Write(chunk)
		return err
	})
	w.mu.Lock()
	w.writing = false
	w.cond.Broadcast()
	if cap(chunk) <= 2*w.size {
		w.spare = chunk[:0]
	}
	if err != nil {
		w.note(fmt.Errorf("eventlog: writing: %w", err))
		w.broken = true // the log may end in a torn line
		return
	}
	w.written = end
}

// syncBatch syncs everything written so far. w.mu is held, and no sync is
// under way.
func (w *Writer) syncBatch() {
	w.syncing = true
	end := w.written
	w.sinceSync = 0
	w.mu.Unlock()
	err := w.io(w.sync)
	w.mu.Lock()
	w.syncing = false
	w.cond.Broadcast()
	if err != nil {
		w.note(fmt.Errorf("eventlog: syncing: %w", err))
		w.broken = true // what the failed sync had is lost, whatever a later one says
		return
	}
	w.synced = end
	w.lastSync = time.Now()
	if w.timer != nil && w.synced >= w.durable {
		w.timer.Stop()
		w.timer = nil
	}
}

// io calls f without w.mu held, turning a panic of the underlying writer
// into an error: it must not unwind through Record's deferred unlock.
func (w *Writer) io(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the underlying writer panicked: %v", p)
		}
	}()
	return f()
}

// sync flushes and syncs the underlying writer. It runs without w.mu, in
// the one goroutine doing a sync.
func (w *Writer) sync() error {
	if f, ok := w.under.(flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	if s, ok := w.under.(syncer); ok && !w.unsyncable {
		if err := s.Sync(); err != nil {
			if !cannotSync(err) {
				return err
			}
			// A pipe or a terminal, such as os.Stdout: writing through is
			// all there is to do.
			w.unsyncable = true
		}
	}
	return nil
}

func (w *Writer) note(err error) {
	if w.err == nil {
		w.err = err
	}
}
