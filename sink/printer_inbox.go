package sink

import (
	"cmp"
	"strings"

	"github.com/toolloop/toolloop"
)

// delivered prints a message sent into the running run, where the loop
// delivered it: "» delivered: use the staging database". The loop's
// message that a job ended shows the first line of each message it
// delivered: the job's line said how it ended.
func (p *printer) delivered(e toolloop.Event) {
	if e.Origin == toolloop.OriginJob {
		what := "job end delivered"
		if len(e.Messages) > 1 {
			what = "job ends delivered"
		}
		var lines []string
		for _, m := range e.Messages {
			line, more := firstLine(m.Text())
			line, cut := clip(line, p.o.ResultBytes)
			if cut > 0 || more {
				line += " …"
			}
			lines = append(lines, line)
		}
		p.message(markSteer, sgrCyan, what, strings.Join(lines, "\n"))
		return
	}
	what := "delivered"
	if e.Origin != "" && e.Origin != toolloop.OriginSteer {
		what += " (" + strings.ReplaceAll(string(e.Origin), "_", "-") + ")"
	}
	var texts []string
	for _, m := range e.Messages {
		texts = append(texts, m.Text())
	}
	p.message(markSteer, sgrCyan, what, strings.Join(texts, "\n"))
}

// interrupted prints where an interrupt stopped the run: "interrupted
// (now)", and whether the run goes on.
func (p *printer) interrupted(i *toolloop.Interrupt) {
	mode, goOn := toolloop.InterruptNow, false
	if i != nil {
		mode, goOn = cmp.Or(i.Mode, toolloop.InterruptNow), i.Continue
	}
	msg := "interrupted (" + string(mode) + ")"
	if goOn {
		msg += "; going on with the queued messages"
	}
	p.line(markNote, sgrYellow, msg)
}
