package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one connection to the server: one process, for stdio.
type session struct {
	cs   *sdk.ClientSession
	proc *process // nil unless stdio
	// ctx is cancelled, with the reason as its cause, when the session ends.
	ctx    context.Context
	cancel context.CancelCauseFunc
	over   atomic.Bool
	// release cancels the context the session was connected with.
	release context.CancelFunc
}

func newSession(cs *sdk.ClientSession, proc *process) *session {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &session{cs: cs, proc: proc, ctx: ctx, cancel: cancel}
}

func (s *session) ended() bool { return s.ctx.Err() != nil }

// end marks the session over, failing its calls in flight. It reports
// whether this call ended it.
func (s *session) end(cause error) bool {
	if !s.over.CompareAndSwap(false, true) {
		return false
	}
	s.cancel(cause)
	if s.release != nil {
		s.release()
	}
	return true
}

// close ends the session and closes the connection; for stdio, it waits for
// the process to exit (see [Options.ShutdownTimeout]). An exit status is not
// an error: the process is gone, as asked.
func (s *session) close() error {
	s.end(ErrClosed)
	err := s.cs.Close()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil
	}
	return err
}

// dial starts the server (for stdio) and opens a session. When ctx ends
// with a [TimeoutError] as its cause, that is the error.
func (s *Source) dial(ctx context.Context) (*session, error) {
	t, proc, err := s.transport(ctx)
	if err != nil {
		return nil, s.startError(ctx, nil, err)
	}
	cs, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		if proc != nil {
			proc.abort()
		}
		return nil, s.startError(ctx, proc, err)
	}
	if proc != nil {
		proc.started()
	}
	return newSession(cs, proc), nil
}

// startError describes a failed start: a timeout as such, and for a stdio
// server, how its process exited and the last lines of its stderr.
func (s *Source) startError(ctx context.Context, proc *process, err error) error {
	var stderr []string
	if proc != nil {
		stderr = proc.stderr.last()
	}
	var te *TimeoutError
	if errors.As(context.Cause(ctx), &te) {
		te := *te
		te.Stderr = stderr
		return &te
	}
	if proc == nil {
		return fmt.Errorf("server %q failed to start: %w", s.name, err)
	}
	var exit *exec.ExitError
	if errors.As(proc.waitErr, &exit) {
		return fmt.Errorf("server %q failed to start: %w; its process exited: %w%s", s.name, err, exit, stderrNote(stderr))
	}
	return fmt.Errorf("server %q failed to start: %w%s", s.name, err, stderrNote(stderr))
}

// transport returns a new transport to the server.
func (s *Source) transport(ctx context.Context) (sdk.Transport, *process, error) {
	switch s.kind {
	case typeStdio:
		t, proc, err := s.command()
		if err != nil {
			return nil, nil, err
		}
		return captureTransport{t}, proc, nil
	case typeHTTP:
		// What the server sends is cut to the limits by the client's
		// transport, which lifts the SDK's own cap on an event.
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.http, MaxEventSize: -1}, nil, nil
	case typeSSE:
		return captureTransport{&sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.http, MaxEventSize: -1}}, nil, nil
	}
	t, err := s.cfg.Transport(ctx)
	if err == nil && t == nil {
		err = errors.New("ServerConfig.Transport returned no transport")
	}
	return t, nil, err
}

// connectionLost reports whether err means the connection to the server is
// gone (the process exited, the network failed, a remote server forgot the
// session), rather than that the server answered with an error.
func connectionLost(err error) bool {
	var netErr *net.OpError
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) ||
		errors.As(err, &netErr)
}

// maxLine bounds a logged stderr line; longer lines are logged in pieces.
const maxLine = 8 << 10

// The last lines of a stdio server's stderr are kept for its errors: at
// most stderrLines lines and stderrBytes bytes, whether or not there is a
// logger.
const (
	stderrLines = 20
	stderrBytes = 4 << 10
)

// lineLog logs what a server writes to its stderr, one record per line,
// and keeps its last lines.
type lineLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	buf  []byte
	tail []string // the last lines, oldest first
	size int      // of tail, in bytes
}

// Write implements [io.Writer].
func (w *lineLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			if len(w.buf) >= maxLine {
				w.emit()
			}
			break
		}
		w.buf = append(w.buf, p[:i]...)
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineLog) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit()
}

// last returns the last lines written, oldest first.
func (w *lineLog) last() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.tail)
}

// emit logs the buffered line and keeps it. w.mu must be held.
func (w *lineLog) emit() {
	line := strings.TrimRight(string(w.buf), "\r")
	w.buf = w.buf[:0]
	if strings.TrimSpace(line) == "" {
		return
	}
	w.log.Info("mcp server stderr", "line", line)
	if len(line) > stderrBytes {
		line = line[:stderrBytes]
	}
	w.tail = append(w.tail, line)
	w.size += len(line)
	for len(w.tail) > stderrLines || w.size > stderrBytes {
		w.size -= len(w.tail[0])
		w.tail = w.tail[1:]
	}
}
