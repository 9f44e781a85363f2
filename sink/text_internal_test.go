package sink

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ColorAuto colours a terminal only, and never with NO_COLOR set or a
// dumb terminal. /dev/null is a character device, as a terminal is.
func TestUseColor(t *testing.T) {
	dev, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no", os.DevNull)
	}
	t.Cleanup(func() { _ = dev.Close() })
	fi, err := dev.Stat()
	require.NoError(t, err)
	if fi.Mode()&os.ModeCharDevice == 0 {
		t.Skip(os.DevNull, "is not a character device here")
	}
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = file.Close() })

	cases := []struct {
		name     string
		noColor  string
		term     string
		c        Color
		terminal bool
		want     bool
	}{
		{"terminal", "", "xterm", ColorAuto, true, true},
		{"file", "", "xterm", ColorAuto, false, false},
		{"NO_COLOR", "1", "xterm", ColorAuto, true, false},
		{"dumb terminal", "", "dumb", ColorAuto, true, false},
		{"always beats NO_COLOR", "1", "dumb", ColorAlways, false, true},
		{"never", "", "xterm", ColorNever, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", c.noColor)
			t.Setenv("TERM", c.term)
			w := file
			if c.terminal {
				w = dev
			}
			assert.Equal(t, c.want, useColor(c.c, w))
		})
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	assert.False(t, useColor(ColorAuto, &bytes.Buffer{}), "not a file")
}

func TestAppendClean(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"tab\tkept", "tab\tkept"},
		{"crlf\r\n", "crlf "},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"bell\x07 nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`},
		{"c1 \u009b2J", `c1 \u009b2J`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f", `bidi \u202eevil\u202c \u2066x\u2069 \u200f`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8"},
		{"héllo wörld ✓ 日本", "héllo wörld ✓ 日本"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, string(appendClean(nil, c.in)), "%q", c.in)
	}
}

func TestClip(t *testing.T) {
	s, cut := clip("héllo", 2)
	assert.Equal(t, "h", s)
	assert.Equal(t, 5, cut)
	s, cut = clip("héllo", 3)
	assert.Equal(t, "hé", s)
	assert.Equal(t, 3, cut)
	s, cut = clip("abc", -1)
	assert.Equal(t, "abc", s)
	assert.Zero(t, cut)
	assert.Equal(t, "lo", clipTail("héllo", 2))
	assert.Equal(t, "llo", clipTail("héllo", 4))
}
