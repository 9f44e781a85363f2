package builtin

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// This file parses the envelope patch format ("*** Begin Patch" ...
// "*** End Patch"), the one OpenAI's models are trained to write for
// Codex's apply_patch tool:
//
//	*** Begin Patch
//	*** Add File: path          then the new file's lines, each after a +
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path       optional, right after Update File
//	@@ anchor                   optional line to seek to; several narrow
//	 context                    hunk lines: ' ' context, - removed, + added
//	*** End of File             optional: the hunk ends the file
//	*** End Patch
//
// Markers may carry surrounding spaces; the patch may be wrapped in a
// Markdown code fence or a shell heredoc (<<'EOF' ... EOF).

// The markers of the envelope format.
const (
	envBegin  = "*** Begin Patch"
	envEnd    = "*** End Patch"
	envAdd    = "*** Add File:"
	envDelete = "*** Delete File:"
	envUpdate = "*** Update File:"
	envMove   = "*** Move to:"
	envEOF    = "*** End of File"
)

// envKind is what a file operation of an envelope patch does.
type envKind int

const (
	envAddFile envKind = iota
	envDeleteFile
	envUpdateFile
)

// envOp is one file operation of an envelope patch.
type envOp struct {
	kind   envKind
	path   string
	moveTo string
	line   int      // the line of its header in the patch, from 1
	add    []string // an added file's lines, without their newlines
	chunks []*envChunk
}

// header is the op's header line, to name it in messages.
func (op *envOp) header() string {
	switch op.kind {
	case envAddFile:
		return envAdd + " " + op.path
	case envDeleteFile:
		return envDelete + " " + op.path
	}
	return envUpdate + " " + op.path
}

// envChunk is one hunk of an Update File: the @@ anchors to seek to, in
// order, then lines to find and replace.
type envChunk struct {
	anchors []string
	lines   []envLine
	eof     bool // marked *** End of File: the lines end the file
	line    int  // the line of its first @@ or hunk line in the patch
}

// envLine is one line of a hunk: ' ' context, '-' removed or '+' added.
// A soft line is an empty line with no prefix at all, which models write
// both for an empty context line and to separate hunks: if the hunk does
// not match with it at its start or end, it is tried without.
type envLine struct {
	op   byte
	text string
	soft bool
}

// hasLines reports whether the chunk has lines other than soft ones.
func (c *envChunk) hasLines() bool {
	for _, l := range c.lines {
		if !l.soft {
			return true
		}
	}
	return false
}

// label names a chunk in messages: its anchors, or its first line.
func (c *envChunk) label() string {
	if len(c.anchors) > 0 {
		return "@@ " + strings.Join(c.anchors, " @@ ")
	}
	for _, l := range c.lines {
		if l.op != '+' {
			return fmt.Sprintf("starting %q", truncLine(l.text))
		}
	}
	return "lines added at the end"
}

func truncLine(s string) string {
	if len(s) > 80 {
		return s[:runeStart(s, 77)] + "..."
	}
	return s
}

// envelope is the text of an envelope patch, split into lines, and where
// its *** Begin Patch line is and where its lines end (exclusive).
type envelope struct {
	lines      []string
	begin, end int
}

// heredoc matches the first line of a shell heredoc that models wrap
// patches in: "<<'EOF'", "apply_patch <<EOF", "cat <<-"PATCH"".
var heredoc = regexp.MustCompile(`^(?:[\w./-]+\s+)*<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)$`)

// findEnvelope reports whether text is an envelope patch: whether its
// first line that is not blank is *** Begin Patch, once a wrapping code
// fence or heredoc is taken off. Text that has a *** Begin Patch line
// further down is an error: the patch must come alone.
func findEnvelope(text string) (*envelope, bool, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	lo, hi := 0, len(lines)
	trim := func() {
		for lo < hi && strings.TrimSpace(lines[lo]) == "" {
			lo++
		}
		for hi > lo && strings.TrimSpace(lines[hi-1]) == "" {
			hi--
		}
	}
	trim()
	for range 3 {
		if hi-lo < 2 {
			break
		}
		first, last := strings.TrimSpace(lines[lo]), strings.TrimSpace(lines[hi-1])
		if m := heredoc.FindStringSubmatch(first); m != nil && m[1] == m[3] && last == m[2] {
			lo, hi = lo+1, hi-1
		} else if strings.HasPrefix(first, "```") && last == "```" {
			lo, hi = lo+1, hi-1
		} else {
			break
		}
		trim()
	}
	if lo < hi && strings.TrimSpace(lines[lo]) == envBegin {
		return &envelope{lines: lines, begin: lo, end: hi}, true, nil
	}
	for i := lo; i < hi; i++ {
		// Only a line that starts with the marker: in a unified diff, a
		// context line " *** Begin Patch" is file content.
		if strings.TrimRightFunc(lines[i], unicode.IsSpace) == envBegin {
			return nil, true, invalid("line %d of the patch is %q, but other text comes before it: send the patch alone, starting with that line; nothing was changed", i+1, envBegin)
		}
	}
	return nil, false, nil
}

// envParseError is a malformed envelope patch, at a line of it.
type envParseError struct {
	line int
	msg  string
}

func (e *envParseError) Error() string {
	return fmt.Sprintf("line %d of the patch: %s", e.line, e.msg)
}

// parse returns the file operations of the patch, or an *envParseError.
func (e *envelope) parse() ([]*envOp, error) {
	last := e.end - 1
	if last <= e.begin || strings.TrimSpace(e.lines[last]) != envEnd {
		return nil, &envParseError{line: e.end, msg: fmt.Sprintf("the patch does not end with a %q line (was it cut off?)", envEnd)}
	}
	p := &envParser{lines: e.lines, i: e.begin + 1, end: last}
	return p.ops()
}

// envParser walks the lines between *** Begin Patch and *** End Patch.
type envParser struct {
	lines  []string
	i, end int
}

func (p *envParser) fail(msg string, args ...any) error {
	return &envParseError{line: p.i + 1, msg: fmt.Sprintf(msg, args...)}
}

func (p *envParser) ops() ([]*envOp, error) {
	var ops []*envOp
	for p.i < p.end {
		t := strings.TrimSpace(p.lines[p.i])
		var op *envOp
		var err error
		switch {
		case t == "":
			p.i++
			continue
		case t == envEnd:
			return nil, p.fail("%q comes before the end of the patch; send one patch at a time", envEnd)
		case strings.HasPrefix(t, envAdd):
			op, err = p.header(envAddFile, t, envAdd)
			if err == nil {
				p.addLines(op)
			}
		case strings.HasPrefix(t, envDelete):
			op, err = p.header(envDeleteFile, t, envDelete)
		case strings.HasPrefix(t, envUpdate):
			op, err = p.header(envUpdateFile, t, envUpdate)
			if err == nil {
				err = p.update(op)
			}
		case strings.HasPrefix(t, "@@") || strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-"):
			return nil, p.fail("%q is a hunk line outside a file: put it after an %q line", truncLine(t), envUpdate+" path")
		default:
			return nil, p.fail("%q is not a file header: expected %q, %q or %q", truncLine(t), envAdd+" path", envUpdate+" path", envDelete+" path")
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, p.fail("the patch has no file operations")
	}
	return ops, nil
}

// header reads an operation's header line.
func (p *envParser) header(kind envKind, t, marker string) (*envOp, error) {
	path := strings.TrimSpace(strings.TrimPrefix(t, marker))
	if path == "" {
		return nil, p.fail("%q names no file", t)
	}
	op := &envOp{kind: kind, path: path, line: p.i + 1}
	p.i++
	return op, nil
}

// addLines reads an added file's + lines. An empty line between + lines
// (a + forgotten on an empty line) is an empty line of the file.
func (p *envParser) addLines(op *envOp) {
	for p.i < p.end {
		l := p.lines[p.i]
		if text, ok := strings.CutPrefix(l, "+"); ok {
			op.add = append(op.add, text)
			p.i++
			continue
		}
		if strings.TrimSpace(l) != "" {
			return
		}
		j := p.i
		for j < p.end && strings.TrimSpace(p.lines[j]) == "" {
			j++
		}
		if j == p.end || !strings.HasPrefix(p.lines[j], "+") {
			return
		}
		for ; p.i < j; p.i++ {
			op.add = append(op.add, "")
		}
	}
}

// unifiedRange matches the line numbers of a unified diff's hunk header,
// which models sometimes put after @@ in this format too.
var unifiedRange = regexp.MustCompile(`^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@\s*`)

// update reads an Update File's optional Move to and its hunks.
func (p *envParser) update(op *envOp) error {
	if p.i < p.end {
		if t := strings.TrimSpace(p.lines[p.i]); strings.HasPrefix(t, envMove) {
			op.moveTo = strings.TrimSpace(strings.TrimPrefix(t, envMove))
			if op.moveTo == "" {
				return p.fail("%q names no file", t)
			}
			p.i++
		}
	}
	var cur *envChunk
	closeChunk := func() error {
		if cur == nil {
			return nil
		}
		if !cur.hasLines() {
			return &envParseError{line: cur.line, msg: fmt.Sprintf("hunk %d of %q has no lines: after @@, each line starts with ' ' (context), - (removed) or + (added)", len(op.chunks)+1, op.header())}
		}
		op.chunks = append(op.chunks, cur)
		cur = nil
		return nil
	}
	for p.i < p.end {
		l := p.lines[p.i]
		switch {
		case strings.HasPrefix(l, "*"):
			if strings.TrimSpace(l) != envEOF {
				return p.endUpdate(op, closeChunk)
			}
			if cur == nil || !cur.hasLines() {
				return p.fail("%q must end a hunk that has lines", envEOF)
			}
			cur.eof = true
			if err := closeChunk(); err != nil {
				return err
			}
		case strings.HasPrefix(l, "@@"):
			switch {
			case cur != nil && cur.hasLines():
				if err := closeChunk(); err != nil {
					return err
				}
			case cur != nil:
				cur.lines = nil // empty lines between anchors
			}
			if cur == nil {
				cur = &envChunk{line: p.i + 1}
			}
			anchor := strings.TrimRightFunc(strings.TrimPrefix(l[2:], " "), unicode.IsSpace)
			if r := strings.TrimSpace(anchor); unifiedRange.MatchString(r) {
				anchor = strings.TrimSpace(unifiedRange.ReplaceAllString(r, ""))
			}
			if strings.TrimSpace(anchor) != "" && strings.TrimSpace(anchor) != "@@" {
				cur.anchors = append(cur.anchors, anchor)
			}
		case strings.TrimSpace(l) == "" && !strings.HasPrefix(l, " "):
			// An empty line: an empty context line inside a hunk (soft), a
			// separator between hunks otherwise.
			if cur != nil {
				cur.lines = append(cur.lines, envLine{op: ' ', soft: true})
			}
		case l[0] == ' ' || l[0] == '-' || l[0] == '+' || l[0] == '\t':
			if cur == nil {
				if len(op.chunks) > 0 {
					return p.fail("%q follows a hunk marked %q: start a new hunk with @@", truncLine(l), envEOF)
				}
				cur = &envChunk{line: p.i + 1}
			}
			if l[0] == '\t' {
				// A context line whose leading space was forgotten.
				cur.lines = append(cur.lines, envLine{op: ' ', text: l})
			} else {
				cur.lines = append(cur.lines, envLine{op: l[0], text: l[1:]})
			}
		default:
			return p.fail("%q is not a hunk line: each line of a hunk starts with ' ' (context), - (removed) or + (added), and a hunk starts with @@", truncLine(l))
		}
		p.i++
	}
	return p.endUpdate(op, closeChunk)
}

// endUpdate closes an Update File's last hunk and checks it has one,
// unless it only moves the file.
func (p *envParser) endUpdate(op *envOp, closeChunk func() error) error {
	if err := closeChunk(); err != nil {
		return err
	}
	if len(op.chunks) == 0 && op.moveTo == "" {
		return &envParseError{line: op.line, msg: fmt.Sprintf("%q has no hunks: follow it with @@ and the lines to change", op.header())}
	}
	return nil
}
