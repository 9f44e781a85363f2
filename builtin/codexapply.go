package builtin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/toolloop/toolloop"
)

// applyEnvelope applies an envelope patch all or none: every operation
// is worked out in memory, in order, and only when all of them apply are
// the files written, through the same commit as unified diffs.
func (w *workspace) applyEnvelope(ctx context.Context, e *envelope) (*toolloop.ToolResult, error) {
	ops, err := e.parse()
	if err != nil {
		return nil, invalid("%v; nothing was changed", err)
	}
	set := newPatchSet(w)
	var notes []string
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := w.applyEnvOp(ctx, set, op)
		if err != nil {
			return nil, patchErr(i, op.header(), err)
		}
		notes = append(notes, n...)
	}
	return set.commit(notes)
}

// applyEnvOp works out one file operation in set.
func (w *workspace) applyEnvOp(ctx context.Context, set *patchSet, op *envOp) ([]string, error) {
	switch op.kind {
	case envAddFile:
		dst, err := set.load(op.path, false)
		if err != nil {
			return nil, err
		}
		if dst.exists {
			return nil, invalid("the file already exists; use %q to change it, or delete it earlier in the same patch", envUpdate+" "+op.path)
		}
		var data []byte
		if len(op.add) > 0 {
			data = []byte(strings.Join(op.add, "\n") + "\n")
		}
		if err := w.checkSize(data); err != nil {
			return nil, err
		}
		dst.exists, dst.data = true, data
		dst.verbs = append(dst.verbs, "created")
		return nil, nil
	case envDeleteFile:
		src, err := set.load(op.path, false)
		if err != nil {
			return nil, err
		}
		if !src.exists {
			return nil, invalid("the file does not exist")
		}
		src.exists, src.data = false, nil
		src.verbs = append(src.verbs, "deleted")
		return nil, nil
	}
	src, err := set.load(op.path, true)
	if err != nil {
		return nil, err
	}
	if !src.exists {
		return nil, invalid("the file does not exist; use %q to create it", envAdd+" "+op.path)
	}
	out, notes := src.data, []string(nil)
	if len(op.chunks) > 0 {
		if out, notes, err = applyChunks(ctx, src.data, op.chunks); err != nil {
			return nil, err
		}
	}
	if err := w.checkSize(out); err != nil {
		return nil, err
	}
	dst := src
	if op.moveTo != "" {
		if dst, err = set.load(op.moveTo, false); err != nil {
			return nil, err
		}
		if dst != src && dst.exists {
			return nil, invalid("it moves the file to %s, which already exists", op.moveTo)
		}
	}
	if dst == src {
		src.data = out
		src.verbs = append(src.verbs, "modified")
	} else {
		src.exists, src.data = false, nil
		src.verbs = append(src.verbs, "moved to "+quoteName(op.moveTo))
		dst.exists, dst.data = true, out
		dst.change.perm = src.change.perm
		dst.verbs = append(dst.verbs, "moved from "+quoteName(op.path))
	}
	return prefixAll(op.path+": ", notes), nil
}

// checkSize refuses content larger than the workspace's file limit.
func (w *workspace) checkSize(data []byte) error {
	if int64(len(data)) > w.opts.MaxFileBytes {
		return invalid("the file would be %d bytes after the patch, more than the %d-byte limit", len(data), w.opts.MaxFileBytes)
	}
	return nil
}

// fuzz is how loosely a hunk's lines matched the file's. Each level is
// tried over the whole rest of the file before the next, looser one.
type fuzz int

const (
	fuzzExact    fuzz = iota
	fuzzTrailing      // trailing whitespace ignored
	fuzzSpace         // leading and trailing whitespace ignored
	fuzzPunct         // and Unicode dashes, quotes and spaces taken as ASCII
	fuzzLoose         // an @@ line matched the start, or else a part, of a file line
	fuzzLevels   = fuzzPunct + 1
)

// fuzzNames say how a hunk matched, for the result. @@ lines are only
// signposts, and are matched as loosely as needed without a word.
var fuzzNames = [...]string{
	fuzzTrailing: "ignoring trailing whitespace",
	fuzzSpace:    "ignoring leading and trailing whitespace",
	fuzzPunct:    "ignoring whitespace and taking Unicode dashes, quotes and spaces as their ASCII forms",
}

// normalize returns s as compared at level l.
func normalize(s string, l fuzz) string {
	switch l {
	case fuzzExact:
		return s
	case fuzzTrailing:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case fuzzSpace:
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(strings.Map(asciiPunct, s))
}

// asciiPunct maps the Unicode punctuation that models and word processors
// put in place of ASCII to its ASCII form.
func asciiPunct(r rune) rune {
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return '"'
	case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	return r
}

// matcher finds runs of lines in a file, at decreasing strictness. The
// file's lines are normalized once per level, when a level is first
// needed.
type matcher struct {
	ctx  context.Context
	norm [fuzzLevels][]string
}

func newMatcher(ctx context.Context, keys []string) *matcher {
	m := &matcher{ctx: ctx}
	m.norm[fuzzExact] = keys
	return m
}

func (m *matcher) level(l fuzz) []string {
	if m.norm[l] == nil {
		keys := m.norm[fuzzExact]
		n := make([]string, len(keys))
		for i, k := range keys {
			n[i] = normalize(k, l)
		}
		m.norm[l] = n
	}
	return m.norm[l]
}

// seek returns where the lines want start in the file, at from or after,
// and how loosely they matched; -1 if nowhere (or the context ended).
// With eof, a match that ends the file is preferred. With anchor (one
// line, from an @@ line), a file line that starts with it, and then one
// that holds it, match last.
func (m *matcher) seek(want []string, from int, eof, anchor bool) (int, fuzz) {
	total := len(m.norm[fuzzExact])
	n := len(want)
	if n == 0 || n > total-from {
		return -1, 0
	}
	wants := make([][]string, fuzzLevels)
	for l := range fuzzLevels {
		wants[l] = make([]string, n)
		for i, s := range want {
			wants[l][i] = normalize(s, l)
		}
	}
	if eof && total-n >= from {
		for l := range fuzzLevels {
			if slices.Equal(m.level(l)[total-n:], wants[l]) {
				return total - n, l
			}
		}
	}
	for l := range fuzzLevels {
		hay, w := m.level(l), wants[l]
		for i := from; i+n <= total; i++ {
			if i&0xfff == 0 && m.ctx.Err() != nil {
				return -1, 0
			}
			if hay[i] == w[0] && slices.Equal(hay[i+1:i+n], w[1:]) {
				return i, l
			}
		}
	}
	if a := wants[fuzzPunct][0]; anchor && a != "" {
		hay := m.level(fuzzPunct)
		for _, match := range []func(string, string) bool{strings.HasPrefix, strings.Contains} {
			for i := from; i < total; i++ {
				if match(hay[i], a) {
					return i, fuzzLoose
				}
			}
		}
	}
	return -1, 0
}

// hint says why lines do not match from position from on: the place
// where most of their first lines match (loosely), and the line that
// differs there. When none does and the hunk had @@ lines (anchored),
// the line right after them is compared.
func (m *matcher) hint(want []string, from int, anchored bool) string {
	hay := m.level(fuzzPunct)
	keys := m.norm[fuzzExact]
	w := make([]string, len(want))
	for i, s := range want {
		w[i] = normalize(s, fuzzPunct)
	}
	best, bestAt := 0, -1
	for i := from; i < len(hay); i++ {
		k := 0
		for k < len(w) && i+k < len(hay) && hay[i+k] == w[k] {
			k++
		}
		if k > best {
			best, bestAt = k, i
		}
	}
	switch {
	case bestAt >= 0 && bestAt+best >= len(hay):
		return fmt.Sprintf("its first %s match from line %d to the end of the file, which has only %s", plural(best, "line", "lines"), bestAt+1, plural(len(hay), "line", "lines"))
	case bestAt >= 0:
		return fmt.Sprintf("at line %d the file has %q where the hunk expects %q", bestAt+best+1, truncLine(keys[bestAt+best]), truncLine(want[best]))
	}
	if anchored && from < len(hay) {
		return fmt.Sprintf("after its @@ lines, at line %d, the file has %q where the hunk expects %q", from+1, truncLine(keys[from]), truncLine(want[0]))
	}
	for i := range min(from, len(hay)) {
		if hay[i] == w[0] {
			return fmt.Sprintf("its first line %q is at line %d, before where this hunk may start (line %d): hunks and @@ lines must follow the file's order", truncLine(want[0]), i+1, from+1)
		}
	}
	return fmt.Sprintf("its first line %q is nowhere there", truncLine(want[0]))
}

func after(line int) string {
	if line == 0 {
		return ""
	}
	return fmt.Sprintf(" after line %d", line)
}

// envEdit replaces n lines of the file, from line at, by a hunk's lines.
type envEdit struct {
	at, n int
	lines []envLine
}

// applyChunks applies an Update File's hunks to data, in order, each
// after the one before. Context lines keep the file's own text (and line
// ending); added lines get the file's usual line ending; a file without
// a final newline keeps lacking one.
func applyChunks(ctx context.Context, data []byte, chunks []*envChunk) ([]byte, []string, error) {
	lines := splitLines(data)
	eol := lineEnding(lines)
	missingNL := len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n")
	if missingNL {
		lines[len(lines)-1] += eol
	}
	keys := make([]string, len(lines))
	for i, l := range lines {
		keys[i] = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	}
	m := newMatcher(ctx, keys)
	var edits []envEdit
	var notes []string
	cursor := 0
	for ci, c := range chunks {
		fail := func(format string, args ...any) error {
			return invalid("hunk %d of %d (%s) does not apply: %s; read the file again and regenerate the hunk", ci+1, len(chunks), c.label(), fmt.Sprintf(format, args...))
		}
		for _, a := range c.anchors {
			at, _ := m.seek([]string{a}, cursor, false, true)
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			if at < 0 {
				return nil, nil, fail("its @@ line %q matches no line of the file%s", truncLine(a), after(cursor))
			}
			cursor = at + 1
		}
		tries := [][]envLine{c.lines}
		firm := trimSoft(c.lines)
		if len(firm) != len(c.lines) {
			tries = append(tries, firm)
		}
		if added, ok := softAdded(firm); ok {
			tries = append(tries, added)
		}
		found := false
		for _, body := range tries {
			old := envOld(body)
			if len(old) == 0 {
				at := len(lines)
				if len(c.anchors) > 0 && !c.eof {
					at = cursor
				}
				edits = append(edits, envEdit{at: at, lines: body})
				found = true
				break
			}
			at, lvl := m.seek(old, cursor, c.eof, false)
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			if at < 0 {
				continue
			}
			if lvl != fuzzExact {
				notes = append(notes, fmt.Sprintf("hunk %d matched at line %d %s", ci+1, at+1, fuzzNames[lvl]))
			}
			if c.eof && at+len(old) != len(lines) {
				notes = append(notes, fmt.Sprintf("hunk %d is marked %q but matched at line %d, before the end", ci+1, envEOF, at+1))
			}
			edits = append(edits, envEdit{at: at, n: len(old), lines: body})
			cursor = at + len(old)
			found = true
			break
		}
		if !found {
			old := envOld(tries[len(tries)-1])
			return nil, nil, fail("its context and removed lines are not in the file%s; %s", after(cursor), m.hint(old, cursor, len(c.anchors) > 0))
		}
	}
	slices.SortStableFunc(edits, func(a, b envEdit) int { return a.at - b.at })
	var b strings.Builder
	b.Grow(len(data))
	pos := 0
	for _, e := range edits {
		if e.at < pos {
			return nil, nil, failed("the hunks overlap") // cannot happen: each starts after the one before
		}
		for _, l := range lines[pos:e.at] {
			b.WriteString(l)
		}
		k := e.at
		for _, l := range e.lines {
			switch l.op {
			case ' ':
				b.WriteString(lines[k])
				k++
			case '-':
				k++
			default:
				b.WriteString(l.text)
				b.WriteString(eol)
			}
		}
		pos = e.at + e.n
	}
	for _, l := range lines[pos:] {
		b.WriteString(l)
	}
	out := b.String()
	if missingNL {
		out = strings.TrimSuffix(out, "\n")
		out = strings.TrimSuffix(out, "\r")
	}
	return []byte(out), notes, nil
}

// envOld returns the lines a hunk expects in the file: its context
// and removed lines.
func envOld(body []envLine) []string {
	var old []string
	for _, l := range body {
		if l.op != '+' {
			old = append(old, l.text)
		}
	}
	return old
}

// trimSoft returns body without the soft (bare empty) lines at its start
// and end.
func trimSoft(body []envLine) []envLine {
	for len(body) > 0 && body[0].soft {
		body = body[1:]
	}
	for len(body) > 0 && body[len(body)-1].soft {
		body = body[:len(body)-1]
	}
	return body
}

// softAdded returns body with its soft lines that lie between added
// lines taken as added empty lines (a + forgotten on an empty line of a
// block of new lines), and whether there were any.
func softAdded(body []envLine) ([]envLine, bool) {
	var out []envLine
	changed := false
	prev := byte(0) // the op of the last line that is not soft
	for i, l := range body {
		if !l.soft {
			prev = l.op
		}
		if l.soft && prev == '+' {
			j := i
			for j < len(body) && body[j].soft {
				j++
			}
			if j < len(body) && body[j].op == '+' {
				if out == nil {
					out = slices.Clone(body[:i])
				}
				out = append(out, envLine{op: '+'})
				changed = true
				continue
			}
		}
		if out != nil {
			out = append(out, l)
		}
	}
	return out, changed
}

// lineEnding returns the line ending most of the lines have: "\r\n" or
// "\n".
func lineEnding(lines []string) string {
	crlf, lf := 0, 0
	for _, l := range lines {
		switch {
		case strings.HasSuffix(l, "\r\n"):
			crlf++
		case strings.HasSuffix(l, "\n"):
			lf++
		}
	}
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}
