package sanitize

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file finds what a model could read as an envelope's delimiter. Text
// is read as a sequence of units: a character, or an escape that stands for
// one (JSON and JavaScript \u, \x and octal escapes, HTML character
// references, URL percent-encoding). Each unit folds to the delimiter
// characters it reads as: look-alikes (fold_table.go) to their ASCII,
// spaces to " ", dashes to "-", characters a reader does not see (zero
// width, bidi controls, combining marks, variation selectors) to nothing,
// and everything else to other.
//
// A delimiter, after folding, is a "<", then any run of spaces, "/" and
// "\", then the letters and digits of the tag's name, each pair of them
// with any run of spaces, "-", "_" and "." between. A letter that some
// rune reads as either of a pair (foldAlike: ſ is s or f, Ｉ is i or l)
// matches the other. What follows the name does not matter, so
// "</untrusted-data-x7k>" and "<untrusted-data source=..." both count.

// foldRun folds the runes lo..hi: each to to, or, if inc, each to the
// ASCII letter or digit to[0]+(r-lo).
type foldRun struct {
	lo, hi rune
	to     string
	inc    bool
}

// other is the fold of a character that is none of a delimiter's.
const other = "\x00"

// replacement is what an opener that begins a delimiter becomes: U+FFFD,
// which is not "<", a space, a letter or anything a reader could take
// for one, and which JSON strings hold as is.
const replacement = "\uFFFD"

// ascii is every ASCII character, for one-byte strings without allocating.
var ascii = func() string {
	var b [128]byte
	for i := range b {
		b[i] = byte(i)
	}
	return string(b[:])
}()

// asciiFold is the fold of each ASCII character.
var asciiFold = func() (f [128]string) {
	for c := range 128 {
		switch {
		case 'A' <= c && c <= 'Z':
			f[c] = ascii[c+'a'-'A' : c+'a'-'A'+1]
		case c == ' ' || '\t' <= c && c <= '\r':
			f[c] = " "
		case c < ' ' || c == 0x7f:
			f[c] = "" // control characters: not seen
		default:
			f[c] = ascii[c : c+1]
		}
	}
	return f
}()

// openers are the runes outside ASCII that fold to "<", sorted, and stop
// marks the bytes where the search for an opener must look closer: the
// ASCII that can start one ("<" and the escapes) and the first bytes of
// the UTF-8 of every opener.
var openers, stop = func() ([]rune, [256]bool) {
	var rs []rune
	for _, run := range foldTable {
		if run.to == "<" {
			for r := run.lo; r <= run.hi; r++ {
				rs = append(rs, r)
			}
		}
	}
	rs = append(rs, tagBase+'<') // the tag character for "<"
	slices.Sort(rs)
	var stop [256]bool
	for _, c := range []byte("<&\\%") {
		stop[c] = true
	}
	var buf [utf8.UTFMax]byte
	for _, r := range rs {
		utf8.EncodeRune(buf[:], r)
		stop[buf[0]] = true
	}
	return rs, stop
}()

// letterSet is a set of ASCII bytes.
type letterSet [2]uint64

func (s *letterSet) has(c byte) bool { return c < utf8.RuneSelf && s[c>>6]&(1<<(c&63)) != 0 }

func (s *letterSet) add(c byte) { s[c>>6] |= 1 << (c & 63) }

// reads returns the folded characters that read as the tag's letter or
// digit t: t, and the other of each pair of foldAlike it is in.
func reads(t byte) letterSet {
	var set letterSet
	set.add(t)
	for _, pair := range foldAlike {
		switch t {
		case pair[0]:
			set.add(pair[1])
		case pair[1]:
			set.add(pair[0])
		}
	}
	return set
}

// tagBase is where the tag characters, invisible copies of ASCII that
// some models read as the ASCII, begin.
const tagBase = 0xE0000

// foldRune returns the delimiter characters r reads as: "" for a rune a
// reader does not see, other for one that is none of them.
func foldRune(r rune) string {
	if r < utf8.RuneSelf {
		return asciiFold[r]
	}
	switch {
	case r >= tagBase+' ' && r <= tagBase+'~':
		return asciiFold[r-tagBase]
	case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
		return " "
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc, unicode.Cf, unicode.Cc,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector):
		return ""
	}
	if i, ok := slices.BinarySearchFunc(foldTable[:], r, func(run foldRun, r rune) int {
		switch {
		case run.hi < r:
			return -1
		case run.lo > r:
			return 1
		}
		return 0
	}); ok {
		run := &foldTable[i]
		if run.inc {
			c := run.to[0] + byte(r-run.lo)
			return ascii[c : c+1]
		}
		return run.to
	}
	if unicode.Is(unicode.Pd, r) {
		return "-"
	}
	return other
}

// unit returns the fold of the unit that starts at s[i] and its length.
func unit(s string, i int) (string, int) {
	r, n := decode(s, i)
	return foldRune(r), n
}

// decode returns the rune the unit that starts at s[i] stands for and its
// length. A run of backslashes that escapes nothing stands for one "\",
// and a byte that is not UTF-8 for U+FFFD.
func decode(s string, i int) (rune, int) {
	c := s[i]
	if c >= utf8.RuneSelf {
		return utf8.DecodeRuneInString(s[i:])
	}
	var r rune
	n := 0
	switch c {
	case '\\':
		if r, n = backslashEscape(s[i:]); n == 0 {
			n = 1
			for i+n < len(s) && s[i+n] == '\\' {
				n++
			}
			return '\\', n
		}
	case '&':
		r, n = charRef(s[i:])
	case '%':
		r, n = percent(s[i:])
	}
	if n == 0 {
		return rune(c), 1
	}
	return r, n
}

// isOpener reports whether r folds to "<".
func isOpener(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '<'
	}
	_, ok := slices.BinarySearch(openers, r)
	return ok
}

// backslashEscape decodes the escape at the start of s, after a run of
// backslashes of any length (an escape escaped again stays one to a
// reader): \u and \U, \u{...}, \x, three octal digits, and \/. It returns
// n == 0 if there is none.
func backslashEscape(s string) (r rune, n int) {
	n = 1
	for n < len(s) && s[n] == '\\' {
		n++
	}
	if n >= len(s) {
		return 0, 0
	}
	rest := s[n:]
	switch c := rest[0]; {
	case c == '/':
		return '/', n + 1
	case c == 'u' && len(rest) > 1 && rest[1] == '{':
		if end := strings.IndexByte(rest[:min(len(rest), 9)], '}'); end > 2 {
			if v, ok := parseHex(rest[2:end]); ok {
				return validRune(v), n + end + 1
			}
		}
	case c == 'u' || c == 'U' || c == 'x':
		digits := 2
		switch c {
		case 'u':
			digits = 4
		case 'U':
			digits = 8
		}
		if len(rest) > digits {
			if v, ok := parseHex(rest[1 : 1+digits]); ok {
				n += 1 + digits
				if c == 'u' && v >= 0xD800 && v < 0xDC00 {
					// A high surrogate: with a low one after it, one rune.
					if lo, m := lowSurrogate(s[n:]); m > 0 {
						return 0x10000 + (v-0xD800)<<10 + (lo - 0xDC00), n + m
					}
				}
				return validRune(v), n
			}
		}
	case '0' <= c && c <= '3':
		if len(rest) >= 3 && isOctal(rest[1]) && isOctal(rest[2]) {
			return rune(c-'0')<<6 | rune(rest[1]-'0')<<3 | rune(rest[2]-'0'), n + 3
		}
	}
	return 0, 0
}

// lowSurrogate decodes a \uDC00 to \uDFFF escape at the start of s.
func lowSurrogate(s string) (rune, int) {
	n := 0
	for n < len(s) && s[n] == '\\' {
		n++
	}
	if n == 0 || len(s) < n+5 || s[n] != 'u' {
		return 0, 0
	}
	v, ok := parseHex(s[n+1 : n+5])
	if !ok || v < 0xDC00 || v >= 0xE000 {
		return 0, 0
	}
	return v, n + 5
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// validRune returns v, or U+FFFD if v is no Unicode scalar value.
func validRune(v rune) rune {
	if !utf8.ValidRune(v) {
		return utf8.RuneError
	}
	return v
}

func parseHex(s string) (rune, bool) {
	if s == "" {
		return 0, false
	}
	var v rune
	for i := 0; i < len(s); i++ {
		d := unhex(s[i])
		if d < 0 {
			return 0, false
		}
		if v < 0x110000 {
			v = v<<4 | rune(d)
		}
	}
	return v, true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// charRefs are the HTML named character references for a delimiter's
// characters and their look-alikes, and for characters a reader does
// not see.
var charRefs = map[string]rune{
	"lt": '<', "LT": '<', "Lt": 0x226A, "lsaquo": 0x2039, "laquo": 0xAB, "lang": 0x27E8,
	"langle": 0x27E8, "LeftAngleBracket": 0x27E8, "le": 0x2264, "leq": 0x2264, "les": 0x2A7D,
	"sol": '/', "frasl": 0x2044, "bsol": '\\', "setminus": 0x2216, "setmn": 0x2216,
	"hyphen": 0x2010, "dash": 0x2010, "minus": 0x2212, "ndash": 0x2013, "mdash": 0x2014,
	"horbar": 0x2015, "lowbar": '_', "UnderBar": '_', "period": '.',
	"nbsp": 0xA0, "NonBreakingSpace": 0xA0, "ensp": 0x2002, "emsp": 0x2003, "emsp13": 0x2004,
	"emsp14": 0x2005, "numsp": 0x2007, "puncsp": 0x2008, "thinsp": 0x2009, "ThinSpace": 0x2009,
	"hairsp": 0x200A, "VeryThinSpace": 0x200A, "MediumSpace": 0x205F, "Tab": '\t', "NewLine": '\n',
	"shy": 0xAD, "zwj": 0x200D, "zwnj": 0x200C, "lrm": 0x200E, "rlm": 0x200F,
	"ZeroWidthSpace": 0x200B, "NoBreak": 0x2060, "af": 0x2061, "ApplyFunction": 0x2061,
	"it": 0x2062, "InvisibleTimes": 0x2062, "ic": 0x2063, "InvisibleComma": 0x2063,
}

// maxCharRef is the length of the longest name in charRefs.
const maxCharRef = len("LeftAngleBracket")

// charRef decodes the HTML character reference at the start of s, after
// any number of "amp;" (a reference escaped again): &#60; &#x3c; &lt; and
// the names in charRefs, with or without the ";". It returns n == 0 if
// there is none.
func charRef(s string) (r rune, n int) {
	n = 1
	for strings.HasPrefix(s[n:], "amp;") {
		n += len("amp;")
	}
	rest := s[n:]
	switch {
	case strings.HasPrefix(rest, "#x") || strings.HasPrefix(rest, "#X"):
		end := 2
		for end < len(rest) && unhex(rest[end]) >= 0 {
			end++
		}
		if v, ok := parseHex(rest[2:end]); ok {
			return validRune(v), n + end + semicolon(rest[end:])
		}
	case strings.HasPrefix(rest, "#"):
		end := 1
		var v rune
		for end < len(rest) && '0' <= rest[end] && rest[end] <= '9' {
			if v < 0x110000 {
				v = v*10 + rune(rest[end]-'0')
			}
			end++
		}
		if end > 1 {
			return validRune(v), n + end + semicolon(rest[end:])
		}
	default:
		// The longest name that starts rest, as HTML reads "&ltx" as "<x".
		end := 0
		for end < len(rest) && end < maxCharRef && isAlnumByte(rest[end]) {
			end++
		}
		for ; end >= 2; end-- {
			if v, ok := charRefs[rest[:end]]; ok {
				return v, n + end + semicolon(rest[end:])
			}
		}
	}
	return 0, 0
}

func semicolon(s string) int {
	if s != "" && s[0] == ';' {
		return 1
	}
	return 0
}

func isAlnumByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// percent decodes the URL percent-encoding at the start of s: one ASCII
// byte, the bytes of one UTF-8 character, or %uXXXX; a byte that begins
// no UTF-8 character is U+FFFD. It returns n == 0 if there is none.
func percent(s string) (r rune, n int) {
	if len(s) >= 6 && (s[1] == 'u' || s[1] == 'U') {
		if v, ok := parseHex(s[2:6]); ok {
			return validRune(v), 6
		}
	}
	var buf [utf8.UTFMax]byte
	k := 0
	for k < len(buf) && len(s) >= n+3 && s[n] == '%' {
		hi, lo := unhex(s[n+1]), unhex(s[n+2])
		if hi < 0 || lo < 0 {
			break
		}
		buf[k] = byte(hi<<4 | lo)
		if k == 0 && buf[0] < utf8.RuneSelf {
			return rune(buf[0]), 3
		}
		k++
		n += 3
		if utf8.FullRune(buf[:k]) {
			if r, size := utf8.DecodeRune(buf[:k]); size == k && r != utf8.RuneError {
				return r, n
			}
			break
		}
	}
	if n == 0 {
		return 0, 0
	}
	return utf8.RuneError, 3
}

// matcher finds the delimiters of one tag name.
type matcher struct {
	// name holds, for each of the tag's letters and digits, folded, the
	// folded characters that read as it (see reads).
	name []letterSet
}

func newMatcher(tag string) matcher {
	var m matcher
	for i := 0; i < len(tag); {
		f, n := unit(tag, i)
		i += n
		for j := 0; j < len(f); j++ {
			if c := f[j]; 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
				m.name = append(m.name, reads(c))
			}
		}
	}
	return m
}

// continues reports whether s[j:], after an opener that ends at j, reads
// as the rest of a delimiter, or could once more text follows it.
func (m *matcher) continues(s string, j int) bool {
	k := 0
	for j < len(s) {
		f, n := unit(s, j)
		j += n
		for i := 0; i < len(f); i++ {
			switch c := f[i]; {
			case k == 0 && (c == ' ' || c == '/' || c == '\\'):
			case k > 0 && (c == ' ' || c == '-' || c == '_' || c == '.'):
			case m.name[k].has(c):
				if k++; k == len(m.name) {
					return true
				}
			default:
				return false
			}
		}
	}
	return true
}

// spans appends to dst the start and end of each unit of s that folds to
// "<" and begins a delimiter, in order.
func (m *matcher) spans(s string, dst [][2]int) [][2]int {
	for i := 0; i < len(s); {
		for i < len(s) && !stop[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		r, n := decode(s, i)
		opener := isOpener(r)
		if opener && m.continues(s, i+n) {
			dst = append(dst, [2]int{i, i + n})
		}
		i += n
	}
	return dst
}

// neutralize returns s with the opener of each delimiter in it replaced.
func (m *matcher) neutralize(s string) string {
	var buf [8][2]int
	spans := m.spans(s, buf[:0])
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(spans)*len(replacement))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(replacement)
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// neutralizeAll neutralizes parts as the one text they make when a model
// reads them one after the other, so that no delimiter can be split
// across two of them. It reads them both run together and with a line
// break between each two, as providers show blocks either way: "&#x3c"
// then "a..." reads as "<" in one and not in the other. An opener split
// across parts is replaced in the first and dropped from the rest.
// Unchanged parts keep their strings.
func (m *matcher) neutralizeAll(parts []string) []string {
	if len(parts) == 1 {
		return []string{m.neutralize(parts[0])}
	}
	joined := strings.Join(parts, "")
	spans := m.spans(joined, nil)
	starts := make([]int, len(parts)+1) // of each part in joined, then the end
	for p, part := range parts {
		starts[p+1] = starts[p] + len(part)
	}
	// No unit holds a line break, so each span of the second reading lies
	// in one part p, p bytes later than in joined.
	for _, sp := range m.spans(strings.Join(parts, "\n"), nil) {
		p := sort.Search(len(parts), func(p int) bool { return starts[p+1]+p > sp[0] })
		spans = append(spans, [2]int{sp[0] - p, sp[1] - p})
	}
	out := slices.Clone(parts)
	if len(spans) == 0 {
		return out
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		if last := &merged[len(merged)-1]; sp[0] < last[1] {
			last[1] = max(last[1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	for p := range parts {
		start, end := starts[p], starts[p+1]
		var b strings.Builder
		last := start
		for _, sp := range merged {
			if sp[1] <= start || sp[0] >= end {
				continue
			}
			lo, hi := max(sp[0], start), min(sp[1], end)
			b.WriteString(joined[last:lo])
			if lo == sp[0] {
				b.WriteString(replacement)
			}
			last = hi
		}
		if last != start {
			b.WriteString(joined[last:end])
			out[p] = b.String()
		}
	}
	return out
}
