package temporal

import (
	"context"
	"errors"
	"fmt"
	"slices"

	tsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
)

// contextInput is the context activity's argument: the transcript, and
// what the loop's context managers are told about it.
type contextInput struct {
	RunID    string             `json:"run_id"`
	Turn     int                `json:"turn"`
	Messages []toolloop.Message `json:"messages"`
	Overflow bool               `json:"overflow,omitempty"`
	// LastModel names the model that answered last, for the window.
	LastModel string       `json:"last_model,omitempty"`
	Tokens    tokenCounter `json:"tokens"`
}

// contextOutput is the context activity's result: the edits the managers
// made, in order, each applying to the transcript the one before left.
type contextOutput struct {
	Edits []pricedEdit `json:"edits,omitempty"`
}

// pricedEdit is an edit with what making it cost, priced on the worker.
type pricedEdit struct {
	Edit     *toolloop.TranscriptEdit `json:"edit"`
	Cost     float64                  `json:"cost_usd,omitempty"`
	Unpriced bool                     `json:"unpriced,omitempty"`
}

// manageContext is the context activity: it asks the loop's context
// managers, in order, as AgentLoop.Run does before a model request, and
// returns the edits they made. It runs in an activity because a manager
// may ask a model (a Compactor does); the workflow then makes the same
// edits on its transcript with TranscriptEdit.Apply.
//
// A manager that fails or panics is logged and skipped, and an edit that
// does not apply is refused, as in process; only a cancelled activity
// fails.
func (ag *agent) manageContext(ctx context.Context, in contextInput) (*contextOutput, error) {
	l := ag.Loop
	stop := keepAlive(ctx, ag.heartbeatEvery(), &beat{hb: heartbeat{Turn: in.Turn}})
	defer stop()
	msgs, tc := in.Messages, in.Tokens
	out := &contextOutput{}
	for i, m := range l.ContextManagers {
		ci := &toolloop.ContextInput{
			RunID: in.RunID, Turn: in.Turn, Messages: msgs, Window: ag.window(in.LastModel, msgs),
			Overflow: in.Overflow, Model: l.Model, Estimate: tc.estimator(),
		}
		ci.Tokens = tc.count(msgs)
		edit, err := callManager(ctx, m, ci)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			ag.logWarn("toolloop: a context manager failed; the transcript is unchanged", "manager", i, "error", err)
			continue
		}
		if edit == nil || len(edit.Splices) == 0 {
			continue
		}
		next, err := edit.Apply(msgs)
		if err != nil {
			ag.logWarn("toolloop: a context manager's edit was refused", "manager", i, "strategy", edit.Strategy, "error", err)
			continue
		}
		e := *edit
		e.Splices = slices.Clone(edit.Splices)
		e.TokensBefore = tc.count(msgs)
		e.TokensAfter = tc.edited(msgs, edit, next)
		msgs = next
		pe := pricedEdit{Edit: &e}
		pe.Cost, pe.Unpriced = ag.price(e.Model, e.Usage)
		out.Edits = append(out.Edits, pe)
		ag.emit(toolloop.Event{Type: toolloop.EventTranscriptEdited, RunID: in.RunID, Turn: in.Turn, Edit: &e})
	}
	return out, nil
}

// callManager calls m, turning a panic into an error.
func callManager(ctx context.Context, m toolloop.ContextManager, in *toolloop.ContextInput) (edit *toolloop.TranscriptEdit, err error) {
	defer func() {
		if p := recover(); p != nil {
			edit, err = nil, fmt.Errorf("context manager panicked: %v", p)
		}
	}()
	return m.ManageContext(ctx, in)
}

// window is the context window of the model that answered last (or, when
// none named itself, of the last assistant message that names one), as
// AgentLoop.Run finds it.
func (ag *agent) window(lastModel string, msgs []toolloop.Message) int {
	name := lastModel
	for i := len(msgs) - 1; name == "" && i >= 0; i-- {
		if msgs[i].Role == toolloop.RoleAssistant {
			name = msgs[i].Model
		}
	}
	info, _ := ag.Loop.ModelInfo(name)
	return info.ContextWindow
}

// price is what u costs on model, from the loop's table and the built-in
// one, and whether the model has no price (usage that cannot be counted).
// No usage costs nothing and is not unpriced.
func (ag *agent) price(model string, u toolloop.Usage) (cost float64, unpriced bool) {
	if u == (toolloop.Usage{}) {
		return 0, false
	}
	if info, ok := ag.Loop.ModelInfo(model); ok && info.Price != nil {
		return info.Price.Cost(u), false
	}
	return 0, true
}

// manageContext runs the context activity, with the given activity ID, on
// ctx and makes its edits on the run's transcript. It reports whether anything changed. The
// activity's failure leaves the transcript as it was, as a failing manager
// does in process, unless ctx is done: then it returns the error.
func (rn *run) manageContext(ctx workflow.Context, overflow bool, id string) (bool, error) {
	ag, res := rn.ag, rn.res
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          id,
		StartToCloseTimeout: ag.ModelTimeout,
		HeartbeatTimeout:    ag.HeartbeatTimeout,
		RetryPolicy:         ag.ModelRetry,
		Summary:             "context managers " + id,
	})
	var out contextOutput
	err := rn.wait(actx, workflow.ExecuteActivity(actx, ag.contextActivity, contextInput{
		RunID: res.RunID, Turn: rn.turn, Messages: res.Messages, Overflow: overflow,
		LastModel: rn.lastModel, Tokens: rn.tokens,
	}), &out)
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		workflow.GetLogger(rn.ctx).Warn("toolloop: the context managers failed; the transcript is unchanged", "error", err)
		return false, nil
	}
	changed := false
	for _, pe := range out.Edits {
		if pe.Edit == nil {
			continue
		}
		next, err := pe.Edit.Apply(res.Messages)
		if err != nil {
			// The activity applied it to the same transcript: this cannot
			// happen unless the history was tampered with.
			workflow.GetLogger(rn.ctx).Error("toolloop: an edit from the context activity does not apply", "error", err)
			continue
		}
		rn.tokens.edited(res.Messages, pe.Edit, next)
		res.Messages = next
		res.Usage.Add(pe.Edit.Usage)
		rn.addCost(pe.Cost, pe.Unpriced)
		changed = true
	}
	return changed, nil
}

// isContextLength reports whether a model turn failed because the request
// was too long for the model's context (providers.ErrContextLength), and
// the tokens of the tool specs it sent.
func isContextLength(err error) (specTokens int, ok bool) {
	var app *tsdk.ApplicationError
	if !errors.As(err, &app) || app.Type() != errTypeContextLength {
		return 0, false
	}
	if app.HasDetails() {
		_ = app.Details(&specTokens)
	}
	return specTokens, true
}

// tokenCounter estimates a request's tokens as AgentLoop.Run does for its
// context managers (toolloop.ContextInput.Tokens): from the usage the
// provider reported for the last request when it can, and from
// toolloop.EstimateTokens for what came after, scaled by how far off the
// estimate was. The workflow keeps it up to date (it is workflow state,
// carried across continue-as-new); the context activity gets a copy. Its
// arithmetic must stay the core's, or compaction thresholds drift.
type tokenCounter struct {
	// Known is the tokens of the first N messages (and the tool specs), as
	// the provider counted them: the last request's input plus its output.
	Known int `json:"known,omitempty"`
	N     int `json:"n,omitempty"`
	// Specs estimates the tool specs of the last request.
	Specs int `json:"specs,omitempty"`
	// Ratio corrects estimates: the provider's count over the estimate at
	// the last report; 0 until then.
	Ratio float64 `json:"ratio,omitempty"`
}

// reported records the usage of the response to a request of
// len(msgs)-1 messages; the response is the last message.
func (tc *tokenCounter) reported(msgs []toolloop.Message, u toolloop.Usage) {
	if u.InputTokens <= 0 {
		return
	}
	est := toolloop.EstimateTokens(msgs[:len(msgs)-1]) + tc.Specs
	tc.Known, tc.N = int(u.InputTokens+u.OutputTokens), len(msgs)
	if est > 0 {
		tc.Ratio = min(max(float64(u.InputTokens)/float64(est), 0.25), 4)
	}
}

// edited moves the count past an edit of old, and returns the new count.
func (tc *tokenCounter) edited(old []toolloop.Message, edit *toolloop.TranscriptEdit, out []toolloop.Message) int {
	before := tc.count(old)
	removed, inserted := 0, 0
	for _, s := range edit.Splices {
		removed += toolloop.EstimateTokens(old[s.Start:s.End])
		inserted += toolloop.EstimateTokens(s.Messages)
	}
	after := max(before-tc.scale(removed)+tc.scale(inserted), 0)
	tc.Known, tc.N = after, len(out)
	return after
}

func (tc *tokenCounter) count(msgs []toolloop.Message) int {
	if tc.N > 0 && tc.N <= len(msgs) {
		return tc.Known + tc.scale(toolloop.EstimateTokens(msgs[tc.N:]))
	}
	return tc.scale(toolloop.EstimateTokens(msgs) + tc.Specs)
}

func (tc *tokenCounter) scale(n int) int {
	if tc.Ratio == 0 {
		return n
	}
	return int(float64(n) * tc.Ratio)
}

// estimator estimates a candidate transcript with the current correction.
func (tc *tokenCounter) estimator() func([]toolloop.Message) int {
	ratio, specs := tc.Ratio, tc.Specs
	return func(msgs []toolloop.Message) int {
		c := tokenCounter{Ratio: ratio, Specs: specs}
		return c.count(msgs)
	}
}

// estimateSpecs estimates the tokens tool specs take in a request, as the
// core does.
func estimateSpecs(specs []toolloop.ToolSpec) int {
	bytes := 0
	for i := range specs {
		s := &specs[i]
		bytes += len(s.Name) + len(s.Description) + len(s.InputSchema) + 16
	}
	return (bytes + 3) / 4
}
