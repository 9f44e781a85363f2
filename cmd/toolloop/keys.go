package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/term"
)

// keys reads what the person types while a run works (see session.turn):
// each line typed goes to the run as a message, and Esc interrupts it.
type keys interface {
	// start reads until the returned stop is called: each line typed
	// (not blank) goes to line, and each Esc to esc, both called from a
	// goroutine of its own. stop returns the text typed after the last
	// line and not sent, if the keys can tell it.
	start(line func(string), esc func()) (stop func() string)
	// hold stops reading until release is called, so that a question or
	// an editor has the terminal as it was.
	hold() (release func())
	// restore puts the terminal back as it was, for a process about to
	// exit; it is safe to call at any time.
	restore()
	// close releases what the keys hold, after their last start.
	close()
}

// keysFor returns the keys of the session's input: at a terminal, its keys
// one by one where the system lets the terminal be read so (Esc then
// interrupts; the keys are echoed on out, or on stderr if stdout is not a
// terminal), or else its lines; without a terminal (scripted input), the
// lines of stdin. An env that says stdin is a terminal when it is not (a
// test's) gets none: typed-ahead answers could not be told from typing.
func keysFor(e *env, in *lineReader, out *output) keys {
	f, isFile := e.stdin.(*os.File)
	switch {
	case e.tty && isFile && term.IsTerminal(int(f.Fd())):
		echo := out
		if o, ok := e.stdout.(*os.File); !ok || !term.IsTerminal(int(o.Fd())) {
			echo = &output{w: e.stderr}
		}
		if k := newRawKeys(f, echo, in.busy); k != nil {
			return k
		}
		return newLineKeys(in)
	case e.tty:
		return nil
	}
	return newLineKeys(in)
}

// lineKeys reads lines from the line reader: stdin that is not a terminal,
// or a terminal that cannot be read key by key (no Esc there).
type lineKeys struct {
	in *lineReader

	mu   sync.Mutex
	cond sync.Cond
	// running: a run reads; holds counts the holds not released;
	// reading: the goroutine waits for a line, which cancel abandons.
	running bool
	holds   int
	reading bool
	cancel  context.CancelFunc
}

func newLineKeys(in *lineReader) *lineKeys {
	k := &lineKeys{in: in}
	k.cond.L = &k.mu
	return k
}

func (k *lineKeys) start(line func(string), _ func()) func() string {
	k.mu.Lock()
	k.running = true
	k.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.read(line)
	}()
	return func() string {
		k.mu.Lock()
		k.running = false
		if k.cancel != nil {
			k.cancel()
		}
		k.cond.Broadcast()
		k.mu.Unlock()
		<-done
		return ""
	}
}

// read passes the lines read to line until the run ends or the input
// does. A line asked for and not read when the run ends goes to the next
// reader of the line reader (the prompt).
func (k *lineKeys) read(line func(string)) {
	for {
		k.mu.Lock()
		for k.running && k.holds > 0 {
			k.cond.Wait()
		}
		if !k.running {
			k.mu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		k.reading, k.cancel = true, cancel
		k.mu.Unlock()
		s, err := k.in.readLine(ctx, nil)
		cancel()
		k.mu.Lock()
		k.reading, k.cancel = false, nil
		k.cond.Broadcast()
		k.mu.Unlock()
		switch {
		case err != nil && ctx.Err() != nil:
			continue // held or stopped
		case err != nil:
			return // the input ended
		case strings.TrimSpace(s) != "":
			line(s)
		}
	}
}

func (k *lineKeys) hold() func() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.holds++
	if k.cancel != nil {
		k.cancel()
	}
	for k.reading {
		k.cond.Wait()
	}
	return sync.OnceFunc(func() {
		k.mu.Lock()
		k.holds--
		k.cond.Broadcast()
		k.mu.Unlock()
	})
}

func (k *lineKeys) restore() {}
func (k *lineKeys) close()   {}

// output is stdout, shared by the printer and what the person types while
// a run works: one write at a time, and it knows whether the last line
// written is open.
type output struct {
	mu  sync.Mutex
	w   io.Writer
	mid bool
}

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.write(b)
}

func (o *output) write(b []byte) (int, error) {
	if len(b) > 0 {
		o.mid = b[len(b)-1] != '\n'
	}
	return o.w.Write(b)
}

// fresh writes s at the start of a line, ending the open one first.
func (o *output) fresh(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mid {
		o.write([]byte("\n"))
	}
	o.write([]byte(s))
}

// Stat is the writer's, so that the printer colours a terminal.
func (o *output) Stat() (os.FileInfo, error) {
	if f, ok := o.w.(interface{ Stat() (os.FileInfo, error) }); ok {
		return f.Stat()
	}
	return nil, errors.ErrUnsupported
}

// lineEditor turns keys into lines, echoing them: a line typed while the
// run's output goes on starts on a line of its own, after "> ".
// Backspace, Ctrl-U and Ctrl-W edit it; Enter sends it; a lone Esc
// interrupts; other escape sequences (arrows, function keys) and control
// keys are ignored.
type lineEditor struct {
	out  *output
	line func(string)
	esc  func()
	buf  []byte
}

func (ed *lineEditor) feed(b []byte) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == 0x1b:
			if i == len(b)-1 {
				ed.esc()
				continue
			}
			i = skipEscape(b, i)
		case c == '\r' || c == '\n':
			s := string(ed.buf)
			if len(ed.buf) > 0 {
				ed.echo("\n")
			}
			ed.buf = ed.buf[:0]
			if strings.TrimSpace(s) != "" {
				ed.line(s)
			}
		case c == 0x7f || c == 0x08: // Backspace
			ed.erase(1)
		case c == 0x15: // Ctrl-U
			ed.erase(utf8.RuneCount(ed.buf))
		case c == 0x17: // Ctrl-W
			ed.erase(utf8.RuneCount(ed.buf) - utf8.RuneCount(wordStart(ed.buf)))
		case c == '\t':
			ed.add(' ')
		case c < 0x20:
			// Ctrl-D and other control keys do nothing while a run works.
		default:
			ed.add(c)
		}
	}
}

func (ed *lineEditor) add(c byte) {
	if len(ed.buf) == 0 {
		ed.out.fresh("> ")
	}
	ed.buf = append(ed.buf, c)
	ed.echo(string(c))
}

// erase removes the last n characters.
func (ed *lineEditor) erase(n int) {
	var b strings.Builder
	for ; n > 0 && len(ed.buf) > 0; n-- {
		_, size := utf8.DecodeLastRune(ed.buf)
		ed.buf = ed.buf[:len(ed.buf)-size]
		b.WriteString("\b \b")
	}
	if b.Len() > 0 {
		ed.echo(b.String())
	}
}

// redraw shows the line being typed again, after a question.
func (ed *lineEditor) redraw() {
	if len(ed.buf) > 0 {
		ed.out.fresh("> " + string(ed.buf))
	}
}

func (ed *lineEditor) echo(s string) { ed.out.Write([]byte(s)) }

// wordStart returns b without its last word and the spaces after it.
func wordStart(b []byte) []byte {
	i := len(b)
	for i > 0 && b[i-1] == ' ' {
		i--
	}
	for i > 0 && b[i-1] != ' ' {
		i--
	}
	return b[:i]
}

// skipEscape returns the index of the last byte of the escape sequence
// that starts at b[i]: CSI (ESC [ ... final byte), SS3 (ESC O x), or ESC
// and one key (Alt+key).
func skipEscape(b []byte, i int) int {
	switch {
	case i+1 >= len(b):
		return i
	case b[i+1] == '[':
		j := i + 2
		for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
			j++
		}
		return min(j, len(b)-1)
	case b[i+1] == 'O':
		return min(i+2, len(b)-1)
	}
	return i + 1
}
