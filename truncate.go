package toolloop

import (
	"encoding/json"
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultMaxResultBytes is the default byte budget of one tool result.
const DefaultMaxResultBytes = 64 << 10

// TruncateText fits s into budget bytes. If s is longer, it keeps a head
// and a longer tail (errors are usually at the end) around a marker that
// says how much was cut, and never splits a UTF-8 character. Invalid UTF-8
// is replaced with U+FFFD first, so the result is always valid UTF-8 and at
// most budget bytes long.
func TruncateText(s string, budget int) string {
	budget = max(budget, 0)
	if utf8.ValidString(s) {
		if len(s) <= budget {
			return s
		}
		return cutMiddle(s, budget, len(s), 0)
	}
	// Repair only what can be kept: a head and a tail of at most budget
	// bytes each (the middle goes anyway), so a huge invalid output costs
	// no copy of itself. A replacement may make a byte three, so repairing
	// can also push a short output over the budget.
	hidden, total := 0, len(s)
	if len(s) > 2*budget {
		hidden = len(s) - 2*budget
		s = strings.ToValidUTF8(s[:budget], "\uFFFD") + strings.ToValidUTF8(s[len(s)-budget:], "\uFFFD")
	} else {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if hidden == 0 && len(s) <= budget {
		return s
	}
	return cutMiddle(s, budget, total, hidden)
}

// cutMiddle cuts the middle of s, valid UTF-8 longer than budget. The
// marker reports total bytes, of which hidden were already left out
// between the head and the tail of s.
func cutMiddle(s string, budget, total, hidden int) string {
	// Size the marker for the largest possible cut; the real one is no longer.
	marker := truncMarker(total, total)
	if budget < len(marker)+16 {
		return s[:runeFloor(s, budget)]
	}
	avail := budget - len(marker)
	headLen := runeFloor(s, avail*2/5)
	// Prefer whole lines when a line break is near the cut.
	if nl := strings.LastIndexByte(s[headLen/2:headLen], '\n'); nl >= 0 {
		headLen = headLen/2 + nl + 1
	}
	tailStart := runeCeil(s, len(s)-(avail-headLen))
	if nl := strings.IndexByte(s[tailStart:tailStart+(len(s)-tailStart)/2], '\n'); nl >= 0 {
		tailStart += nl + 1
	}
	cut := tailStart - headLen
	if hidden > 0 {
		// s is a repaired head and tail of a longer input: count what
		// was left of the input's own bytes. Repair can lengthen what is
		// kept, so this is at least hidden and less than total.
		cut = max(total-headLen-(len(s)-tailStart), hidden)
	}
	marker = truncMarker(cut, total)
	if headLen > 0 && s[headLen-1] == '\n' {
		marker = marker[1:] // the head already ends its line
	}
	var b strings.Builder
	b.Grow(headLen + len(marker) + len(s) - tailStart)
	b.WriteString(s[:headLen])
	b.WriteString(marker)
	b.WriteString(s[tailStart:])
	return b.String()
}

func truncMarker(cut, total int) string {
	return "\n[... " + strconv.Itoa(cut) + " of " + strconv.Itoa(total) +
		" bytes cut from the middle of this output ...]\n"
}

// runeFloor returns the largest i <= n that starts a rune of s.
func runeFloor(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// runeCeil returns the smallest i >= n that starts a rune of s.
func runeCeil(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return n
}

// contentBytes is the size of the blocks the budget applies to: text,
// JSON and resource text. Images and audio are not counted.
func contentBytes(cs []Content) int {
	n := 0
	for i := range cs {
		n += len(cs[i].Text) + len(cs[i].JSON)
	}
	return n
}

// TruncateContent fits the text and JSON blocks of cs into budget bytes
// in all, as the loop cuts every result: blocks smaller than their fair
// share keep everything and the large ones split what is left, text cut
// by [TruncateText], a JSON array or object keeping its leading items and
// saying how many it left out (other JSON is cut as text). Images, audio
// and other data are not counted. Text is made valid UTF-8 on the way. It
// returns cs itself when nothing had to change, and never modifies cs.
//
// Sources that can cut a result before it crosses a process boundary (a
// plugin, an MCP server adapter) use it so that what arrives is what the
// loop would have kept.
func TruncateContent(cs []Content, budget int) (out []Content, truncated bool) {
	return truncateContent(cs, budget)
}

// truncateContent is TruncateContent.
func truncateContent(cs []Content, budget int) (out []Content, truncated bool) {
	valid := validUTF8(cs)
	if valid && contentBytes(cs) <= budget {
		return cs, false
	}
	out = slices.Clone(cs)
	if !valid && contentBytes(cs) <= budget {
		// Small enough to repair whole; TruncateText repairs what it
		// keeps of larger blocks.
		for i := range out {
			out[i].Text = strings.ToValidUTF8(out[i].Text, "\uFFFD")
		}
		if contentBytes(out) <= budget {
			return out, false
		}
	}
	sizes := make([]int, len(out))
	for i := range out {
		sizes[i] = len(out[i].Text) + len(out[i].JSON)
	}
	shares := fairShares(sizes, budget)
	for i := range out {
		c := &out[i]
		if len(c.JSON) > 0 {
			if len(c.JSON) > shares[i] {
				c.JSON, c.Text, c.Type = truncateJSON(c.JSON, shares[i])
				if c.Type == "" {
					c.Type = ContentJSON
				}
				truncated = true
			}
			continue
		}
		if c.Text != "" {
			truncated = truncated || len(c.Text) > shares[i]
			c.Text = TruncateText(c.Text, shares[i])
		}
	}
	return out, truncated
}

func validUTF8(cs []Content) bool {
	for i := range cs {
		if !utf8.ValidString(cs[i].Text) {
			return false
		}
	}
	return true
}

// fairShares splits budget over blocks of the given sizes: small blocks get
// all they need and the large ones share the rest equally.
func fairShares(sizes []int, budget int) []int {
	shares := make([]int, len(sizes))
	idx := make([]int, 0, len(sizes))
	for i, s := range sizes {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return sizes[a] - sizes[b] })
	left := max(budget, 0)
	for k, i := range idx {
		fair := left / (len(idx) - k)
		shares[i] = min(sizes[i], fair)
		left -= shares[i]
	}
	return shares
}

// truncateJSON fits a JSON value into budget bytes. An array keeps its
// leading elements and ends with a note saying how many were left out; an
// object keeps its leading members and gains a "_truncated" member. Other
// values, or containers whose first item does not fit, fall back to text
// truncation of the JSON source, and the block becomes text.
func truncateJSON(raw json.RawMessage, budget int) (json.RawMessage, string, ContentType) {
	s := strings.TrimSpace(string(raw))
	if len(s) > 1 && (s[0] == '[' || s[0] == '{') {
		if out, ok := truncateContainer(s, budget); ok {
			return json.RawMessage(out), "", ContentJSON
		}
	}
	return nil, TruncateText(s, budget), ContentText
}

func truncateContainer(s string, budget int) (string, bool) {
	isObj := s[0] == '{'
	total := 0
	for range topLevel(s) {
		total++
	}
	note := func(kept int) string {
		msg := strconv.Quote(strconv.Itoa(total-kept) + " of " + strconv.Itoa(total) + " items cut to fit the output budget")
		if isObj {
			return `"_truncated":` + msg
		}
		return `{"_truncated":` + msg + `}`
	}
	var b strings.Builder
	b.WriteByte(s[0])
	kept, k := 0, -1
	for it := range topLevel(s) {
		k++
		need := b.Len() + len(it) + 1 // the item and the closing bracket
		if kept > 0 {
			need++ // the comma before the item
		}
		if k < total-1 {
			need += 1 + len(note(kept+1)) // a comma and the note, if more items follow
		}
		if need > budget {
			break
		}
		if kept > 0 {
			b.WriteByte(',')
		}
		b.WriteString(it)
		kept++
	}
	if kept == 0 {
		return "", false
	}
	if kept < total {
		b.WriteByte(',')
		b.WriteString(note(kept))
	}
	if isObj {
		b.WriteByte('}')
	} else {
		b.WriteByte(']')
	}
	out := b.String()
	return out, len(out) <= budget
}

// topLevel yields the elements of a JSON array, or the "key":value members
// of a JSON object, as substrings of s, which must be valid JSON. It holds
// none of them, so counting the items of a huge output costs nothing.
func topLevel(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		depth, start := 0, -1
		var str jsonString
		emit := func(i int) bool {
			it := strings.TrimSpace(s[start:i])
			start = -1
			return yield(it)
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if str.holds(c) {
				if depth == 1 && start < 0 {
					start = i // a string starts an item
				}
				continue
			}
			switch c {
			case '[', '{':
				depth++
				if depth == 2 && start < 0 {
					start = i
				}
			case ']', '}':
				if depth == 1 && start >= 0 && !emit(i) {
					return
				}
				depth--
			case ',':
				if depth == 1 && start >= 0 && !emit(i) {
					return
				}
			case ' ', '\t', '\n', '\r':
			default:
				if depth == 1 && start < 0 {
					start = i
				}
			}
		}
	}
}
