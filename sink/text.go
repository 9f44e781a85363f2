package sink

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolloop/toolloop"
)

// Color says when a printer or a transcript formatter writes ANSI colour.
// The zero value is ColorAuto.
type Color int

// The colour modes.
const (
	// ColorAuto colours the output when the writer is a terminal (an
	// *os.File, or any writer with such a Stat method, whose mode is a
	// character device), the NO_COLOR environment variable is unset or
	// empty, and TERM is not "dumb". The environment is read once, when
	// the sink is made.
	ColorAuto Color = iota
	// ColorAlways colours the output whatever the writer is.
	ColorAlways
	// ColorNever never colours the output.
	ColorNever
)

// useColor resolves c for w.
func useColor(c Color, w io.Writer) bool {
	switch c {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}

// isTerminal reports whether w is a character device, as a terminal is.
// It uses only the standard library: *os.File has the Stat method.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// SGR codes the sinks use.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrCyan   = "36"
)

// palette writes styled text, or plain text when colour is off.
type palette struct{ on bool }

// add appends s, cleaned of anything that could drive a terminal, in the
// style sgr.
func (p palette) add(dst []byte, sgr, s string) []byte {
	if !p.on || sgr == "" || s == "" {
		return appendClean(dst, s)
	}
	dst = append(dst, "\x1b["...)
	dst = append(dst, sgr...)
	dst = append(dst, 'm')
	dst = appendClean(dst, s)
	return append(dst, "\x1b[0m"...)
}

// appendClean appends s with everything that could move the cursor,
// rewrite the screen or reorder what the reader sees made visible: C0
// controls become \xNN escapes (a tab stays a tab, a carriage return is
// dropped, a newline becomes a space: callers split lines first), DEL and
// C1 controls and the Unicode bidirectional and line-separator controls
// become escapes too, and invalid UTF-8 becomes U+FFFD. Tool output, model
// text and arguments are untrusted: an escape sequence in them must never
// reach the terminal.
func appendClean(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			j := i + 1
			for j < len(s) && s[j] >= 0x20 && s[j] < 0x7f {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '\t':
				dst = append(dst, '\t')
			case '\r':
			case '\n':
				dst = append(dst, ' ')
			default:
				dst = append(dst, `\x`...)
				dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, "\uFFFD"...)
		case unsafeRune(r):
			dst = append(dst, `\u`...)
			dst = append(dst, hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// unsafeRune reports the runes beyond ASCII that a terminal acts on or
// that change how a line reads: C1 controls, line and paragraph
// separators, and bidirectional embeddings, overrides and isolates.
func unsafeRune(r rune) bool {
	return r >= 0x80 && r < 0xa0 ||
		r == 0x2028 || r == 0x2029 ||
		r >= 0x202a && r <= 0x202e ||
		r >= 0x2066 && r <= 0x2069 ||
		r == 0x200e || r == 0x200f || r == 0x061c
}

// clip returns the longest prefix of s of at most n bytes that does not
// cut a rune, and the number of bytes left out. n < 0 means no limit.
func clip(s string, n int) (string, int) {
	if n < 0 || len(s) <= n {
		return s, 0
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], len(s) - i
}

// clipTail returns the longest suffix of s of at most n bytes that does
// not cut a rune.
func clipTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// lineScan is how far summaries look into a text for its first line and
// its number of lines: the work per event stays bounded whatever a tool
// returns.
const lineScan = 1 << 20

// firstLine returns the first line of s that is not blank, trimmed, and
// whether s holds anything besides it. It looks at most lineScan bytes
// into s.
func firstLine(s string) (string, bool) {
	rest := s
	if len(rest) > lineScan {
		rest = rest[:lineScan]
	}
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		if t := strings.TrimSpace(line); t != "" {
			return t, strings.TrimSpace(after) != "" || len(s) > lineScan
		}
		rest = after
	}
	return "", len(s) > lineScan
}

// moreLines describes what a one-line summary of s left out: "+N lines",
// or its size when s is too long to count.
func moreLines(s string) string {
	if len(s) > lineScan {
		return sizeOf(len(s))
	}
	n := strings.Count(strings.TrimRight(s, "\n \t"), "\n")
	if n <= 0 {
		return ""
	}
	if n == 1 {
		return "+1 line"
	}
	return "+" + strconv.Itoa(n) + " lines"
}

// sizeOf formats a byte count for people: 812 B, 12.3 KB, 4.1 MB.
func sizeOf(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " B"
	case n < 1000*1000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + " KB"
	case n < 1000*1000*1000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	}
	return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + " GB"
}

// argScan bounds how much of a call's arguments a summary parses.
const argScan = 64 << 10

// summarizeArgs renders a call's arguments on one line in at most about
// max bytes: the members of an object as key=value in the model's order,
// strings bare when they are one plain word and quoted otherwise, other
// values as compact JSON; anything else as compact JSON or, if it is not
// JSON, as a quoted string. The result is safe to print.
func summarizeArgs(raw json.RawMessage, max int) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "{}" || string(raw) == "null" {
		return ""
	}
	var b []byte
	full := true
	if raw[0] == '{' {
		b, full = objectSummary(raw, max)
	} else {
		b = jsonValue(nil, raw, max)
	}
	s, cut := clip(string(b), max)
	if cut > 0 || !full {
		s += "…"
	}
	return string(appendClean(nil, s))
}

// objectSummary renders the members of the JSON object raw as key=value
// pairs until the text passes max bytes. full is false when members were
// left out.
func objectSummary(raw json.RawMessage, max int) (b []byte, full bool) {
	src := raw
	if len(src) > argScan {
		src = src[:argScan]
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	if _, err := dec.Token(); err != nil {
		return jsonValue(nil, raw, max), true
	}
	for dec.More() {
		if len(b) > max {
			return b, false
		}
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return b, false
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, key...)
		b = append(b, '=')
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return b, false // a value longer than argScan
		}
		b = jsonValue(b, v, max)
	}
	return b, len(src) == len(raw)
}

// jsonValue appends a short rendering of the JSON value v: a plain word
// bare, another string quoted as Go quotes it (which escapes controls),
// anything else compact. Long strings are cut before they are quoted.
func jsonValue(dst []byte, v json.RawMessage, max int) []byte {
	if len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			s, cut := clip(s, max)
			if cut == 0 && plainWord(s) {
				return append(dst, s...)
			}
			q := strconv.Quote(s)
			if cut > 0 {
				q = q[:len(q)-1] + `…"`
			}
			return append(dst, q...)
		}
	}
	if len(v) > 2*max+16 {
		v = v[:2*max+16]
		return append(dst, v...)
	}
	var c bytes.Buffer
	if json.Compact(&c, v) == nil {
		return append(dst, c.Bytes()...)
	}
	if json.Valid(v) {
		return append(dst, v...)
	}
	return append(dst, strconv.Quote(string(v))...)
}

// plainWord reports whether s reads unambiguously without quotes: a
// path, a name. A string that reads as a JSON number, boolean or null is
// quoted, so "2" and 2 print differently.
func plainWord(s string) bool {
	if s == "" || s == "true" || s == "false" || s == "null" {
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("/._-:+@~,", r):
		default:
			return false
		}
	}
	return true
}

// contentSummary describes content that has no text: "[image image/png,
// 12.3 KB]", and so on. It is what a summary shows for a result whose
// Text is empty.
func contentSummary(cs []toolloop.Content) string {
	var parts []string
	for _, c := range cs {
		if d := blockLabel(c); d != "" {
			parts = append(parts, d)
		}
		if len(parts) == 3 {
			parts = append(parts, "…")
			break
		}
	}
	return strings.Join(parts, " ")
}

// blockLabel is a bracketed label for a block that is not text.
func blockLabel(c toolloop.Content) string {
	var b strings.Builder
	b.WriteString("[" + string(c.Type))
	if c.MIMEType != "" {
		b.WriteString(" " + c.MIMEType)
	}
	if c.URI != "" {
		u, cut := clip(c.URI, 120)
		if cut > 0 {
			u += "…"
		}
		b.WriteString(" " + u)
	}
	switch {
	case len(c.Data) > 0:
		b.WriteString(", " + sizeOf(len(c.Data)))
	case len(c.JSON) > 0:
		b.WriteString(", " + sizeOf(len(c.JSON)))
	case c.Type == toolloop.ContentText || c.Type == toolloop.ContentReasoning:
		if c.Text == "" {
			return ""
		}
		b.WriteString(", " + sizeOf(len(c.Text)))
	}
	b.WriteString("]")
	return b.String()
}

// exitCode returns a result's exit code, as a shell tool reports it in
// Meta.Extra["exit_code"], if it has one that is an integer (as the tool
// set it, or as decoded from JSON).
func exitCode(r *toolloop.ToolResult) (int64, bool) {
	if r == nil {
		return 0, false
	}
	switch c := r.Meta.Extra["exit_code"].(type) {
	case int:
		return int64(c), true
	case int64:
		return c, true
	case float64:
		if c == math.Trunc(c) && math.Abs(c) < 1<<53 {
			return int64(c), true
		}
	case json.Number:
		n, err := c.Int64()
		return n, err == nil
	}
	return 0, false
}
