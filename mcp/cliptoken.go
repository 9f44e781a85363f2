package mcp

// The tokens of a message: strings, whole, cut in the middle or refused
// whole, and numbers and literals.

import (
	"bytes"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// copyString copies a string whose opening quote was read, whole.
func (c *clipper) copyString(k kind) error {
	if err := c.emit(k, '"'); err != nil {
		return err
	}
	for {
		buf, err := c.chunk()
		if err != nil {
			return err
		}
		i, end, err := c.span(buf)
		if err != nil {
			return err
		}
		if end {
			if err := c.emit(k, buf[:i+1]...); err != nil {
				return err
			}
			c.discard(i + 1)
			return nil
		}
		if i == 0 { // an escape: copy it whole, as it may escape a quote
			p, _ := c.in.Peek(2)
			if err := c.emit(k, p...); err != nil {
				return err
			}
			c.discard(2)
			continue
		}
		if err := c.emit(k, buf[:i]...); err != nil {
			return err
		}
		c.discard(i)
	}
}

// span returns how much of buf, the unread inside of a string, is plain
// text: up to the closing quote (end set) or the first backslash. When a
// backslash comes first (i == 0), the escaped byte is buffered too.
func (c *clipper) span(buf []byte) (i int, end bool, err error) {
	i = bytes.IndexByte(buf, '"')
	end = i >= 0
	if !end {
		i = len(buf)
	}
	if j := bytes.IndexByte(buf[:i], '\\'); j >= 0 {
		i, end = j, false
		if j == 0 {
			if _, err := c.in.Peek(2); err != nil {
				return 0, false, noEOF(err)
			}
		}
	}
	return i, end, nil
}

// skipString skips a string whose opening quote was read.
func (c *clipper) skipString() (err error) {
	_, err = c.measureString()
	return err
}

// measureString skips a string whose opening quote was read, returning
// its raw length.
func (c *clipper) measureString() (int64, error) {
	var n int64
	for {
		buf, err := c.chunk()
		if err != nil {
			return n, err
		}
		i, end, err := c.span(buf)
		if err != nil {
			return n, err
		}
		switch {
		case end:
			c.discard(i + 1)
			return n + int64(i), nil
		case i == 0:
			i = 2
		}
		c.discard(i)
		n += int64(i)
	}
}

func (c *clipper) expectSkip(want byte) error {
	b, err := c.peek()
	if err != nil {
		return noEOF(err)
	}
	if b != want {
		return syntaxErr("expected " + strconv.QuoteRune(rune(want)))
	}
	c.discard(1)
	return nil
}

// skipValue skips a value, checking little more than its nesting.
func (c *clipper) skipValue() error {
	depth := 0
	for {
		b, err := c.peek()
		if err != nil {
			return noEOF(err)
		}
		switch b {
		case '"':
			c.discard(1)
			if err := c.skipString(); err != nil {
				return err
			}
		case '{', '[':
			c.discard(1)
			if depth++; c.depth+depth > maxDepth {
				return syntaxErr("nested too deeply")
			}
		case '}', ']':
			if depth == 0 {
				return syntaxErr("unexpected " + strconv.QuoteRune(rune(b)))
			}
			c.discard(1)
			depth--
		case ',', ':':
			if depth == 0 {
				return syntaxErr("unexpected " + strconv.QuoteRune(rune(b)))
			}
			c.discard(1)
		default:
			if _, err := c.scalarBytes(); err != nil {
				return err
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

func isScalarByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b == '-' || b == '+' || b == '.' || b == 'E'
}

// scalarBytes reads a number or literal.
func (c *clipper) scalarBytes() ([]byte, error) {
	var s []byte
	for {
		b, err := c.in.ReadByte()
		if err == io.EOF && len(s) > 0 {
			return s, nil
		}
		if err != nil {
			return nil, noEOF(err)
		}
		if !isScalarByte(b) {
			_ = c.in.UnreadByte()
			if len(s) == 0 {
				return nil, syntaxErr("unexpected " + strconv.QuoteRune(rune(b)))
			}
			return s, nil
		}
		c.read++
		if s = append(s, b); len(s) > maxScalar {
			return nil, syntaxErr("a number or literal longer than " + strconv.Itoa(maxScalar) + " bytes")
		}
	}
}

func (c *clipper) scalar(k kind) error {
	s, err := c.scalarBytes()
	if err != nil {
		return err
	}
	if !validScalar(s) {
		return syntaxErr("invalid literal " + strconv.Quote(string(s)))
	}
	return c.emit(k, s...)
}

// validScalar reports whether s is true, false, null or a JSON number.
func validScalar(s []byte) bool {
	switch string(s) {
	case "true", "false", "null":
		return true
	}
	digits := func(i int) int {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return false
		}
	}
	return i == len(s)
}

// binary copies a block's base64 data whose opening quote was read, if it
// fits what is left of the binary limit; if not, the block is left out.
func (c *clipper) binary() error {
	if c.dropping {
		n, err := c.measureString()
		c.block.binDenied += n
		return err
	}
	start := len(c.out)
	c.out = append(c.out, '"')
	var n int64
	for {
		buf, err := c.chunk()
		if err != nil {
			return err
		}
		i, end, err := c.span(buf)
		if err != nil {
			return err
		}
		if !end && i == 0 {
			buf, _ = c.in.Peek(2)
			i = 2
		}
		if n += int64(i); n > int64(c.bin) && !c.dropping {
			c.dropping = true
			c.out = c.out[:c.block.mark]
		}
		c.appendRaw(buf[:i])
		c.discard(i)
		if end {
			c.discard(1)
			break
		}
	}
	if c.dropping {
		c.block.binDenied += n
		return nil
	}
	c.out = append(c.out, '"')
	c.bin -= int(n)
	c.rest -= len(c.out) - start - int(n) // the quotes
	return nil
}

// cutText copies a string whose opening quote was read, keeping no more
// than what is left of the text limit: its head (two fifths) and its tail
// around a marker, as [toolloop.TruncateText] cuts, never splitting a
// UTF-8 character or an escape. Sizes are of the decoded text.
func (c *clipper) cutText(k kind) error {
	if err := c.emit(kEnv, '"'); err != nil {
		return err
	}
	share := max(c.text-markerReserve, 0)
	headMax := share * 2 / 5
	c.tail.reset(share - headMax)
	headStart := len(c.out)
	var head, total int64
	nlAt, nlHead := -1, int64(0) // out offset and head size after the last newline of the head
	inTail := false
	var esc [12]byte
	var dec [utf8.UTFMax]byte
	for {
		buf, err := c.chunk()
		if err != nil {
			return err
		}
		i := 0
		for i < len(buf) && buf[i] != '"' && buf[i] != '\\' {
			i++
		}
		if i > 0 {
			p := buf[:i]
			total += int64(i)
			if !inTail {
				n := len(p)
				if head+int64(n) > int64(headMax) {
					n = runeFloor(p, int(int64(headMax)-head))
					for n < len(p) && n < 3 && !utf8.RuneStart(p[n]) {
						n++
					}
					inTail = true
				}
				c.appendRaw(p[:n])
				head += int64(n)
				p = p[n:]
			}
			c.tail.push(p)
			c.discard(i)
			continue
		}
		if buf[0] == '"' {
			c.discard(1)
			break
		}
		raw, r, err := c.escape(esc[:0])
		if err != nil {
			return err
		}
		d := dec[:utf8.EncodeRune(dec[:], r)]
		total += int64(len(d))
		if !inTail && head+int64(len(d)) <= int64(headMax) {
			c.appendRaw(raw)
			head += int64(len(d))
			if r == '\n' && !c.dropping {
				nlAt, nlHead = len(c.out), head
			}
			continue
		}
		inTail = true
		c.tail.push(d)
	}
	kept := head + int64(len(c.tail.buf))
	if c.tail.pushed <= int64(len(c.tail.buf)) {
		c.out = appendJSONText(c.out, c.tail.ordered(), c.dropping)
	} else {
		if nlAt >= 0 && nlAt-headStart >= (len(c.out)-headStart)/2 && !c.dropping {
			c.out, head = c.out[:nlAt], nlHead
		}
		tail := c.tail.ordered()
		s := 0
		for s < len(tail) && !utf8.RuneStart(tail[s]) {
			s++
		}
		if nl := bytes.IndexByte(tail[s:s+(len(tail)-s)/2], '\n'); nl >= 0 {
			s += nl + 1
		}
		kept = head + int64(len(tail)-s)
		marker := "\n[... " + strconv.FormatInt(total-kept, 10) + " of " + strconv.FormatInt(total, 10) +
			" bytes cut from the middle of this output ...]\n"
		if nlAt >= 0 && len(c.out) == nlAt {
			marker = marker[1:] // the head ends its line
		}
		c.out = appendJSONText(c.out, []byte(marker), c.dropping)
		c.out = appendJSONText(c.out, tail[s:], c.dropping)
		c.text -= len(marker)
	}
	c.text -= int(kept)
	if k == kText {
		c.block.textSeen = c.block.textSeen || total > 0
		c.block.textKept = c.block.textKept || kept > 0
	}
	return c.emit(kEnv, '"')
}

// escape reads an escape sequence (its backslash unread) into raw and
// decodes it. A surrogate pair is one sequence; a lone surrogate decodes
// to U+FFFD, as encoding/json decodes it.
func (c *clipper) escape(raw []byte) ([]byte, rune, error) {
	p, err := c.in.Peek(2)
	if err != nil {
		return nil, 0, noEOF(err)
	}
	var r rune
	switch p[1] {
	case '"', '\\', '/':
		r = rune(p[1])
	case 'b':
		r = '\b'
	case 'f':
		r = '\f'
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	case 'u':
		u, ok := c.hex4(0)
		if !ok {
			return nil, 0, syntaxErr("invalid \\u escape")
		}
		r = u
		n := 6
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
			if lo, ok := c.hex4(6); ok {
				if pair := utf16.DecodeRune(u, lo); pair != utf8.RuneError {
					r, n = pair, 12
				}
			}
		}
		p, _ = c.in.Peek(n)
		raw = append(raw, p...)
		c.discard(n)
		return raw, r, nil
	default:
		return nil, 0, syntaxErr("invalid escape " + strconv.Quote(string(p)))
	}
	raw = append(raw, p...)
	c.discard(2)
	return raw, r, nil
}

// hex4 decodes the \uXXXX escape at offset off of the unread input.
func (c *clipper) hex4(off int) (rune, bool) {
	p, err := c.in.Peek(off + 6)
	if err != nil || p[off] != '\\' || p[off+1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p[off+2:off+6]), 16, 16)
	return rune(v), err == nil
}

// appendJSONText appends s, UTF-8 text, to out as the inside of a JSON
// string, unless dropping.
func appendJSONText(out, s []byte, dropping bool) []byte {
	if dropping {
		return out
	}
	const hex = "0123456789abcdef"
	start := 0
	for i, b := range s {
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch b {
		case '"', '\\':
			out = append(out, '\\', b)
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
		}
		start = i + 1
	}
	return append(out, s[start:]...)
}

// runeFloor returns the largest i <= n that starts a rune of p.
func runeFloor(p []byte, n int) int {
	if n >= len(p) {
		return len(p)
	}
	for n > 0 && !utf8.RuneStart(p[n]) {
		n--
	}
	return max(n, 0)
}

// ring keeps the last bytes pushed into it, up to its size.
type ring struct {
	buf    []byte
	size   int
	w      int   // where the next byte goes, once full
	pushed int64 // bytes pushed since reset
}

func (r *ring) reset(size int) {
	r.buf, r.size, r.w, r.pushed = r.buf[:0], size, 0, 0
	if cap(r.buf) > 4*size+(64<<10) {
		r.buf = nil // do not hold on to a larger budget's buffer
	}
}

func (r *ring) push(p []byte) {
	r.pushed += int64(len(p))
	if r.size == 0 {
		return
	}
	if room := r.size - len(r.buf); room > 0 {
		n := min(room, len(p))
		r.buf = append(r.buf, p[:n]...)
		p = p[n:]
	}
	if len(p) >= r.size {
		copy(r.buf, p[len(p)-r.size:])
		r.w = 0
		return
	}
	for len(p) > 0 {
		n := copy(r.buf[r.w:], p)
		p = p[n:]
		r.w = (r.w + n) % r.size
	}
}

// ordered returns the kept bytes, oldest first.
func (r *ring) ordered() []byte {
	if r.w == 0 {
		return r.buf
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.w:]...)
	out = append(out, r.buf[:r.w]...)
	r.buf, r.w = out, 0
	return out
}
