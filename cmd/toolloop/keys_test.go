package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineEditor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		chunks  []string
		lines   []string
		escs    int
		partial string
		echo    string
	}{
		{"a line", []string{"use staging\r"}, []string{"use staging"}, 0, "", "> use staging\n"},
		{"a line in pieces", []string{"use ", "staging", "\n"}, []string{"use staging"}, 0, "", ""},
		{"blank lines are not sent", []string{"\r", "   \r"}, nil, 0, "", ""},
		{"backspace", []string{"abd\x7f\x7fc\r"}, []string{"ac"}, 0, "", "> abd\b \b\b \bc\n"},
		{"backspace erases a whole character", []string{"né\x7f\x08e\r"}, []string{"e"}, 0, "", ""},
		{"ctrl-u erases the line", []string{"wrong\x15right\r"}, []string{"right"}, 0, "", ""},
		{"ctrl-w erases a word", []string{"use prod  \x17staging\r"}, []string{"use staging"}, 0, "", ""},
		{"a tab is a space", []string{"a\tb\r"}, []string{"a b"}, 0, "", ""},
		{"control keys are ignored", []string{"a\x04\x01b\r"}, []string{"ab"}, 0, "", ""},
		{"a lone Esc interrupts", []string{"\x1b"}, nil, 1, "", ""},
		{"Esc after text keeps the text", []string{"half", "\x1b"}, nil, 1, "half", ""},
		{"arrows are not Esc", []string{"a\x1b[A\x1b[1;5Cb\x1bOP\r"}, []string{"ab"}, 0, "", ""},
		{"alt and a key is not Esc", []string{"\x1bx"}, nil, 0, "", ""},
		{"two lines in one read", []string{"one\rtwo\r"}, []string{"one", "two"}, 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			var lines []string
			escs := 0
			ed := &lineEditor{out: &output{w: &b}, line: func(s string) { lines = append(lines, s) }, esc: func() { escs++ }}
			for _, c := range tc.chunks {
				ed.feed([]byte(c))
			}
			assert.Equal(t, tc.lines, lines)
			assert.Equal(t, tc.escs, escs)
			assert.Equal(t, tc.partial, string(ed.buf))
			if tc.echo != "" {
				assert.Equal(t, tc.echo, b.String())
			}
		})
	}
}

// TestEditorStartsItsOwnLine: typing while the model's text streams starts
// a line of its own, and the text typed shows again after a question.
func TestEditorStartsItsOwnLine(t *testing.T) {
	var b bytes.Buffer
	out := &output{w: &b}
	ed := &lineEditor{out: out, line: func(string) {}, esc: func() {}}
	out.Write([]byte("The model is wri"))
	ed.feed([]byte("stop"))
	out.Write([]byte("\n? a question\n"))
	ed.redraw()
	ed.feed([]byte("!\r"))
	assert.Equal(t, "The model is wri\n> stop\n? a question\n> stop!\n", b.String())
}

// TestLineKeys: lines read while a run works go to the run; a hold gives
// the next line to a question; stop leaves a line asked for to the next
// reader (the prompt).
func TestLineKeys(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	lr := newLineReader(r)
	defer lr.close()
	k := newLineKeys(lr)
	got := make(chan string, 4)
	stop := k.start(func(s string) { got <- s }, func() {})
	_, err = w.WriteString("use staging\n")
	require.NoError(t, err)
	assert.Equal(t, "use staging", <-got)

	release := k.hold()
	_, err = w.WriteString("y\n")
	require.NoError(t, err)
	answer, err := lr.readLine(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, "y", answer, "the question has the line")
	release()
	release() // a second release does nothing
	_, err = w.WriteString("then this\n")
	require.NoError(t, err)
	assert.Equal(t, "then this", <-got)

	assert.Empty(t, stop())
	_, err = w.WriteString("next prompt\n")
	require.NoError(t, err)
	line, err := lr.readLine(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, "next prompt", line)
	select {
	case s := <-got:
		t.Fatalf("a line went to the run after it ended: %q", s)
	case <-time.After(10 * time.Millisecond):
	}

	// The input ends during a run: the next read says so at once.
	stop = k.start(func(s string) { got <- s }, func() {})
	w.Close()
	stop()
	_, err = lr.readLine(t.Context(), nil)
	require.Error(t, err)
	_, err = lr.readLine(t.Context(), nil)
	require.Error(t, err, "the end of the input is kept")
}
