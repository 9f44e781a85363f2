package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/toolloop/toolloop"
)

// ErrCorrupt is matched (with errors.Is) by a [LineError]: a line of the
// log, other than a torn last one, is not an event.
var ErrCorrupt = errors.New("eventlog: corrupt line")

// LineError reports a line of a log that is not an event.
type LineError struct {
	// Line is the line's number, counting from 1.
	Line int
	// Err is why it could not be decoded.
	Err error
}

// Error implements the error interface.
func (e *LineError) Error() string {
	return fmt.Sprintf("eventlog: line %d is not an event: %v", e.Line, e.Err)
}

// Unwrap returns ErrCorrupt and the decoding error.
func (e *LineError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// Events iterates over the events of a log, in order. Blank lines are
// skipped, and so is a torn last line: one that has no newline and is not a
// whole event, as a process killed mid-write leaves. A line elsewhere that
// is not an event yields a *LineError, and iteration goes on if the loop
// does; an error reading r is yielded last.
func Events(r io.Reader) iter.Seq2[toolloop.Event, error] {
	return func(yield func(toolloop.Event, error) bool) {
		scan(r, func(e toolloop.Event, err error, torn bool) bool {
			if torn {
				return false
			}
			return yield(e, err)
		})
	}
}

// scan reads the events of r and hands each to f, with torn set for a torn
// last line (and a zero event), until f returns false.
func scan(r io.Reader, f func(e toolloop.Event, err error, torn bool) bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			f(toolloop.Event{}, fmt.Errorf("eventlog: reading: %w", rerr), false)
			return
		}
		last := rerr == io.EOF
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var e toolloop.Event
			switch err := json.Unmarshal(t, &e); {
			case err == nil:
				if !f(e, nil, false) {
					return
				}
			case last: // no newline: a torn write
				f(toolloop.Event{}, nil, true)
				return
			default:
				if !f(toolloop.Event{}, &LineError{Line: n, Err: err}, false) {
					return
				}
			}
		}
		if last {
			return
		}
	}
}
