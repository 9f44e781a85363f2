package view

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
)

// program is what the page shows of a call whose tool ran a program that
// calls other tools, as code mode's run_code does (see toolloop.Inner):
// its source, the inner calls it made (the call's Inner, each a call of
// its own, in the order of their numbers) and its output (the call's
// result: the program's return value, then its console output).
//
// A call is a program when the log shows it made inner calls (their
// events, ResultMeta.InnerCalls, or a program state in run.paused), or
// when its arguments are code mode's alone: an object whose one member,
// "code", is a string.
type program struct {
	// Code is the program's source, from the call's arguments; Lines
	// counts its lines. Code is nil when the arguments hold none.
	Code  *text `json:"code,omitempty"`
	Lines int   `json:"lines,omitempty"`
	// Calls is how many inner calls the program made: its result's
	// ResultMeta.InnerCalls, or, before it completes, those the log shows.
	Calls int `json:"calls"`
	// Paused says an inner call of the program waited for a decision and
	// paused the run; Served is how many of its inner calls had been
	// answered by then, which a resumed run answers from the program's
	// journal, without events, when the program runs again.
	Paused bool `json:"paused,omitempty"`
	Served int  `json:"served,omitempty"`
}

// program returns the call's program, making it if need be.
func (c *call) program() *program {
	if c.Program == nil {
		c.Program = &program{}
	}
	return c.Program
}

// innerParent returns the ID of the program's call that made the call of
// e, an inner call, or "" when e is of no inner call. An inner call's
// events carry its program's call ID in ParentCallID, ParentRunID empty.
// An agent used as a tool passes its run's events to its parent's run
// with both set to the parent's (see toolloop.AgentTool): an inner call
// of a child run is then known by its ID, its program's call ID, "/" and
// its number, the program being a call of the same run.
func innerParent(r *run, e *toolloop.Event) string {
	if e.ParentCallID != "" && e.ParentRunID == "" {
		return e.ParentCallID
	}
	k := strings.LastIndexByte(e.CallID, '/')
	if k <= 0 || e.ParentRunID == "" || innerNumber(e.CallID) == 0 {
		return ""
	}
	if pc := r.callOf[e.CallID[:k]]; pc != nil && pc.Parent == "" {
		return pc.ID
	}
	return ""
}

// innerNumber is the number of an inner call, from the end of its ID
// after its program's call ID and "/"; 0 if it is none.
func innerNumber(s string) int {
	n, err := strconv.Atoi(s[strings.LastIndexByte(s, '/')+1:])
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// innerCall finds or makes the inner call id of the program call parent,
// which it finds or makes in turn n.
func (r *run) innerCall(b *builder, parent, id, tool string, n int, at time.Time) *call {
	c := r.callOf[id]
	if c == nil {
		pc := r.call(b, parent, "", n, at)
		c = &call{ID: id, Tool: tool, Status: statusUnfinished, Dur: -1, Depth: pc.Depth, Parent: parent}
		r.callOf[id] = c
		pc.Inner = append(pc.Inner, c)
		pc.program()
	}
	if c.Tool == "" {
		c.Tool = tool
	}
	return c
}

// pausedPrograms folds in the programs a run.paused event holds (in
// Agents, with their journals): their calls wait, as the inner calls
// they wait on do; the inner calls answered before the pause, which the
// program will be answered from when it runs again, are counted, and
// made from the journal if the log has no events of theirs.
func (b *builder) pausedPrograms(r *run, e *toolloop.Event) {
	for _, a := range e.Agents {
		ps := a.Program
		if ps == nil {
			continue
		}
		c := r.call(b, a.CallID, a.Name, e.Turn, e.Time)
		if c.args == nil && len(a.Arguments) > 0 {
			c.Args, c.args = b.cut(pretty(a.Arguments)), a.Arguments
		}
		if !c.done {
			c.Status = statusPending
		}
		pg := c.program()
		pg.Paused, pg.Served = true, 0
		for _, rec := range ps.Calls {
			ic := r.innerCall(b, a.CallID, rec.ID, rec.Name, e.Turn, time.Time{})
			if ic.Args == nil {
				ic.Args, ic.args = b.cut(pretty(rec.Arguments)), rec.Arguments
			}
			if rec.Result == nil {
				if !ic.done {
					ic.Status = statusPending
				}
				continue
			}
			pg.Served++
			if !ic.done {
				// The log lost its completion; the journal has it, from
				// before the pause.
				b.complete(ic, &toolloop.Event{Time: e.Time, Result: rec.Result})
			}
		}
		for _, p := range ps.Pending {
			ic := r.innerCall(b, a.CallID, p.CallID, p.Name, e.Turn, time.Time{})
			if !ic.done {
				ic.Status = statusPending
			}
		}
	}
}

// finishInner completes the program of call c, if it is one, once c is
// placed on its turn: its source, its count of inner calls, and the inner
// calls in the order of their numbers, placed on the time axis.
func (b *builder) finishInner(c *call) {
	if c.Program == nil && !codeArguments(c.args) {
		return
	}
	pg := c.program()
	if pg.Code == nil {
		if src, ok := codeOf(c.args); ok {
			pg.Code = b.cut(src)
			pg.Lines = strings.Count(src, "\n") + 1
		}
	}
	pg.Calls = max(pg.Calls, len(c.Inner))
	slices.SortStableFunc(c.Inner, func(x, y *call) int { return cmp.Compare(innerNumber(x.ID), innerNumber(y.ID)) })
	for _, ic := range c.Inner {
		if ic.start.IsZero() {
			ic.start = cmp.Or(ic.end, c.start)
		}
		ic.At = b.ms(ic.start)
		if ic.done {
			ic.Dur = toMicro(max(b.ms(ic.end)-ic.At, 0))
		}
	}
}

// codeOf returns the program's source from a call's arguments: their
// member "code", if it is a string.
func codeOf(args json.RawMessage) (string, bool) {
	var in struct {
		Code *string `json:"code"`
	}
	if json.Unmarshal(args, &in) != nil || in.Code == nil {
		return "", false
	}
	return *in.Code, true
}

// codeArguments reports whether args are code mode's alone: an object
// whose one member, "code", is a string.
func codeArguments(args json.RawMessage) bool {
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil || len(in) != 1 {
		return false
	}
	_, ok := codeOf(args)
	return ok
}
