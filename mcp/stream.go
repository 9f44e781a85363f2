package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// readBuffer is the size of the buffers a stream of messages is read
// through.
const readBuffer = 64 << 10

// msgReader is what a server sends (a response body, or its stdout), as
// the SDK reads it, with each message cut to its limits (see [clipper])
// as it is read: never more than one cut message is held, so a server
// that returns gigabytes costs no more memory than the limits.
//
// A message that cannot be cut (it is not JSON, or it is too large where
// cutting would change its meaning) is replaced by a JSON-RPC error
// answering it, naming its size and the limit, when it is a response
// whose id came before the trouble; otherwise it is left out, and logged.
type msgReader struct {
	c      clipper
	pos    int   // of the unread output in c.out
	err    error // once set, returned when the output is read
	next   func() error
	limits func() limits
	log    *slog.Logger
	closer io.Closer
	done   bool     // a body's one message was read
	ev     sseEvent // the event being read, for SSE
	// For stdio: started once a message was read; skipped counts the
	// bytes of the lines skipped (see maxBanner).
	started bool
	skipped int64
	// capture, if set, is handed the responses read (see task.go).
	capture *capture
}

// newBodyReader reads a JSON response body: one message.
func newBodyReader(body io.ReadCloser, lim func() limits, log *slog.Logger) *msgReader {
	r := &msgReader{limits: lim, log: log, closer: body}
	r.c.in = bufio.NewReaderSize(body, readBuffer)
	r.next = r.nextBody
	return r
}

// newEventReader reads a stream of server-sent events.
func newEventReader(body io.ReadCloser, lim func() limits, log *slog.Logger) *msgReader {
	r := &msgReader{limits: lim, log: log, closer: body}
	r.ev.br = bufio.NewReaderSize(body, readBuffer)
	r.c.in = bufio.NewReaderSize(&r.ev, readBuffer)
	r.next = r.nextEvent
	return r
}

// newLineReader reads newline-delimited messages, a stdio server's stdout.
func newLineReader(out io.Reader, lim func() limits, log *slog.Logger) *msgReader {
	r := &msgReader{limits: lim, log: log}
	r.c.in = bufio.NewReaderSize(out, readBuffer)
	r.next = r.nextLine
	return r
}

// Read implements [io.Reader].
func (r *msgReader) Read(p []byte) (int, error) {
	for r.pos >= len(r.c.out) {
		if r.err != nil {
			return 0, r.err
		}
		r.pos = 0
		r.c.out = r.c.out[:0]
		if cap(r.c.out) > 1<<20 {
			r.c.out = nil // do not hold a large message's memory while waiting
		}
		r.err = r.next()
	}
	n := copy(p, r.c.out[r.pos:])
	r.pos += n
	return n, nil
}

// Close implements [io.Closer].
func (r *msgReader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// refuse replaces the message being read, whose output began at start,
// by an error answering it, and reports whether it could; if not, the
// message is left out.
func (r *msgReader) refuse(start int, cerr *clipError, size int64) bool {
	c := &r.c
	c.out = c.out[:start]
	msg := fmt.Sprintf("the server's message of %d bytes was refused: %v", size, cerr)
	if c.id != nil && !c.request {
		if resp, err := errorResponse(c.id, msg); err == nil {
			r.log.Warn("mcp server message refused; the request fails", "err", msg)
			c.out = append(c.out, resp...)
			return true
		}
	}
	r.log.Warn("mcp server message left out", "err", msg)
	return false
}

// clip copies the message that c.in holds, and reports the trouble if it
// cannot; other errors are the stream's. If whole, only white space may
// follow the message.
func (r *msgReader) clip(whole bool) (*clipError, error) {
	c := &r.c
	err := c.message(r.limits())
	if err == nil && whole {
		switch _, perr := c.peek(); perr {
		case nil:
			err = syntaxErr("data after the message")
		case io.EOF:
		default:
			err = perr
		}
	}
	var cerr *clipError
	if errors.As(err, &cerr) {
		return cerr, nil
	}
	return nil, err
}

func (r *msgReader) nextBody() error {
	c := &r.c
	if r.done {
		return io.EOF
	}
	r.done = true
	if _, err := c.peek(); err != nil {
		return err // an empty body: io.EOF
	}
	cerr, err := r.clip(true)
	if cerr != nil {
		n, _ := io.Copy(io.Discard, c.in)
		r.refuse(0, cerr, c.read+n)
		return nil
	}
	if err == nil && r.capture != nil {
		captureMessage(r.capture, c.out)
	}
	return err
}

// maxBanner bounds what a stdio server may write to its stdout before
// its first message that is not JSON-RPC (a banner, a log line): such
// lines are logged and skipped, up to this many bytes in all; beyond, the
// stream fails, so the server fails to start.
const maxBanner = 64 << 10

// maxLoggedLine bounds the head of a skipped line that is logged.
const maxLoggedLine = 256

func (r *msgReader) nextLine() error {
	c := &r.c
	for {
		b, err := c.peek()
		if err != nil {
			return err // io.EOF between messages: the end
		}
		if b != '{' && b != '[' {
			// Not a JSON-RPC message, nor a batch of them: a banner or a
			// stray log line. Skip it, rather than let the SDK end the
			// session on it.
			if err := r.skipNonJSON(); err != nil {
				return err
			}
			continue
		}
		r.started = true
		cerr, err := r.clip(false)
		if err != nil {
			return err
		}
		if cerr == nil {
			c.out = append(c.out, '\n')
			return nil
		}
		// Start again after the line.
		n, err := skipLine(c.in)
		if r.refuse(0, cerr, c.read+n) {
			c.out = append(c.out, '\n')
			return err
		}
		if err != nil {
			return err
		}
	}
}

// skipNonJSON skips a line of a stdio server's stdout that is not JSON,
// and logs it (see maxBanner).
func (r *msgReader) skipNonJSON() error {
	c := &r.c
	var head []byte
	var n int64
	var err error
	for {
		var part []byte
		part, err = c.in.ReadSlice('\n')
		n += int64(len(part))
		if len(head) < maxLoggedLine {
			head = append(head, part[:min(len(part), maxLoggedLine-len(head))]...)
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	if err != nil && err != io.EOF {
		return err
	}
	line := string(bytes.TrimRight(head, "\r\n"))
	r.skipped += n
	when := "after its first message"
	if !r.started {
		when = "before its first message"
	}
	r.log.Warn("mcp server wrote a line that is not JSON-RPC to stdout; skipped", "when", when, "line", line, "bytes", n)
	if !r.started && r.skipped > maxBanner {
		return fmt.Errorf("the server wrote over %d bytes that are not JSON-RPC to its stdout before its first message", maxBanner)
	}
	return err
}

// skipLine skips the rest of a line, returning how long it was, without
// its newline.
func skipLine(br *bufio.Reader) (int64, error) {
	var n int64
	for {
		line, err := br.ReadSlice('\n')
		n += int64(len(line))
		if err == nil {
			return n - 1, nil
		}
		if err != bufio.ErrBufferFull {
			return n, err
		}
	}
}

func (r *msgReader) nextEvent() error {
	c, e := &r.c, &r.ev
	for {
		if err := e.start(); err != nil {
			return err
		}
		switch {
		case !e.data && len(e.fields) == 0:
			continue
		case !e.data:
			c.out = append(append(c.out, e.fields...), '\n')
			return nil
		case e.name != "" && e.name != "message":
			if ok, err := r.rawEvent(); ok || err != nil {
				return err
			}
			continue
		}
		c.in.Reset(e)
		if _, err := c.peek(); err != nil {
			if err != io.EOF {
				return err
			}
			if len(e.fields) == 0 { // data of white space only
				continue
			}
			c.out = append(append(c.out, e.fields...), '\n')
			return nil
		}
		c.out = append(c.out, "data: "...)
		start := len(c.out)
		cerr, err := r.clip(true)
		if errors.Is(err, io.ErrUnexpectedEOF) && (e.err == nil || e.err == io.EOF) {
			cerr, err = &clipError{"the event ends inside the message"}, nil
		}
		if err != nil {
			return err
		}
		n, err := e.drain()
		if err != nil {
			return err
		}
		if cerr != nil && !r.refuse(start, cerr, c.read+int64(c.in.Buffered())+n) {
			c.out = c.out[:0]
			continue
		}
		if cerr == nil && r.capture != nil {
			captureMessage(r.capture, c.out[start:])
		}
		c.out = append(append(append(c.out, '\n'), e.fields...), '\n')
		return nil
	}
}

// rawEvent passes on an event that is not a message (such as the SSE
// transport's endpoint event) if it is small, and reports whether it did.
func (r *msgReader) rawEvent() (bool, error) {
	c, e := &r.c, &r.ev
	limit := r.limits().rest
	data, err := io.ReadAll(io.LimitReader(e, int64(limit)+1))
	if err != nil {
		return false, err
	}
	if len(data) > limit {
		n, err := e.drain()
		r.log.Warn("mcp server event left out", "event", e.name, "bytes", int64(len(data))+n, "limit", limit)
		return false, err
	}
	for line := range bytes.Lines(data) {
		c.out = append(append(c.out, "data: "...), bytes.TrimSuffix(line, []byte("\n"))...)
		c.out = append(c.out, '\n')
	}
	c.out = append(append(c.out, e.fields...), '\n')
	return true, nil
}

// sseEvent reads the data of one server-sent event, its lines joined by
// newlines, as an [io.Reader] that ends with the event, however long its
// lines. Its other fields are kept, to be passed on.
type sseEvent struct {
	br     *bufio.Reader
	fields []byte // its id, event and retry lines
	name   string
	data   bool   // a data line was read
	inLine bool   // the current data line goes on
	nl     bool   // a newline joining two data lines is due
	rem    []byte // what is unread of the data read
	done   bool   // the event is over
	err    error  // the stream failed
}

// maxFields bounds the fields kept of an event besides its data.
const maxFields = 4 << 10

// start reads the next event up to its first data line, or its end. It
// returns io.EOF if the stream ends before the event begins.
func (e *sseEvent) start() error {
	*e = sseEvent{br: e.br, fields: e.fields[:0]}
	for !e.data && !e.done {
		if err := e.advance(); err != nil {
			return err
		}
	}
	if e.done && !e.data && len(e.fields) == 0 && e.err == io.EOF {
		return io.EOF
	}
	return nil
}

// Read implements [io.Reader].
func (e *sseEvent) Read(p []byte) (int, error) {
	for {
		if e.nl && len(p) > 0 {
			e.nl = false
			p[0] = '\n'
			return 1, nil
		}
		if len(e.rem) > 0 {
			n := copy(p, e.rem)
			e.rem = e.rem[n:]
			return n, nil
		}
		if e.done {
			return 0, io.EOF
		}
		if err := e.advance(); err != nil {
			return 0, err
		}
	}
}

// drain skips the rest of the event, returning how many bytes it held.
func (e *sseEvent) drain() (int64, error) {
	var n int64
	for {
		n += int64(len(e.rem))
		e.rem, e.nl = nil, false
		if e.done {
			return n, nil
		}
		if err := e.advance(); err != nil {
			return n, err
		}
	}
}

// advance reads more of the current data line, or the next line. The
// data it sets in e.rem is valid until the next read of br.
func (e *sseEvent) advance() error {
	line, err := e.br.ReadSlice('\n')
	if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
		e.err = err
		return err
	}
	whole := err != bufio.ErrBufferFull
	if err == io.EOF {
		e.done, e.err = true, io.EOF
	}
	if whole {
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	}
	if e.inLine {
		e.rem, e.inLine = line, !whole
		return nil
	}
	if len(line) == 0 {
		e.done = true
		return nil
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "data":
		e.nl, e.data = e.data, true
		e.rem, e.inLine = value, !whole
		return nil
	case "event", "id", "retry":
		if whole && len(e.fields)+len(line) < maxFields {
			e.fields = append(append(e.fields, line...), '\n')
			if string(field) == "event" {
				e.name = string(value)
			}
		}
	}
	if !whole { // a long comment or unknown field
		switch _, err := skipLine(e.br); err {
		case nil:
		case io.EOF:
			e.done, e.err = true, io.EOF
		default:
			e.err = err
			return err
		}
	}
	return nil
}
