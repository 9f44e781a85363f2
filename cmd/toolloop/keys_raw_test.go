//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"bytes"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRawKeys reads a pseudo-terminal key by key: lines and Esc while a
// run works, the terminal as it was while held and after the run, and
// the text typed and not sent returned.
func TestRawKeys(t *testing.T) {
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	defer tty.Close()
	canonical := func() bool {
		tm, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlGetTermios)
		require.NoError(t, err)
		return tm.Lflag&unix.ICANON != 0 && tm.Lflag&unix.ECHO != 0
	}
	require.True(t, canonical())
	var out bytes.Buffer
	k := newRawKeys(tty, &output{w: &out}, func() bool { return false })
	require.NotNil(t, k)
	defer k.close()

	lines, escs := make(chan string, 4), make(chan struct{}, 4)
	stop := k.start(func(s string) { lines <- s }, func() { escs <- struct{}{} })
	ptmx.WriteString("use staging\r")
	assert.Equal(t, "use staging", <-lines)
	assert.False(t, canonical(), "key by key while the run works")
	ptmx.WriteString("\x1b")
	<-escs

	release := k.hold()
	assert.True(t, canonical(), "a question has the terminal as it was")
	release()
	ptmx.WriteString("more\r")
	assert.Equal(t, "more", <-lines)
	ptmx.WriteString("half")
	// Esc after the text shows the text was read.
	ptmx.WriteString("\x1b")
	<-escs
	assert.Equal(t, "half", stop())
	assert.True(t, canonical(), "the terminal is as it was after the run")
	assert.Contains(t, out.String(), "> use staging\n")

	// A line reader waiting for a line keeps the terminal as it is.
	busy := newRawKeys(tty, &output{w: &out}, func() bool { return true })
	defer busy.close()
	stop = busy.start(func(s string) { lines <- s }, func() {})
	release = busy.hold()
	release()
	assert.True(t, canonical())
	stop()
}
