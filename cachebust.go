package toolloop

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// CacheBust says why a model request does not begin with the whole of
// the run's previous request, so that the provider's prompt cache,
// which serves a request's prefix as far as it repeats an earlier one,
// cannot serve the new request from what the previous one wrote. It is
// the payload of an [EventCacheBust] event.
type CacheBust struct {
	// Reason names what changed: the first of the request's parts that
	// differs, in the order a provider lays out a prompt (tools, system
	// messages, the other messages). See [CacheBustReason].
	Reason CacheBustReason `json:"reason"`
	// Detail says more: the strategies of the transcript edits for
	// BustEdit (as TranscriptEdit.Strategy names them, joined with "+"),
	// the tools added, removed or changed for BustTools, the old and new
	// tool choice for BustToolChoice.
	Detail string `json:"detail,omitempty"`
	// Kept counts the leading messages of the previous request that the
	// new request repeats unchanged, and Previous the previous request's
	// messages: a bust of the messages has Kept < Previous, and Kept is
	// the index of the first message that differs.
	Kept     int `json:"kept"`
	Previous int `json:"previous"`
}

// CacheBustReason names what changed in a request's prefix; see
// [CacheBust].
type CacheBustReason string

// The reasons of a cache bust.
const (
	// BustTools: the tools sent differ (added, removed, changed or in
	// another order): a tool search loaded a deferred tool, a ToolFilter
	// or a before-model hook chose differently, the registry changed, or
	// the job tools were offered. Providers put tools first, so this
	// costs the whole cache.
	BustTools CacheBustReason = "tools"
	// BustSystem: a system message among the kept ones changed, was
	// added or was removed (a before-model hook that writes a system
	// prompt with the time in it does this on every turn).
	BustSystem CacheBustReason = "system"
	// BustToolChoice: the tool choice changed, as on the wrap-up turn
	// (see Budget.WrapUp); providers such as Anthropic key the cache of
	// the messages on it.
	BustToolChoice CacheBustReason = "tool_choice"
	// BustOutput: the native output format changed (see [NativeOutput]).
	BustOutput CacheBustReason = "output"
	// BustEdit: a transcript edit made since the previous request (a
	// context manager's, see [TranscriptEdit]) changed a message the
	// previous request had; Detail names its strategy, such as
	// "clear_tool_results" or "compact".
	BustEdit CacheBustReason = "edit"
	// BustMessages: a message the previous request had changed, and no
	// edit of the loop did it: a before-model hook's doing.
	BustMessages CacheBustReason = "messages"
)

// cacheWatch is what a run keeps of its previous model request, to tell
// whether the next one repeats it (see EventCacheBust). It keeps the
// request's slices, not copies: the loop only appends to a transcript
// between edits, and an edit makes a new slice.
type cacheWatch struct {
	// on: a previous request is kept; own: its messages were the run's
	// transcript as it was, not a hook's version of it.
	on, own bool
	msgs    []Message
	tools   []ToolSpec
	choice  ToolChoice
	output  *OutputFormat
	// editAt is the first index an edit since the previous request
	// changed (len(msgs) or more when none did), and edits their
	// strategies.
	editAt int
	edits  []string
}

// edited records an edit made to a transcript of n messages.
func (w *cacheWatch) edited(edit *TranscriptEdit, n int) {
	if !w.on || len(edit.Splices) == 0 || edit.Splices[0].Start >= n {
		return // no previous request, or the edit only appends
	}
	// Splices are in order: the first starts earliest. An index below
	// the first edit's start is untouched by later edits too.
	w.editAt = min(w.editAt, edit.Splices[0].Start)
	if !slices.Contains(w.edits, edit.Strategy) {
		w.edits = append(w.edits, edit.Strategy)
	}
}

// check compares req, a request for the run's transcript msgs, with the
// previous request and keeps it for the next; it returns the bust to
// report, or nil, and how many leading messages of the previous request
// req repeats (0 for a first request).
func (w *cacheWatch) check(req *Request, msgs []Message) (*CacheBust, int) {
	prev := *w
	own := sameSlice(req.Messages, msgs)
	*w = cacheWatch{on: true, own: own, msgs: req.Messages, tools: req.Tools, choice: req.ToolChoice, output: req.Output,
		editAt: len(req.Messages), edits: prev.edits[:0]}
	if !prev.on {
		return nil, 0
	}
	var kept int
	switch {
	case own && prev.own && prev.editAt >= len(prev.msgs) && len(msgs) >= len(prev.msgs):
		// The loop only appends to its transcript between edits, and
		// there was none: no need to look.
		kept = len(prev.msgs)
	case own && prev.own && prev.editAt <= len(msgs):
		// The edits left the messages before editAt as they were.
		kept = prev.editAt + keptPrefix(prev.msgs[prev.editAt:], msgs[prev.editAt:])
	default:
		kept = keptPrefix(prev.msgs, req.Messages)
	}
	var reason CacheBustReason
	var detail string
	switch {
	case !sameTools(prev.tools, req.Tools):
		reason, detail = BustTools, toolsChange(prev.tools, req.Tools)
	case kept < len(prev.msgs) && prev.editAt > kept && systemAt(prev.msgs, req.Messages, kept):
		reason = BustSystem
	case prev.choice != req.ToolChoice:
		reason, detail = BustToolChoice, choiceText(prev.choice)+" → "+choiceText(req.ToolChoice)
	case !sameOutput(prev.output, req.Output):
		reason = BustOutput
	case kept < len(prev.msgs) && prev.editAt <= kept:
		reason, detail = BustEdit, strings.Join(prev.edits, "+")
	case kept < len(prev.msgs):
		reason = BustMessages
	default:
		return nil, kept
	}
	return &CacheBust{Reason: reason, Detail: detail, Kept: kept, Previous: len(prev.msgs)}, kept
}

// keptPrefix counts the leading messages of prev that cur repeats. Two
// slices over the same array repeat each other where they overlap: the
// loop changes a transcript only by appending or by an edit, which makes
// a new slice. Otherwise messages compare field by field, by identity
// first.
func keptPrefix(prev, cur []Message) int {
	n := min(len(prev), len(cur))
	if n == 0 || &prev[0] == &cur[0] {
		return n
	}
	for i := range n {
		if !sameMessage(&prev[i], &cur[i]) {
			return i
		}
	}
	return n
}

// sameMessage reports whether a and b send the same: role, content,
// calls and result. Usage, model and stop reason are the loop's notes,
// which providers do not send.
func sameMessage(a, b *Message) bool {
	if a.Role != b.Role {
		return false
	}
	if !sameSlice(a.Content, b.Content) && !reflect.DeepEqual(a.Content, b.Content) {
		return false
	}
	if !sameSlice(a.ToolCalls, b.ToolCalls) && !reflect.DeepEqual(a.ToolCalls, b.ToolCalls) {
		return false
	}
	ra, rb := a.Result, b.Result
	if ra == rb {
		return true
	}
	if ra == nil || rb == nil {
		return false
	}
	return ra.CallID == rb.CallID && ra.Name == rb.Name && ra.Status == rb.Status &&
		(sameSlice(ra.Content, rb.Content) || reflect.DeepEqual(ra.Content, rb.Content)) &&
		reflect.DeepEqual(ra.Error, rb.Error)
}

// sameSlice reports whether a and b are the same slice of the same array.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// systemAt reports whether the first message that differs, at i, is a
// system message in either request.
func systemAt(prev, cur []Message, i int) bool {
	return i < len(prev) && prev[i].Role == RoleSystem || i < len(cur) && cur[i].Role == RoleSystem
}

// sameTools reports whether a and b send the same tools, in the same
// order: name, description and input schema, what providers send.
func sameTools(a, b []ToolSpec) bool {
	if sameSlice(a, b) {
		return true
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameSpec(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

func sameSpec(a, b *ToolSpec) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.InputSchema, b.InputSchema)
}

func sameOutput(a, b *OutputFormat) bool {
	if a == b {
		return true
	}
	return a != nil && b != nil && a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.Schema, b.Schema)
}

// toolsChange describes how the tools changed: the names added, removed
// and changed, a few of each.
func toolsChange(prev, cur []ToolSpec) string {
	old := make(map[string]*ToolSpec, len(prev))
	for i := range prev {
		old[prev[i].Name] = &prev[i]
	}
	var added, changed []string
	for i := range cur {
		t := &cur[i]
		o, ok := old[t.Name]
		switch {
		case !ok:
			added = append(added, t.Name)
		case !sameSpec(o, t):
			changed = append(changed, t.Name)
		}
		delete(old, t.Name)
	}
	removed := make([]string, 0, len(old))
	for i := range prev { // in the order sent, not the map's
		if _, ok := old[prev[i].Name]; ok {
			removed = append(removed, prev[i].Name)
		}
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", added}, {"removed", removed}, {"changed", changed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+someNames(p.names))
		}
	}
	if len(parts) == 0 {
		return "reordered"
	}
	return strings.Join(parts, "; ")
}

// someNames lists up to five names, and how many more there are.
func someNames(names []string) string {
	const most = 5
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + " and " + strconv.Itoa(len(names)-most) + " more"
}

func choiceText(c ToolChoice) string {
	s := string(c.Mode)
	if s == "" {
		s = "auto"
	}
	if c.Name != "" {
		s += " " + c.Name
	}
	return s
}
