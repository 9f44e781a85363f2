package sink

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/toolloop/toolloop"
)

// childMark heads the tool of a call that is not the run's own: a
// sub-agent's, or a program's inner call.
const childMark = "↳ "

// innerIndent indents the lines of an inner call under its program's.
const innerIndent = "  "

// innerParent returns the ID of the program's call that made the call of
// e, an inner call, or "" when e is of no inner call. An inner call's
// events carry its program's call ID in ParentCallID, ParentRunID empty.
// An agent used as a tool passes its run's events to its parent's run
// with both set to the parent's (see toolloop.AgentTool): an inner call
// of a child run is then known by its ID, its program's call ID, "/" and
// its number, the program being a call of the same run in flight.
func innerParent(v *runView, e *toolloop.Event) string {
	if e.ParentCallID != "" && e.ParentRunID == "" {
		return e.ParentCallID
	}
	k := strings.LastIndexByte(e.CallID, '/')
	if e.ParentRunID == "" || k <= 0 {
		return ""
	}
	if n, err := strconv.Atoi(e.CallID[k+1:]); err != nil || n <= 0 {
		return ""
	}
	if _, ok := v.tools[e.CallID[:k]]; !ok {
		return ""
	}
	return e.CallID[:k]
}

// inner sets the printer up for an event of an inner call (see
// toolloop.Inner: a call that a program, as code mode runs it, made
// through the loop): its lines are indented under its program's call and
// name it by its ID, "↳ c1/2 read_file"; before the first of them after
// lines of anything else, a line names the program's call, so that the
// inner calls of programs that run at once, or beside other calls, are
// told apart. The returned function puts the printer back.
func (p *printer) inner(v *runView, e *toolloop.Event, parent string) func() {
	name := strings.TrimPrefix(e.Tool, childMark) // a child run's, see child
	if name == "" && e.Result != nil {
		name = e.Result.Name
	}
	e.Tool = childMark + e.CallID + " " + name
	p.indent, p.group = innerIndent, e.RunID+"\x00"+parent
	p.head = func() {
		p.buf = append(p.buf, "  "...)
		p.buf = p.c.add(p.buf, sgrDim, markStart)
		p.buf = append(p.buf, ' ')
		p.buf = p.c.add(p.buf, sgrBold, cmp.Or(v.tools[parent], "program"))
		if args := v.calls[parent]; args != "" {
			p.buf = append(p.buf, ' ')
			p.buf = p.c.add(p.buf, sgrCyan, args)
		}
		p.buf = append(p.buf, " → "...)
		p.buf = p.c.add(p.buf, sgrDim, "program "+parent)
		p.buf = append(p.buf, '\n')
	}
	return func() { p.indent, p.group, p.head = "", "", nil }
}

// lineStart begins a line of the printer's own: it ends the line a delta
// left open, writes the line of the program whose inner call the line is
// of, if the last line was of another, and indents.
func (p *printer) lineStart() {
	p.endLine()
	if p.group != "" && p.group != p.under && p.head != nil {
		p.head()
	}
	p.under = p.group
	p.buf = append(p.buf, "  "...)
	p.buf = append(p.buf, p.indent...)
}
