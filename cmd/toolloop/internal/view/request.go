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

// request is what the loop sent the model for a turn, from the turn's
// model.request event: the messages the previous request did not have
// (all of them on a run's first request: its system and user prompts),
// the tools offered, the tool choice, the output format and the token
// estimate against the model's context window. Logs without the payload
// (older ones, or written without transient events) have no request.
type request struct {
	At float64 `json:"at"`
	// From is the index of Messages' first in the request; Count counts
	// the request's messages.
	From     int        `json:"from"`
	Count    int        `json:"count"`
	Messages []*message `json:"messages,omitempty"`
	// Left counts the new messages beyond maxRequestMessages, not listed.
	Left int `json:"left,omitempty"`
	// Tools names the tools offered when they differ from the run's
	// previous request's; SameTools says they do not (then only
	// ToolCount is given, to keep pages small).
	Tools     []string `json:"tools,omitempty"`
	ToolCount int      `json:"toolCount"`
	SameTools bool     `json:"sameTools,omitempty"`
	// Loaded are the offered tools the model loaded with the tool search.
	Loaded []string `json:"loaded,omitempty"`
	Choice string   `json:"choice,omitempty"`
	Output string   `json:"output,omitempty"`
	Tokens int      `json:"tokens"`
	Window int      `json:"window,omitempty"`
	// Again counts the turn's further requests (a turn sent back): their
	// new messages follow the first's.
	Again int `json:"again,omitempty"`
}

// message is one message of a request, as the model saw it.
type message struct {
	Role string `json:"role"`
	Text *text  `json:"text,omitempty"`
	// Calls, on an assistant message, are the calls it asked for, as
	// "name (id)".
	Calls []string `json:"calls,omitempty"`
	// CallID, Tool and Error describe a tool result.
	CallID string `json:"callId,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Error  bool   `json:"error,omitempty"`
}

// maxRequestMessages bounds the messages one request lists, and
// maxNames the tools it names (the count says how many there are) and the
// calls a message names.
const (
	maxRequestMessages = 200
	maxNames           = 1000
)

// names bounds a list of names for the page: at most maxNames, each cut.
func (b *builder) names(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(list), maxNames))
	for _, n := range list[:min(len(list), maxNames)] {
		out = append(out, textString(b.cut(n)))
	}
	return out
}

// request folds a model.request event into its turn.
func (b *builder) request(r *run, t *turn, e *toolloop.Event) {
	info := e.Request
	if info == nil {
		return
	}
	q := t.Request
	if q == nil {
		q = &request{At: b.ms(e.Time)}
		t.Request = q
	} else {
		q.Again++
	}
	q.From, q.Count = info.From, info.Messages
	for _, m := range e.Messages {
		if len(q.Messages) >= maxRequestMessages {
			q.Left++
			continue
		}
		q.Messages = append(q.Messages, b.message(m))
	}
	q.ToolCount, q.Loaded, q.Output = len(info.Tools), b.names(info.Loaded), textString(b.cut(info.Output))
	q.Tools, q.SameTools = nil, false
	if r.tools != nil && slices.Equal(r.tools, info.Tools) {
		q.SameTools = true
	} else {
		q.Tools = b.names(info.Tools)
	}
	r.tools = slices.Clip(append([]string{}, info.Tools...))
	q.Choice = string(info.ToolChoice.Mode)
	if info.ToolChoice.Name != "" {
		q.Choice += " " + info.ToolChoice.Name
	}
	q.Choice = textString(b.cut(q.Choice))
	q.Tokens, q.Window = info.Tokens, info.Window
}

// prompt gives r the messages it started with when its first turn has
// no request to show them.
func (b *builder) prompt(r *run) {
	if len(r.Turns) > 0 && r.Turns[0].Request != nil {
		return
	}
	for i, m := range r.started {
		if i == maxRequestMessages {
			break
		}
		r.Prompt = append(r.Prompt, b.message(m))
	}
}

func (b *builder) message(m toolloop.Message) *message {
	out := &message{Role: string(m.Role)}
	if res := m.Result; res != nil {
		out.CallID, out.Tool, out.Error = res.CallID, res.Name, res.IsError()
		s := res.Text()
		if s == "" && res.Error != nil {
			s = res.Error.Message
		}
		out.Text = b.cut(s)
		return out
	}
	out.Text = b.cut(m.Text())
	for i, tc := range m.ToolCalls {
		if i == maxNames {
			out.Calls = append(out.Calls, strconv.Itoa(len(m.ToolCalls)-i)+" more")
			break
		}
		out.Calls = append(out.Calls, textString(b.cut(tc.Name+" ("+tc.ID+")")))
	}
	return out
}

// stages is a call's time by stage, in milliseconds, from its completion
// event's toolloop.CallTiming. The stages run in order and end with the
// call: Start is when the first began, on the page's clock (it may be
// before the call's start event: the loop times a call from when the
// turn handed it over). Paused is the wait of a call that paused for
// approval, from its start to its resumption's stages. Queue is the wait
// from the model's response to the stages, -1 when the log does not say.
type stages struct {
	Start    float64 `json:"start"`
	Paused   float64 `json:"paused,omitempty"`
	Queue    float64 `json:"queue"`
	Checks   float64 `json:"checks"`
	Approval float64 `json:"approval"`
	PreHooks float64 `json:"preHooks"`
	Tool     float64 `json:"tool"`
	After    float64 `json:"after"`
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func newStages(ct *toolloop.CallTiming) *stages {
	return &stages{Queue: -1, Checks: msOf(ct.Checks), Approval: msOf(ct.Approval), PreHooks: msOf(ct.PreHooks),
		Tool: msOf(ct.Tool), After: msOf(ct.After)}
}

func (tm *stages) total() float64 { return tm.Checks + tm.Approval + tm.PreHooks + tm.Tool + tm.After }

// spent says what a turn's time went to, in milliseconds: the model (its
// request to its response), the calls (while any ran, less the waits
// for approval), the waits for approval (a paused call's pause among
// them), and the rest (queueing, the loop's own work).
type spent struct {
	Model    float64 `json:"model"`
	Tools    float64 `json:"tools"`
	Approval float64 `json:"approval"`
	Other    float64 `json:"other"`
}

// span is an interval of milliseconds.
type span struct{ from, to float64 }

// union measures the union of spans.
func union(ss []span) float64 {
	slices.SortFunc(ss, func(x, y span) int { return cmp.Compare(x.from, y.from) })
	var sum, end float64
	started := false
	for _, s := range ss {
		if s.to <= s.from {
			continue
		}
		if !started || s.from > end {
			sum += s.to - s.from
			end, started = s.to, true
		} else if s.to > end {
			sum += s.to - end
			end = s.to
		}
	}
	return sum
}

// finishTiming settles the calls' queue times and the turn's spent,
// once the turn's times are known. A turn none of whose calls has a
// timing (an older log) gets neither.
func (b *builder) finishTiming(t *turn) {
	var calls, waits []span
	timed := false
	for _, c := range t.Calls {
		tm := c.Timing
		if tm == nil || !c.done {
			continue
		}
		timed = true
		end := c.At + c.Dur
		// The stages end with the call; a call that paused for a person
		// waited from its start to the stages of its resumption.
		tm.Start = end - tm.total()
		if c.Asked && tm.Start > c.At {
			tm.Paused = tm.Start - c.At
			waits = append(waits, span{c.At, tm.Start})
		}
		begin := min(c.At, tm.Start)
		if !t.response.IsZero() {
			tm.Queue = max(begin-b.ms(t.response), 0)
		}
		calls = append(calls, span{begin, end})
		at := tm.Start + tm.Checks
		waits = append(waits, span{at, at + tm.Approval})
	}
	if !timed {
		return
	}
	s := &spent{Approval: union(waits)}
	s.Tools = max(union(calls)-s.Approval, 0)
	if t.ModelDur > 0 {
		s.Model = t.ModelDur
	}
	s.Other = max(t.Dur-s.Model-s.Tools-s.Approval, 0)
	t.Spent = s
}

// isOutput says c is a call of the output tool: the tool the loop
// offers the model to give its typed answer with (see
// toolloop.OutputFormat) when it is not sent the format natively. The
// loop's own tools are builtins of source "toolloop": the output tool,
// the tool search and the job tools.
func isOutput(c *call) bool {
	return c.Source == string(toolloop.SourceBuiltin)+":toolloop" && c.Tool != toolloop.ToolSearchName && !strings.HasPrefix(c.Tool, "job_")
}

// finishOutput marks the output tool's calls and, on a turn that
// answered in text to a request for a native output format, the answer.
func (b *builder) finishOutput(t *turn) {
	for _, c := range t.Calls {
		if isOutput(c) {
			c.Output = true
		}
	}
	if t.Request == nil || t.Request.Output == "" || len(t.Calls) > 0 || t.answer == "" {
		return
	}
	s := strings.TrimSpace(t.answer)
	if strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") && len(s) >= 6 {
		s = strings.TrimSpace(strings.TrimSuffix(s[3:], "```"))
		if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[\"") {
			s = s[i+1:]
		}
	}
	if json.Valid([]byte(s)) {
		t.Answer = b.cut(pretty(json.RawMessage(s)))
		t.AnswerName = t.Request.Output
	}
}

// approvalNote begins the note the loop adds to the result of a call
// whose arguments a person edited when approving it.
const approvalNote = "Note: the arguments were edited when the call was approved"
