package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/sanitize"
)

// runLog records a session's events in an event log, redacted. A new log
// is created at its first event, named after the run's ID unless a path
// was given; an existing one (resume) is appended to. While it is open
// the file is locked, so that no other toolloop resumes the run meanwhile.
//
// With a key, it seals the state of a run that pauses as the log will
// replay it, and keeps the seal beside the log (see writeSeal) until the
// log records that the run resumed.
type runLog struct {
	mu     sync.Mutex
	path   string // the file, or "" until the first event names it
	dir    string // where a log named by its run ID goes
	append bool
	// carryOn: a log named by its run ID that exists already is
	// appended to (a stored session's paused run, resumed).
	carryOn bool
	red     *sanitize.Redactor
	w       *eventlog.Writer
	unlock  func()
	err     error
	closed  bool

	key []byte
	// replay follows the log as it is written, from its first line: an
	// appended-to log's replay is handed in.
	replay *eventlog.Replay
}

// record is the loop's OnEvent.
func (l *runLog) record(e toolloop.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil && l.err == nil && !l.closed {
		l.err = l.open(e.RunID)
	}
	if l.w != nil {
		e = l.red.RedactEvent(e)
		l.w.Record(e)
		if l.key != nil && l.err == nil {
			l.err = l.seal(e)
		}
	}
}

// seal follows the log's replay with e, the event as written: it seals
// the state a run paused with, and removes the seal once the run resumes,
// so that the seal is used once.
func (l *runLog) seal(e toolloop.Event) error {
	if l.replay == nil {
		l.replay = new(eventlog.Replay)
	}
	l.replay.Add(e)
	if e.ParentRunID != "" {
		return nil
	}
	switch e.Type {
	case toolloop.EventRunPaused:
		if st := l.replay.Paused; st != nil {
			if err := writeSeal(l.path, st, l.key); err != nil {
				return fmt.Errorf("sealing the paused run: %w", err)
			}
		}
	case toolloop.EventRunResumed:
		return removeSeal(l.path)
	}
	return nil
}

// openNow opens the log before the first event.
func (l *runLog) openNow(runID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w != nil {
		return nil
	}
	return l.open(runID)
}

// open creates or opens the file, locking it unless the lock is held
// already (resume takes it before it reads the log).
func (l *runLog) open(runID string) error {
	if l.path == "" {
		l.path = filepath.Join(l.dir, runID+".jsonl")
		if _, err := os.Stat(l.path); err == nil && l.carryOn {
			l.append = true
		}
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return err
	}
	if l.unlock == nil {
		unlock, err := lockLog(l.path)
		if err != nil {
			return err
		}
		l.unlock = unlock
	}
	var w *eventlog.Writer
	var err error
	if l.append {
		w, err = eventlog.Open(l.path, eventlog.Options{})
	} else {
		// A seal left by an earlier log at this path seals nothing in it.
		if err = removeSeal(l.path); err == nil {
			w, err = eventlog.Create(l.path, eventlog.Options{})
		}
	}
	if err != nil {
		l.unlock()
		l.unlock = nil
		return err
	}
	l.w = w
	return nil
}

// Path returns the log's file, once known.
func (l *runLog) Path() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.path
}

// close flushes and closes the log, and returns the first error met.
func (l *runLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	err := l.err
	if l.w != nil {
		err = errors.Join(err, l.w.Close())
		l.w = nil
	}
	if l.unlock != nil {
		l.unlock()
		l.unlock = nil
	}
	if err != nil {
		return fmt.Errorf("the event log %s: %w", l.path, err)
	}
	return nil
}

// errLocked: another toolloop has the log open.
var errLocked = errors.New("another toolloop process has the log open")
