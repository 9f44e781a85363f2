package sanitize

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/toolloop/toolloop"
)

// RedactEvent returns e with secrets redacted from every field that can
// hold text from the model, a tool, a hook or the user: arguments, the
// messages of run.start (the prompt), the response of model.response (its
// text, reasoning and tool calls), results, partial output, progress,
// pending calls, approvals, verdicts, hook details, repairs, stacks and
// errors, and the messages of a transcript edit. Use it to keep secrets
// out of an event log (eventlog.Options.Redact) and out of telemetry
// (telemetry redacts with it by default):
//
//	w, err := eventlog.Create(path, eventlog.Options{Redact: redactor.RedactEvent})
//
// What it leaves alone are the identifiers that tie events together (run
// and call IDs), enumerations (event type, role, status, error kind, stop
// reason), numbers and times, and the opaque parts of a reasoning block
// that its provider must get back unchanged (Reasoning.Signature,
// Encrypted, ID, Provider). Binary Content.Data (an image, audio) is left
// alone too; text Data is redacted. JSON stays valid JSON.
//
// It never changes what e points to: whatever it redacts is a copy, and
// an event without secrets comes back with its own slices and pointers.
// The counts of what it replaced are not recorded.
//
// Model deltas and partial output arrive in pieces, and a secret the
// stream cuts in two is in none of them whole: RedactEvent finds it in the
// model.response or tool.execution_complete event that holds it whole,
// not in the pieces. An eventlog.Writer with Options.Redact set holds back
// the tail of each stream so that it redacts the pieces it writes whole;
// a sink of its own that records pieces must do the same.
func (r *Redactor) RedactEvent(e toolloop.Event) toolloop.Event {
	var discard map[string]int
	w := walker{r: r, counts: &discard}
	w.str(&e.Tool)
	w.str(&e.SourceName)
	w.raw(&e.Arguments)
	w.strs(&e.Repairs)
	if e.Verdict != nil {
		v := *e.Verdict
		if or(w.str(&v.Reason), w.raw(&v.Arguments), w.str(&v.Rule)) {
			e.Verdict = &v
		}
	}
	if e.Approval != nil {
		a := *e.Approval
		if or(w.str(&a.Reason), w.raw(&a.Arguments)) {
			e.Approval = &a
		}
	}
	if e.Hook != nil {
		h := *e.Hook
		if or(w.str(&h.Hook), w.str(&h.Effect), w.str(&h.Detail)) {
			e.Hook = &h
		}
	}
	if e.Progress != nil {
		p := *e.Progress
		if w.str(&p.Message) {
			e.Progress = &p
		}
	}
	w.result(&e.Result)
	w.str(&e.Stack)
	w.str(&e.Text)
	w.messages(&e.Messages)
	if e.Request != nil {
		r := *e.Request
		if or(w.strs(&r.Tools), w.strs(&r.Loaded), w.str(&r.Output), w.str(&r.ToolChoice.Name)) {
			e.Request = &r
		}
	}
	if e.Response != nil {
		resp := *e.Response
		if or(w.message(&resp.Message), w.str(&resp.Model)) {
			e.Response = &resp
		}
	}
	w.pendings(&e.Pending)
	w.pendings(&e.Agents)
	w.queued(&e.Queued)
	if e.Job != nil {
		j := *e.Job
		if or(w.str(&j.Tool), w.str(&j.Reason), w.result(&j.Result)) {
			e.Job = &j
		}
	}
	if e.Attempt != nil {
		at := *e.Attempt
		if w.str(&at.Error) {
			e.Attempt = &at
		}
	}
	w.approvals(&e.Approvals)
	if e.Edit != nil {
		ed := *e.Edit
		splices := each(&ed.Splices, func(sp *toolloop.Splice) bool { return w.messages(&sp.Messages) })
		if or(w.str(&ed.Strategy), w.str(&ed.Reason), w.str(&ed.Model), splices) {
			e.Edit = &ed
		}
	}
	if e.CacheBust != nil {
		b := *e.CacheBust
		if w.str(&b.Detail) {
			e.CacheBust = &b
		}
	}
	w.str(&e.Error)
	return e
}

// A walker redacts the fields of a value in place; the value is a copy,
// and each method copies what it changes below it. Each reports whether
// it changed anything. The methods are written so that every field is
// visited even when an earlier one changed: see or.
type walker struct {
	r      *Redactor
	counts *map[string]int
}

func (w walker) str(s *string) bool {
	if *s == "" {
		return false
	}
	out := w.r.redact(*s, w.counts)
	if out == *s {
		return false
	}
	*s = out
	return true
}

// raw redacts a JSON value, which stays valid. Arguments a model sent
// malformed are redacted as text.
func (w walker) raw(j *json.RawMessage) bool {
	if len(*j) == 0 {
		return false
	}
	if !json.Valid(*j) {
		s := string(*j)
		if !w.str(&s) {
			return false
		}
		*j = json.RawMessage(s)
		return true
	}
	out := w.r.redactJSON(*j, w.counts)
	if len(out) == len(*j) && string(out) == string(*j) {
		return false
	}
	*j = out
	return true
}

// bytes redacts Data that is text; binary data is left alone.
func (w walker) bytes(b *[]byte) bool {
	if len(*b) == 0 || !utf8.Valid(*b) {
		return false
	}
	s := string(*b)
	if !w.str(&s) {
		return false
	}
	*b = []byte(s)
	return true
}

func (w walker) strs(ss *[]string) bool { return each(ss, w.str) }

// each applies f to a copy of each element of *xs, and replaces *xs with
// a copy holding the results if f changed any.
func each[T any](xs *[]T, f func(*T) bool) bool {
	var out []T
	for i := range *xs {
		x := (*xs)[i]
		if f(&x) {
			if out == nil {
				out = slices.Clone(*xs)
			}
			out[i] = x
		}
	}
	if out == nil {
		return false
	}
	*xs = out
	return true
}

// or evaluates every one of its arguments, unlike ||: each is a field
// that must be redacted whatever the others held.
func or(bs ...bool) bool { return slices.Contains(bs, true) }

func (w walker) content(c *toolloop.Content) bool {
	changed := or(w.str(&c.Text), w.bytes(&c.Data), w.str(&c.MIMEType), w.str(&c.URI), w.raw(&c.JSON))
	if c.Reasoning != nil {
		rs := *c.Reasoning
		if w.raw(&rs.Extra) {
			c.Reasoning = &rs
			changed = true
		}
	}
	return changed
}

func (w walker) contents(cs *[]toolloop.Content) bool { return each(cs, w.content) }

func (w walker) message(m *toolloop.Message) bool {
	return or(
		w.contents(&m.Content),
		each(&m.ToolCalls, func(tc *toolloop.ToolCall) bool { return or(w.str(&tc.Name), w.raw(&tc.Arguments)) }),
		w.result(&m.Result),
		w.str(&m.Model),
	)
}

func (w walker) messages(ms *[]toolloop.Message) bool { return each(ms, w.message) }

// queued redacts the messages sent into a run and not yet delivered.
func (w walker) queued(q *[]toolloop.QueuedMessage) bool {
	return each(q, func(m *toolloop.QueuedMessage) bool { return w.message(&m.Message) })
}

// result redacts a result, replacing *res with a copy if it changes.
func (w walker) result(res **toolloop.ToolResult) bool {
	if *res == nil {
		return false
	}
	out := **res
	changed := or(w.str(&out.Name), w.contents(&out.Content), w.meta(&out.Meta))
	if out.Error != nil {
		e := *out.Error
		if w.str(&e.Message) {
			out.Error = &e
			changed = true
		}
	}
	if changed {
		*res = &out
	}
	return changed
}

func (w walker) meta(m *toolloop.ResultMeta) bool {
	return or(w.str(&m.MIMEType), w.str(&m.SourceName), w.strs(&m.Repairs), w.strs(&m.Modified), w.strs(&m.LoadedTools),
		w.extra(&m.Extra))
}

// pendings redacts pending calls, and the paused runs of the agents among
// them (see toolloop.AgentTool), whose transcripts they carry.
func (w walker) pendings(ps *[]toolloop.PendingCall) bool {
	return each(ps, func(p *toolloop.PendingCall) bool {
		return or(w.str(&p.Name), w.raw(&p.Arguments), w.str(&p.Reason), w.str(&p.Rule), w.meta(&p.Meta), w.strs(&p.Notes),
			w.pause(&p.Child), w.program(&p.Program))
	})
}

// program redacts the journal of a program whose inner calls paused the
// run (see toolloop.Inner), replacing *ps with a copy if it changes.
func (w walker) program(ps **toolloop.ProgramState) bool {
	if *ps == nil {
		return false
	}
	out := **ps
	calls := each(&out.Calls, func(c *toolloop.InnerRecord) bool {
		return or(w.str(&c.ID), w.str(&c.Name), w.raw(&c.Arguments), w.result(&c.Result))
	})
	if !or(calls, w.pendings(&out.Pending)) {
		return false
	}
	*ps = &out
	return true
}

// pause redacts a paused run's state, replacing *st with a copy if it
// changes.
func (w walker) pause(st **toolloop.PauseState) bool {
	if *st == nil {
		return false
	}
	out := **st
	results := each(&out.Results, func(r **toolloop.ToolResult) bool { return w.result(r) })
	execs := each(&out.Executions, func(x *toolloop.ToolExecution) bool {
		changed := or(w.str(&x.Name), w.str(&x.Output))
		if x.Error != nil {
			e := *x.Error
			if w.str(&e.Message) {
				x.Error = &e
				changed = true
			}
		}
		return changed
	})
	output := false
	if out.Output != nil {
		f := *out.Output
		if or(w.str(&f.Name), w.str(&f.Description), w.raw(&f.Schema)) {
			out.Output, output = &f, true
		}
	}
	if !or(w.messages(&out.Messages), results, w.pendings(&out.Pending), w.pendings(&out.Agents), execs, output,
		w.queued(&out.Queued)) {
		return false
	}
	*st = &out
	return true
}

func (w walker) approvals(as *map[string]toolloop.Approval) bool {
	var out map[string]toolloop.Approval
	for id, a := range *as {
		if or(w.str(&a.Reason), w.raw(&a.Arguments)) {
			if out == nil {
				out = maps.Clone(*as)
			}
			out[id] = a
		}
	}
	if out == nil {
		return false
	}
	*as = out
	return true
}

// extra redacts the keys and values of Meta.Extra.
func (w walker) extra(m *map[string]any) bool {
	var out map[string]any
	for k, v := range *m {
		k2, v2 := k, v
		if or(w.str(&k2), w.any(&v2)) {
			if out == nil {
				out = maps.Clone(*m)
			}
			delete(out, k)
			out[k2] = v2
		}
	}
	if out == nil {
		return false
	}
	*m = out
	return true
}

// any redacts a value of any type. A value of a type it does not know is
// redacted as its JSON, which it is then replaced by: an event log writes
// it the same way.
func (w walker) any(v *any) bool {
	switch x := (*v).(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
		float32, float64, time.Duration, time.Time:
		return false
	case string:
		if w.str(&x) {
			*v = x
			return true
		}
	case []byte:
		if w.bytes(&x) {
			*v = x
			return true
		}
	case json.RawMessage:
		if w.raw(&x) {
			*v = x
			return true
		}
	case []string:
		if w.strs(&x) {
			*v = x
			return true
		}
	case []any:
		if each(&x, w.any) {
			*v = x
			return true
		}
	case map[string]any:
		if w.extra(&x) {
			*v = x
			return true
		}
	case error:
		s := x.Error()
		if w.str(&s) {
			*v = s
			return true
		}
	default:
		return w.anyJSON(v, x)
	}
	return false
}

func (w walker) anyJSON(v *any, x any) bool {
	j, err := json.Marshal(x)
	if err != nil {
		s := fmt.Sprint(x)
		if w.str(&s) {
			*v = s
			return true
		}
		return false
	}
	raw := json.RawMessage(j)
	if w.raw(&raw) {
		*v = raw
		return true
	}
	return false
}
