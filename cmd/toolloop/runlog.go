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
type runLog struct {
	mu     sync.Mutex
	path   string // the file, or "" until the first event names it
	dir    string // where a log named by its run ID goes
	append bool
	red    *sanitize.Redactor
	w      *eventlog.Writer
	unlock func()
	err    error
	closed bool
}

// record is the loop's OnEvent.
func (l *runLog) record(e toolloop.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil && l.err == nil && !l.closed {
		l.err = l.open(e.RunID)
	}
	if l.w != nil {
		l.w.Record(l.red.RedactEvent(e))
	}
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
		w, err = eventlog.Create(l.path, eventlog.Options{})
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
