package mcp

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// reapTimeout bounds the wait for a process to be reaped after SIGKILL,
// which it cannot survive: a little more than cmd.WaitDelay, plus slack
// for a loaded machine.
const reapTimeout = 10 * time.Second

// process is a stdio server's child process. It is the writing end of
// the connection: closing it shuts the process down as the protocol says
// (stdin closed, then SIGTERM, then SIGKILL) and waits until it is reaped.
type process struct {
	cmd    *exec.Cmd
	stderr *lineLog
	stdin  io.WriteCloser
	// shutdown is how long each step of the shutdown waits once the
	// session is up (see started); until then, see stopFailed.
	shutdown time.Duration
	up       atomic.Bool

	exited  chan struct{} // closed once the process is reaped
	waitErr error         // how it exited, once exited is closed

	closeOnce sync.Once
	closeErr  error
}

// command starts a stdio server's process, talking to it over stdin and
// stdout. What it writes to stdout is cut to the limits as it is read
// (see [msgReader]), so a long line costs no more than the limits: the
// SDK's own cap on a line (which would end the session) is lifted.
func (s *Source) command() (sdk.Transport, *process, error) {
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.cfg.Cwd
	if len(s.cfg.Env) > 0 {
		env := os.Environ()
		for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
			env = append(env, k+"="+s.cfg.Env[k])
		}
		cmd.Env = env
	}
	// Its own process group, so that what it starts can be cleaned up with
	// it, and a terminal's Ctrl-C reaches us, not it.
	setProcessGroup(cmd)
	// Do not let a grandchild holding stderr open stall the reaping.
	cmd.WaitDelay = time.Second
	p := &process{cmd: cmd, shutdown: orDur(s.opts.ShutdownTimeout, DefaultShutdownTimeout), exited: make(chan struct{})}
	// Its stderr is logged, and its last lines kept for its errors.
	p.stderr = &lineLog{log: s.logger}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	// The reading end does not close: the process does, when it exits.
	out := io.NopCloser(newLineReader(stdout, s.sharedLimits, s.logger))
	return &sdk.IOTransport{Reader: out, Writer: p, MaxLineLength: -1}, p, nil
}

// Write implements [io.Writer]: it writes to the process's stdin.
func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close implements [io.Closer]: it shuts the process down and waits
// until it is reaped. It returns how the process exited, or an error if
// it could not be stopped. Close is idempotent.
func (p *process) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.stop() })
	return p.closeErr
}

func (p *process) stop() error {
	if !p.up.Load() {
		return p.stopFailed()
	}
	_ = p.stdin.Close()
	if p.wait(p.shutdown) {
		return p.waitErr
	}
	// If SIGTERM cannot be sent (as on Windows), go straight to SIGKILL.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err == nil && p.wait(p.shutdown) {
		return p.waitErr
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing the server process: %w", err)
	}
	// A killed process dies at once, but under load its reaping can take
	// longer than the shutdown timeout: a kill that worked is no error.
	if p.wait(reapTimeout) {
		return p.waitErr
	}
	return fmt.Errorf("the server process %d was killed but not reaped within %v", p.cmd.Process.Pid, reapTimeout)
}

// stopFailed stops a process whose session never came up within
// failedStartGrace in all, so that a start that hangs costs
// ConnectTimeout plus about a second: stdin is closed and its process
// group sent SIGTERM at once, then SIGKILL when the grace is over. The
// group, not only the process: a child of it that holds its stdout or
// stderr open would otherwise delay the reaping by cmd.WaitDelay.
func (p *process) stopFailed() error {
	_ = p.stdin.Close()
	pid := p.cmd.Process.Pid
	terminateGroup(pid)
	if p.wait(failedStartGrace) {
		return p.waitErr
	}
	killGroup(pid)
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing the server process: %w", err)
	}
	if p.wait(reapTimeout) {
		return p.waitErr
	}
	return fmt.Errorf("the server process %d was killed but not reaped within %v", pid, reapTimeout)
}

// wait waits up to d for the process to be reaped, and reports whether
// it was.
func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// cleanup runs once the process has been reaped: it kills whatever the
// server left behind in its process group and logs a last unfinished line.
func (p *process) cleanup() {
	if p.cmd.Process != nil {
		killGroup(p.cmd.Process.Pid)
	}
	p.stderr.flush()
}

// failedStartGrace bounds the stopping of a server that failed to start
// (by the SDK, as it gives up, or by abort), SIGKILL aside: it is not
// waited for long.
const failedStartGrace = time.Second

// started gives the process, now serving a session, the whole
// ShutdownTimeout to exit when asked.
func (p *process) started() { p.up.Store(true) }

// abort stops a server that failed to start and waits until it is reaped.
func (p *process) abort() {
	_ = p.Close()
	p.cleanup()
}
