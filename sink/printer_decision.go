package sink

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
)

// decision is what the printer remembers of how a call in flight was
// decided, for its one line when it completes.
type decision struct {
	// changed says who changed the arguments, in order: "changed by
	// guard: …", "changed by hook …", "edited by person".
	changed []string
	// started is when the call started; asked when its approval was
	// requested; waited how long approvals took.
	started, asked time.Time
	waited         time.Duration
	// answered: an approval came back; approved: it ran.
	answered, approved bool
}

func (v *runView) decision(id string) *decision {
	d := v.decided[id]
	if d == nil {
		d = &decision{}
		v.decided[id] = d
	}
	return d
}

// changedArgs records arguments a guard, a hook or a person rewrote: the
// call's line shows them, and who changed them.
func (p *printer) changedArgs(v *runView, id string, args json.RawMessage, who string) {
	if len(args) > 0 {
		v.calls[id] = summarizeArgs(args, p.o.ArgumentBytes)
	}
	d := v.decision(id)
	d.changed = append(d.changed, who)
}

// asked records when a call's approval was requested.
func (v *runView) asked(e toolloop.Event) {
	v.decision(e.CallID).asked = e.Time
}

// answered records an approval and how long it was waited for.
func (v *runView) answered(e toolloop.Event) {
	d := v.decision(e.CallID)
	d.answered, d.approved = true, e.Approval.Approved
	if !d.asked.IsZero() && !e.Time.IsZero() && e.Time.After(d.asked) {
		d.waited += e.Time.Sub(d.asked)
	}
}

// text is what a call's line says of its decision, after its duration:
// who changed its arguments, that it was approved, and how long the
// approval was waited for, apart from the time the call ran, if at least
// slow.
func (d *decision) text(slow time.Duration) string {
	if d == nil {
		return ""
	}
	parts := make([]string, 0, len(d.changed)+2)
	for _, c := range d.changed {
		parts = append(parts, "args "+c)
	}
	if d.answered && d.approved {
		parts = append(parts, "approved")
	}
	if slow > 0 && d.waited >= slow {
		parts = append(parts, "waited "+formatDuration(d.waited)+" for approval")
	}
	return strings.Join(parts, ", ")
}

// hookChanged is the attribution of a hook's rewrite.
func hookChanged(h *toolloop.HookEffect) string {
	return "changed by hook " + h.Hook + "[" + strconv.Itoa(h.Index) + "]"
}

// guardChanged is the attribution of a guard verdict's rewrite.
func guardChanged(vd *toolloop.Verdict) string {
	return "changed by guard" + reasonAndRule(vd.Reason, vd.Rule)
}

// personEdited is the attribution of the arguments an approval edited
// (see toolloop.Approval.Arguments): approvers that edit are people.
const personEdited = "edited by person"

// resultText is a result's text with its content blocks on lines of
// their own, so that a note the loop added does not run into the tool's
// output.
func resultText(r *toolloop.ToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == toolloop.ContentReasoning {
			continue
		}
		t := c.AsText()
		if t == "" {
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(t)
	}
	return b.String()
}

func (p *printer) verdict(v *runView, e toolloop.Event) {
	vd := e.Verdict
	if vd == nil {
		return
	}
	if vd.Arguments != nil && (vd.Decision == toolloop.Modify || vd.Decision == toolloop.Ask) {
		// The call's line shows the new arguments and who changed them;
		// verbose mode shows the change as it happens too.
		if p.o.Verbose {
			p.callLine(markEdit, sgrDim, e.Tool, summarizeArgs(vd.Arguments, p.o.ArgumentBytes), "", "args "+guardChanged(vd))
		}
		p.changedArgs(v, e.CallID, vd.Arguments, guardChanged(vd))
	}
	switch vd.Decision {
	case toolloop.Modify:
	case toolloop.Deny:
		// The call's line says it was denied and why; verbose mode
		// shows the verdict as it happens too.
		if p.o.Verbose {
			p.callLine(markFailed, sgrRed, e.Tool, v.calls[e.CallID], "", "denied by policy"+reasonAndRule(vd.Reason, vd.Rule))
		}
	case toolloop.Ask:
		// permission.requested follows when someone will decide.
	default:
		if p.o.Verbose {
			p.callLine(markInfo, sgrDim, e.Tool, v.calls[e.CallID], "", "allowed"+reasonAndRule(vd.Reason, vd.Rule))
		}
	}
}

// approval records an approval for the call's line, which says it was
// approved, or denied and why, and how long it waited; verbose mode
// prints the approval as it comes too.
func (p *printer) approval(v *runView, e toolloop.Event) {
	a := e.Approval
	if a == nil {
		return
	}
	v.answered(e)
	if a.Approved && len(a.Arguments) > 0 {
		if args := summarizeArgs(a.Arguments, p.o.ArgumentBytes); args != v.calls[e.CallID] {
			if p.o.Verbose {
				p.callLine(markEdit, sgrDim, e.Tool, args, "", "args "+personEdited)
			}
			p.changedArgs(v, e.CallID, a.Arguments, personEdited)
		}
	}
	if !p.o.Verbose {
		return
	}
	if a.Approved {
		p.callLine(markOK, sgrGreen, e.Tool, v.calls[e.CallID], "", "approved"+reasonAndRule(a.Reason, ""))
	} else {
		p.callLine(markFailed, sgrRed, e.Tool, v.calls[e.CallID], "", "not approved"+reasonAndRule(a.Reason, ""))
	}
}
