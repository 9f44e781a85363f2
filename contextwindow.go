package toolloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// TranscriptEdit is a change the loop made to a run's transcript between
// turns: a context manager clearing old results or compacting old turns,
// or the wrap-up turn's message. It is reported as an
// [EventTranscriptEdited] event, so that a log replays to the transcript
// the model saw (the eventlog package applies it).
type TranscriptEdit struct {
	// Strategy names who made the edit: "clear_tool_results", "compact",
	// "wrap_up", "wrap_up_trim" (see [WrapUpTrim]), "output_retry", or a
	// ContextManager's own name.
	Strategy string `json:"strategy"`
	// Reason says why: "threshold", "overflow" (the model answered with a
	// context-length error), or a limit's description.
	Reason string `json:"reason,omitempty"`
	// Splices are the changes, in ascending order of Start and not
	// overlapping, by index into the transcript before the edit.
	Splices []Splice `json:"splices"`
	// CallIDs lists the tool calls whose results the edit removed or
	// replaced, for readers of the event.
	CallIDs []string `json:"call_ids,omitempty"`
	// TokensBefore and TokensAfter estimate the transcript's tokens (see
	// [EstimateTokens]) before and after the edit. The loop sets them.
	TokensBefore int `json:"tokens_before,omitempty"`
	TokensAfter  int `json:"tokens_after,omitempty"`
	// Usage is what making the edit cost (a compactor's summary), and Model
	// the model that spent it; the loop adds it to the run's usage and
	// cost.
	Usage Usage  `json:"usage,omitzero"`
	Model string `json:"model,omitempty"`
}

// Splice replaces the messages [Start, End) of a transcript with
// Messages. Start == End inserts.
type Splice struct {
	Start    int       `json:"start"`
	End      int       `json:"end"`
	Messages []Message `json:"messages,omitempty"`
}

// ErrBadEdit: a [TranscriptEdit] does not apply to the transcript, or the
// transcript it makes is not valid: a call without its result, a result
// without its call.
var ErrBadEdit = errors.New("toolloop: the transcript edit does not apply")

// Apply returns msgs with the edit made, in a new slice; msgs is not
// changed. It fails with ErrBadEdit when the splices are out of range or
// out of order, or when the result separates a tool call from its result.
func (e *TranscriptEdit) Apply(msgs []Message) ([]Message, error) {
	out := make([]Message, 0, len(msgs))
	at := 0
	for i, s := range e.Splices {
		if s.Start < at || s.End < s.Start || s.End > len(msgs) {
			return nil, fmt.Errorf("%w: splice %d [%d, %d) on %d messages", ErrBadEdit, i, s.Start, s.End, len(msgs))
		}
		out = append(out, msgs[at:s.Start]...)
		out = append(out, s.Messages...)
		at = s.End
	}
	out = append(out, msgs[at:]...)
	if !transcriptValid(out) {
		return nil, fmt.Errorf("%w: it leaves a tool call without its result, or a result without its call", ErrBadEdit)
	}
	return out, nil
}

// ContextManager keeps a run's transcript within the model's context. The
// loop asks each of AgentLoop.ContextManagers, in order, before every
// model request; a manager returns the edit it wants made, or nil for
// none. The loop applies the edit (which must leave every tool call paired
// with its result, or it is refused and logged), reports it as an
// [EventTranscriptEdited] event, and asks the next manager with the
// edited transcript.
//
// When the model answers a request with a context-length error
// (providers.ErrContextLength), the loop asks the managers again with
// Overflow set and, if one of them made an edit, takes the turn again,
// once; otherwise the run ends with the error. The wrap-up turn (see
// Budget.WrapUp) goes further, with or without managers: it leaves out
// the oldest turns until its request fits (see [WrapUpTrim]).
//
// ManageContext must not modify in.Messages. An error ends the run only
// when ctx is done; otherwise it is logged and the transcript is left as
// it was.
type ContextManager interface {
	ManageContext(ctx context.Context, in *ContextInput) (*TranscriptEdit, error)
}

// ContextManagerFunc adapts a function to the [ContextManager] interface.
type ContextManagerFunc func(ctx context.Context, in *ContextInput) (*TranscriptEdit, error)

// ManageContext calls f.
func (f ContextManagerFunc) ManageContext(ctx context.Context, in *ContextInput) (*TranscriptEdit, error) {
	return f(ctx, in)
}

// ContextInput is what a [ContextManager] decides on.
type ContextInput struct {
	RunID string
	// Turn is the turn about to be taken, counting from 1.
	Turn int
	// Messages is the transcript about to be sent. It must not be
	// modified.
	Messages []Message
	// Tokens estimates the request's size in the model's context: the
	// transcript and the tool specs. When the provider has reported usage,
	// the estimate starts from the tokens it counted (see
	// [EstimateTokens]).
	Tokens int
	// Window is the model's context window in tokens, from
	// AgentLoop.ModelTable or [LookupModel] by the name of the model that
	// answered last; 0 when unknown.
	Window int
	// Overflow reports that the model refused the request as too long for
	// its context: the manager should free what it can.
	Overflow bool
	// Model is the loop's model, for managers that ask a model (a
	// [Compactor] with no Model of its own).
	Model Model
	// Estimate estimates the tokens of messages as Tokens does, with the
	// same correction: a manager measures a candidate transcript with it.
	Estimate func(messages []Message) int
}

// Threshold says when a context manager acts: when the request's tokens
// pass Tokens, or pass Fraction of the model's context window. With both
// set, whichever comes first; with neither, see the manager's doc.
type Threshold struct {
	Tokens   int
	Fraction float64
}

// passed reports whether the request in in has passed t. A fraction of
// an unknown window is never passed.
func (t Threshold) passed(in *ContextInput) bool {
	if t.Tokens > 0 && in.Tokens >= t.Tokens {
		return true
	}
	return t.Fraction > 0 && in.Window > 0 && float64(in.Tokens) >= t.Fraction*float64(in.Window)
}

func (t Threshold) zero() bool { return t.Tokens <= 0 && t.Fraction <= 0 }

// turnStart returns the index of the k-th assistant message from the end
// of msgs (k >= 1): where the last k model turns begin. ok is false when
// msgs holds fewer than k turns.
func turnStart(msgs []Message, k int) (i int, ok bool) {
	for i = len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			if k--; k == 0 {
				return i, true
			}
		}
	}
	return 0, false
}

// DefaultKeepTurns is how many recent turns the context managers keep
// whole when their KeepTurns is 0.
const DefaultKeepTurns = 3

// ClearToolResults is a [ContextManager] that replaces the content of old
// tool results with a short stub naming the tool and the call, and saying
// to call the tool again for the output. The call and its result stay in
// the transcript, paired; only the result's content changes, and its
// ResultMeta.Cleared is set.
//
// It clears the results of every turn but the KeepTurns most recent, once
// the request passes When and the clearing frees at least MinFreed
// tokens, or at once when the model's context overflowed. Each clearing
// changes the transcript's prefix, which costs the provider's prompt cache
// (see [EventCacheBust]), so the defaults clear rarely and in large
// batches: past [DefaultClearTokens] or half the window, and only when
// that frees half as much again. On the task benchmark of issue 38 (300
// turns), they keep 95% of each request's bytes cacheable between
// clearings and cost 76-82% less than no clearing.
type ClearToolResults struct {
	// When says when to clear. The zero value clears once the request
	// passes half of the model's context window or DefaultClearTokens,
	// whichever is fewer (DefaultClearTokens when the window is
	// unknown). Threshold{Tokens: 1} clears whenever there is a result
	// to clear.
	When Threshold
	// KeepTurns is how many of the most recent turns keep their results;
	// 0 means DefaultKeepTurns. On overflow, at least the last turn's
	// results are kept.
	KeepTurns int
	// MinBytes leaves results smaller than this alone: their stub would
	// save little. 0 means 256.
	MinBytes int
	// MinFreed is the fewest tokens a clearing must free to be made,
	// except on overflow: a larger value clears less often, in larger
	// batches, and so breaks the prompt cache less often. 0 means half of
	// the threshold when When is zero, and any otherwise.
	MinFreed int
	// Keep, if set, exempts the results it returns true for.
	Keep func(*ToolResult) bool
	// Stub, if set, writes the text that replaces a result's content.
	Stub func(*ToolResult) string
}

// DefaultClearTokens is the most tokens a request may reach before a
// [ClearToolResults] with a zero When clears: a request of this size
// costs about $0.20 at $2 per million input tokens, uncached.
const DefaultClearTokens = 100_000

// threshold returns when c clears and the fewest tokens a clearing must
// free, for the request in.
func (c *ClearToolResults) threshold(in *ContextInput) (Threshold, int) {
	if !c.When.zero() {
		return c.When, c.MinFreed
	}
	tokens := DefaultClearTokens
	if in.Window > 0 {
		tokens = min(tokens, in.Window/2)
	}
	minFreed := c.MinFreed
	if minFreed <= 0 {
		minFreed = tokens / 2
	}
	return Threshold{Tokens: max(tokens, 1)}, minFreed
}

// ManageContext implements [ContextManager].
func (c *ClearToolResults) ManageContext(_ context.Context, in *ContextInput) (*TranscriptEdit, error) {
	when, minFreed := c.threshold(in)
	if !in.Overflow && !when.passed(in) {
		return nil, nil
	}
	keep := c.KeepTurns
	if keep <= 0 {
		keep = DefaultKeepTurns
	}
	minBytes := c.MinBytes
	if minBytes <= 0 {
		minBytes = 256
	}
	// The results to keep start with the keep-th turn from the end; a
	// transcript of no more turns than that has nothing to clear.
	cut, ok := turnStart(in.Messages, keep)
	if _, older := turnStart(in.Messages, keep+1); !ok || !older {
		return nil, nil
	}
	edit := &TranscriptEdit{Strategy: "clear_tool_results", Reason: "threshold"}
	if in.Overflow {
		edit.Reason = "overflow"
	}
	freed := 0
	for i, m := range in.Messages[:cut] {
		r := m.Result
		if m.Role != RoleTool || r == nil || r.Meta.Cleared || contentBytes(r.Content) < minBytes || (c.Keep != nil && c.Keep(r)) {
			continue
		}
		stub := c.cleared(r)
		if contentBytes(stub.Content) >= contentBytes(r.Content) {
			continue // the stub would save nothing
		}
		msg := ToolMessage(stub)
		edit.Splices = append(edit.Splices, Splice{Start: i, End: i + 1, Messages: []Message{msg}})
		edit.CallIDs = append(edit.CallIDs, r.CallID)
		freed += estimateMessage(&in.Messages[i]) - estimateMessage(&msg)
	}
	if len(edit.Splices) == 0 || (!in.Overflow && freed < minFreed) {
		return nil, nil
	}
	return edit, nil
}

// cleared returns r with its content replaced by a stub.
func (c *ClearToolResults) cleared(r *ToolResult) *ToolResult {
	var stub string
	if c.Stub != nil {
		stub = c.Stub(r)
	} else {
		what := "output"
		if r.Status == StatusError {
			what = "error output"
		}
		stub = fmt.Sprintf("[%s of %s (call %s, %d bytes) cleared to save context; call the tool again if you need it]",
			what, r.Name, r.CallID, contentBytes(r.Content))
	}
	out := *r
	out.Content = []Content{TextContent(stub)}
	if r.Error != nil {
		out.Error = &ToolError{Kind: r.Error.Kind, Message: stub}
	}
	out.Meta.Cleared = true
	out.Meta.Extra = nil
	return &out
}

// manageContext asks each context manager in turn and applies their
// edits to res.Messages. It reports whether anything changed.
func (rn *runState) manageContext(ctx context.Context, res *RunResult, overflow bool) (bool, error) {
	changed := false
	for i, m := range rn.l.ContextManagers {
		in := &ContextInput{
			RunID: rn.id, Turn: rn.turn, Messages: res.Messages, Window: rn.window(res.Messages),
			Overflow: overflow, Model: rn.l.Model, Estimate: rn.tokens.estimator(),
		}
		in.Tokens = rn.tokens.count(res.Messages)
		edit, err := rn.callManager(ctx, m, in)
		if err != nil {
			if ctx.Err() != nil {
				return changed, err
			}
			rn.logger().Warn("toolloop: a context manager failed; the transcript is unchanged",
				"manager", i, "error", err)
			continue
		}
		if edit == nil || len(edit.Splices) == 0 {
			continue
		}
		if err := rn.applyEdit(res, edit); err != nil {
			rn.logger().Error("toolloop: a context manager's edit was refused", "manager", i, "strategy", edit.Strategy, "error", err)
			continue
		}
		changed = true
	}
	return changed, nil
}

// callManager calls m, turning a panic into an error.
func (rn *runState) callManager(ctx context.Context, m ContextManager, in *ContextInput) (edit *TranscriptEdit, err error) {
	defer func() {
		if p := recover(); p != nil {
			edit, err = nil, fmt.Errorf("context manager panicked: %v", p)
		}
	}()
	return m.ManageContext(ctx, in)
}

// applyEdit makes edit on res.Messages and reports it.
func (rn *runState) applyEdit(res *RunResult, edit *TranscriptEdit) error {
	out, err := edit.Apply(res.Messages)
	if err != nil {
		return err
	}
	e := *edit
	e.Splices = slices.Clone(edit.Splices)
	e.TokensBefore = rn.tokens.count(res.Messages)
	e.TokensAfter = rn.tokens.edited(res.Messages, edit, out)
	if rn.observed {
		rn.cache.edited(edit, len(res.Messages))
	}
	res.Messages = out
	res.Usage.Add(edit.Usage)
	rn.price(res, edit.Model, edit.Usage)
	rn.emit(&Event{Type: EventTranscriptEdited, Edit: &e})
	return nil
}

// window is the context window of the model that answered last.
func (rn *runState) window(msgs []Message) int {
	name := rn.lastModel
	for i := len(msgs) - 1; name == "" && i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			name = msgs[i].Model
		}
	}
	info, _ := rn.l.lookupModel(name)
	return info.ContextWindow
}

// tokenCounter estimates a request's tokens, starting from the usage the
// provider reported for the last request when it can.
type tokenCounter struct {
	// known is the tokens of the first n messages (and the tool specs), as
	// the provider counted them: the last request's input plus its output.
	known, n int
	// specs estimates the tool specs.
	specs int
	// ratio corrects estimates: the provider's count over the estimate, at
	// the last report; 0 until then.
	ratio float64
	// raw is the uncorrected estimate of the first rawN messages, kept so
	// that each report costs only the messages since the last.
	raw, rawN int
}

// rawEstimate estimates msgs, which extend the messages of the last call,
// without correction.
func (tc *tokenCounter) rawEstimate(msgs []Message) int {
	if tc.rawN > len(msgs) {
		tc.raw, tc.rawN = 0, 0
	}
	tc.raw += EstimateTokens(msgs[tc.rawN:])
	tc.rawN = len(msgs)
	return tc.raw
}

// reported records the usage of the response to a request of n messages;
// the response is message n.
func (tc *tokenCounter) reported(msgs []Message, u Usage) {
	if u.InputTokens <= 0 {
		return
	}
	est := tc.rawEstimate(msgs[:len(msgs)-1]) + tc.specs
	tc.known, tc.n = int(u.InputTokens+u.OutputTokens), len(msgs)
	if est > 0 {
		tc.ratio = min(max(float64(u.InputTokens)/float64(est), 0.25), 4)
	}
}

// edited moves the count past an edit of old: the estimates of what it
// removed come off, those of what it inserted go on, so that the
// provider's count of the rest still holds. It returns the new count.
func (tc *tokenCounter) edited(old []Message, edit *TranscriptEdit, out []Message) int {
	before := tc.count(old)
	removed, inserted := 0, 0
	for _, s := range edit.Splices {
		removed += EstimateTokens(old[s.Start:s.End])
		inserted += EstimateTokens(s.Messages)
	}
	after := max(before-tc.scale(removed)+tc.scale(inserted), 0)
	tc.known, tc.n = after, len(out)
	if tc.rawN == len(old) {
		tc.raw, tc.rawN = max(tc.raw-removed+inserted, 0), len(out)
	} else {
		tc.raw, tc.rawN = 0, 0
	}
	return after
}

// count returns the tokens of msgs, which extend the messages of the
// last count (the loop only appends between edits, and tells the
// counter of each edit). It remembers the answer, so a run's counts cost
// no more per turn at turn 1,000 than at turn 10.
func (tc *tokenCounter) count(msgs []Message) int {
	var n int
	if tc.n > 0 && tc.n <= len(msgs) {
		n = tc.known + tc.scale(EstimateTokens(msgs[tc.n:]))
	} else {
		n = tc.scale(EstimateTokens(msgs) + tc.specs)
	}
	tc.known, tc.n = n, len(msgs)
	return n
}

func (tc *tokenCounter) scale(n int) int {
	if tc.ratio == 0 {
		return n
	}
	return int(float64(n) * tc.ratio)
}

// estimator estimates a candidate transcript with the current correction.
func (tc *tokenCounter) estimator() func([]Message) int {
	ratio := tc.ratio
	specs := tc.specs
	return func(msgs []Message) int {
		c := tokenCounter{ratio: ratio, specs: specs}
		return c.count(msgs)
	}
}
