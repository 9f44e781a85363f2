package sink

import (
	"cmp"

	"github.com/toolloop/toolloop"
)

// innerIndent indents the lines of an inner call under its program's.
const innerIndent = "  "

// inner sets the printer up for an event of an inner call (see
// toolloop.Inner: a call that a program, as code mode runs it, made
// through the loop): its lines are indented under its program's call and
// name it by its ID, "↳ c1/2 read_file"; before the first of them after
// lines of anything else, a line names the program's call, so that the
// inner calls of programs that run at once, or beside other calls, are
// told apart. The returned function puts the printer back.
func (p *printer) inner(v *runView, e *toolloop.Event) func() {
	name := e.Tool
	if name == "" && e.Result != nil {
		name = e.Result.Name
	}
	e.Tool = "↳ " + e.CallID + " " + name
	parent := e.ParentCallID
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
