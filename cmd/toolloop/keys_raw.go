//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"errors"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// rawKeys reads the terminal key by key while a run works, so that a lone
// Esc can interrupt it: the terminal leaves canonical mode and its echo
// off (the line editor echoes), and keeps its signals, so Ctrl-C is still
// SIGINT, and its output processing. Between runs, and while a question or
// an editor holds the terminal, it is as it was: the line reader reads
// whole lines there.
type rawKeys struct {
	f     *os.File
	fd    int
	saved unix.Termios
	out   *output
	// busy reports that the line reader waits for a line (a question
	// abandoned when its call was cancelled): the terminal is left to it.
	busy func() bool
	// wakeR and wakeW are a pipe that wakes the reading goroutine from
	// its poll.
	wakeR, wakeW *os.File

	mu   sync.Mutex
	cond sync.Cond
	// running: a run reads; holds counts the holds not released;
	// polling: the goroutine waits for a key, the terminal in key mode;
	// keyMode: the terminal is in key mode.
	running, polling, keyMode bool
	holds                     int
}

// newRawKeys returns the keys of the terminal f, or nil if its attributes
// cannot be read.
func newRawKeys(f *os.File, out *output, busy func() bool) keys {
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	k := &rawKeys{f: f, fd: fd, saved: *t, out: out, busy: busy, wakeR: r, wakeW: w}
	k.cond.L = &k.mu
	return k
}

func (k *rawKeys) start(line func(string), esc func()) func() string {
	k.mu.Lock()
	k.running = true
	k.mu.Unlock()
	ed := &lineEditor{out: k.out, line: line, esc: esc}
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.read(ed)
	}()
	return func() string {
		k.mu.Lock()
		k.running = false
		k.cond.Broadcast()
		k.wake()
		k.mu.Unlock()
		<-done
		k.mu.Lock()
		k.lineMode()
		k.mu.Unlock()
		return string(ed.buf)
	}
}

// read feeds the keys typed to ed until the run ends or the terminal does.
func (k *rawKeys) read(ed *lineEditor) {
	buf := make([]byte, 256)
	for {
		k.mu.Lock()
		for k.running && k.holds > 0 {
			k.cond.Wait()
		}
		if !k.running {
			k.mu.Unlock()
			return
		}
		if !k.keyMode {
			if k.busy() || k.setKeyMode() != nil {
				// The terminal stays as it is until the run ends.
				for k.running {
					k.cond.Wait()
				}
				k.mu.Unlock()
				return
			}
			ed.redraw()
		}
		k.polling = true
		k.mu.Unlock()
		n, err := k.wait(buf)
		k.mu.Lock()
		k.polling = false
		k.cond.Broadcast()
		k.mu.Unlock()
		if err != nil {
			return // the terminal is gone
		}
		ed.feed(buf[:n])
	}
}

// wait waits for keys or a wake-up, and reads the keys.
func (k *rawKeys) wait(buf []byte) (int, error) {
	wake := int(k.wakeR.Fd())
	fds := []unix.PollFd{{Fd: int32(k.fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if fds[1].Revents != 0 {
			var b [64]byte
			unix.Read(wake, b[:])
			return 0, nil
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(k.fd, buf)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			return 0, nil
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// wake makes the reading goroutine's poll return. k.mu is held.
func (k *rawKeys) wake() {
	if k.polling {
		k.wakeW.Write([]byte{0})
	}
}

// setKeyMode takes the terminal out of canonical mode and its echo off,
// keeping its signals. k.mu is held.
func (k *rawKeys) setKeyMode() error {
	t := k.saved
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.IEXTEN
	t.Lflag |= unix.ISIG
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(k.fd, ioctlSetTermios, &t); err != nil {
		return err
	}
	k.keyMode = true
	return nil
}

// lineMode puts the terminal back as it was. k.mu is held.
func (k *rawKeys) lineMode() {
	if k.keyMode {
		k.restore()
		k.keyMode = false
	}
}

func (k *rawKeys) hold() func() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.holds++
	for k.polling {
		k.wake()
		k.cond.Wait()
	}
	k.lineMode()
	return sync.OnceFunc(func() {
		k.mu.Lock()
		k.holds--
		k.cond.Broadcast()
		k.mu.Unlock()
	})
}

func (k *rawKeys) restore() {
	unix.IoctlSetTermios(k.fd, ioctlSetTermios, &k.saved)
}

func (k *rawKeys) close() {
	k.wakeR.Close()
	k.wakeW.Close()
}
