package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// control is a run's state for the turn controls (tool filter, deferred
// tools, typed output, turn processors); nil for a loop that uses none of
// them, which then pays nothing for them.
type control struct {
	// search is the tool search tool, when AgentLoop.Deferred is set.
	search *entry
	out    *outputState // nil without an output format

	sendBacks int // turns sent back in a row

	// loaded holds the deferred tools the transcript has loaded, as of the
	// last model request; known is false outside Run (RunCall).
	loaded map[string]bool
	known  bool

	// The tools of the last turn, reused while the filter picks the same
	// ones from the same registry snapshot.
	lastFrom  []ToolInfo
	lastPick  []bool
	lastTools []ToolSpec
}

// setup prepares the run's turn controls; output overrides the loop's
// Output. It fails if the output format is unusable.
func (rn *runState) setup(output *OutputFormat) error {
	l := rn.l
	rn.output = output
	if output == nil {
		output = l.Output
	}
	if l.Deferred == nil && l.ToolFilter == nil && output == nil && len(l.TurnProcessors) == 0 {
		return nil
	}
	c := &control{}
	if l.Deferred != nil {
		proto, err := searchSchema()
		if err != nil {
			return fmt.Errorf("toolloop: tool search: %w", err)
		}
		e := *proto
		e.tool = &searchTool{rn: rn}
		c.search = &e
	}
	if output != nil {
		out, err := newOutputState(rn, output)
		if err != nil {
			return err
		}
		c.out = out
	}
	rn.ctl = c
	return nil
}

// resolveTool resolves a call's tool name: the tools the loop offers
// itself first, then the registry.
func (rn *runState) resolveTool(ctx context.Context, name string) *entry {
	if rn.base != nil {
		if e := rn.jobTool(ctx, name); e != nil {
			return e
		}
	}
	if c := rn.ctl; c != nil {
		if c.search != nil && name == ToolSearchName {
			return c.search
		}
		if c.out != nil && c.out.tool != nil && name == c.out.format.Name {
			return c.out.tool
		}
	}
	if rn.l.Tools == nil {
		return nil
	}
	return rn.l.Tools.resolve(ctx, name)
}

// unloaded reports whether e is a deferred tool the transcript had not
// loaded when the model asked for the call.
func (rn *runState) unloaded(e *entry) bool {
	c, d := rn.ctl, rn.l.Deferred
	if c == nil || !c.known || d == nil || e.source == loopSource && e.kind == SourceBuiltin {
		return false
	}
	info := ToolInfo{ToolSpec: e.spec, Source: e.kind, SourceName: e.source}
	return !c.loaded[e.spec.Name] && d(&info)
}

// request builds the request for a model turn: the tools the filters let
// through, the loop's own tools, the tool choice and output format, then
// the before-model hooks.
func (rn *runState) request(ctx context.Context, msgs []Message, choice ToolChoice) (*ModelTurn, error) {
	l := rn.l
	if choice == (ToolChoice{}) {
		choice = l.ToolChoice
	}
	req := &Request{Messages: msgs, ToolChoice: choice}
	c := rn.ctl
	if c == nil {
		if l.Tools != nil {
			req.Tools = l.Tools.Specs(ctx)
		}
		rn.jobRequest(req)
		turn := &ModelTurn{TurnState: TurnState{RunID: rn.id, Turn: rn.turn, Messages: msgs}, Request: req}
		if len(l.Hooks.BeforeModel) == 0 {
			return turn, nil
		}
		return rn.beforeModel(ctx, turn)
	}
	st := TurnState{RunID: rn.id, Turn: rn.turn, Messages: msgs}
	if l.Deferred != nil {
		st.Loaded = loadedTools(msgs)
		c.loaded, c.known = st.Loaded, true
	}
	if l.Tools != nil {
		req.Tools = c.pickTools(ctx, rn, &st)
	}
	if c.search != nil || c.out != nil && c.out.tool != nil {
		own := make([]ToolSpec, 0, len(req.Tools)+2)
		own = append(own, req.Tools...)
		if c.search != nil {
			own = append(own, c.search.spec)
		}
		if c.out != nil && c.out.tool != nil {
			if choice.Mode == ToolChoiceNone {
				// A turn without tools (the wrap-up turn) may still
				// give the typed answer: the output tool alone.
				own, req.ToolChoice = own[:0], ToolChoice{Mode: ToolChoiceAuto}
			}
			if len(own) == 0 && choice.Mode == ToolChoiceAuto {
				// Nothing else to call: the answer is the call.
				req.ToolChoice = ToolChoice{Mode: ToolChoiceRequired, Name: c.out.format.Name}
			}
			own = append(own, c.out.tool.spec)
		}
		req.Tools = own
	}
	if c.out != nil && c.out.tool == nil {
		req.Output = c.out.format
	}
	rn.jobRequest(req)
	turn := &ModelTurn{TurnState: st, Request: req}
	if len(l.Hooks.BeforeModel) == 0 {
		return turn, nil
	}
	return rn.beforeModel(ctx, turn)
}

// pickTools returns the specs of the registry's tools that the tool
// filter and the deferred tools let through on this turn, and the tool a
// named tool choice names.
func (c *control) pickTools(ctx context.Context, rn *runState, st *TurnState) []ToolSpec {
	l := rn.l
	if l.ToolFilter == nil && l.Deferred == nil {
		return l.Tools.Specs(ctx)
	}
	infos := l.Tools.Tools(ctx)
	named := l.ToolChoice.Name
	same := len(c.lastFrom) == len(infos) && (len(infos) == 0 || &c.lastFrom[0] == &infos[0])
	if !same {
		c.lastFrom, c.lastTools = infos, nil
		c.lastPick = make([]bool, len(infos))
	}
	changed := !same
	n := 0
	for i := range infos {
		t := &infos[i]
		pick := t.Name == named ||
			(l.Deferred == nil || !l.Deferred(t) || st.Loaded[t.Name]) &&
				(l.ToolFilter == nil || l.ToolFilter(st, t))
		if pick != c.lastPick[i] {
			c.lastPick[i] = pick
			changed = true
		}
		if pick {
			n++
		}
	}
	if !changed && c.lastTools != nil {
		return c.lastTools
	}
	tools := make([]ToolSpec, 0, n)
	for i := range infos {
		if c.lastPick[i] {
			tools = append(tools, infos[i].ToolSpec)
		}
	}
	c.lastTools = tools
	return tools
}

// beforeModel runs the before-model hooks on turn.
func (rn *runState) beforeModel(ctx context.Context, turn *ModelTurn) (*ModelTurn, error) {
	for i, h := range rn.l.Hooks.BeforeModel {
		_, err := protect2(func() (struct{}, error) { return struct{}{}, h(ctx, turn) })
		if err != nil {
			return nil, fmt.Errorf("before-model hook %d: %w", i, err)
		}
		if turn.Request == nil {
			return nil, fmt.Errorf("before-model hook %d: the request was set to nil", i)
		}
	}
	return turn, nil
}

// afterModel runs the after-model hooks on resp.
func (rn *runState) afterModel(ctx context.Context, turn *ModelTurn, resp *Response) (*Response, error) {
	for i, h := range rn.l.Hooks.AfterModel {
		r, err := protect2(func() (*Response, error) { return h(ctx, turn, resp) })
		if err != nil {
			return nil, fmt.Errorf("after-model hook %d rejected the response: %w", i, err)
		}
		if r != nil {
			resp = r
		}
	}
	return resp, nil
}

// processTurn runs the turn processors over the calls of a turn that
// are still to run (done[i] nil). It returns done with the results the
// processors synthesized, and the reason if one sent the turn back.
func (rn *runState) processTurn(ctx context.Context, res *RunResult, calls []ToolCall, done []*ToolResult) ([]*ToolResult, string) {
	c := rn.ctl
	for pi, p := range rn.l.TurnProcessors {
		batch := &TurnBatch{RunID: rn.id, Turn: rn.turn, Messages: res.Messages, Retries: c.sendBacks}
		for i, tc := range calls {
			if done == nil || done[i] == nil {
				batch.Calls = append(batch.Calls, tc)
			}
		}
		if len(batch.Calls) == 0 {
			break
		}
		d, err := protect2(func() (TurnDecision, error) { return p(ctx, batch) })
		if err != nil {
			rn.logger().Error("toolloop: turn processor failed; its decision is ignored", "processor", pi, "turn", rn.turn, "error", err)
			continue
		}
		if d.SendBack != "" {
			return done, d.SendBack
		}
		for id, r := range d.Results {
			i := slices.IndexFunc(calls, func(tc ToolCall) bool { return tc.ID == id })
			if i < 0 || done != nil && done[i] != nil || r == nil {
				rn.logger().Warn("toolloop: turn processor answered a call that is not waiting to run; ignored", "processor", pi, "call_id", id)
				continue
			}
			if done == nil {
				done = make([]*ToolResult, len(calls))
			}
			done[i] = rn.synthesized(calls[i], r, len(batch.Calls))
			res.ToolCalls-- // it does not go through the pipeline
		}
	}
	if rn.observed {
		for _, r := range done {
			if r != nil && r.Meta.Synthesized {
				rn.emit(&Event{Type: EventComplete, CallID: r.CallID, Tool: r.Name, Result: r})
			}
		}
	}
	return done, ""
}

// synthesized makes a turn processor's result for tc the call's result:
// a copy, normalized and cut to the turn's share as the pipeline would.
// Its completion is reported once no processor sends the turn back.
func (rn *runState) synthesized(tc ToolCall, r *ToolResult, n int) *ToolResult {
	out := *r
	out.CallID, out.Name = tc.ID, tc.Name
	out.Content = slices.Clone(out.Content)
	normalizeResult(&out)
	out.Meta.Bytes = contentBytes(out.Content)
	if share := rn.lim.resultShare(n); share > 0 {
		var cut bool
		out.Content, cut = truncateContent(out.Content, share)
		out.Meta.Truncated = out.Meta.Truncated || cut
	}
	out.Meta.Synthesized = true
	return &out
}

// sendBack answers the calls of a turn sent back as not run, and ends the
// run if the turn was sent back too often.
func (rn *runState) sendBack(res *RunResult, calls []ToolCall, done []*ToolResult, why string) error {
	c := rn.ctl
	c.sendBacks++
	if rn.observed {
		rn.emit(&Event{Type: EventTurnSentBack, Error: why})
	}
	most := max(rn.l.Budget.WithDefaults().MaxSendBacks, 0)
	over := c.sendBacks > most
	msg := "not run: the turn was sent back to you: " + why + ". Take the turn again."
	if over {
		msg = "not run: the turn was sent back to you (" + why + "), too many times in a row; the run stops."
	}
	for i, tc := range calls {
		var r *ToolResult
		switch {
		case done != nil && done[i] != nil && !done[i].Meta.Synthesized:
			r = done[i] // answered by the budget
		default:
			if done == nil || done[i] == nil {
				res.ToolCalls-- // counted by overBudget, never run
			}
			r = rn.answerNotRun(tc, msg)
		}
		res.Messages = append(res.Messages, ToolMessage(r))
		res.Executions = append(res.Executions, execution(rn.turn, r))
	}
	if over {
		return &BudgetError{Limit: LimitSendBacks, Used: float64(c.sendBacks), Max: float64(most),
			Err: errors.New(why)}
	}
	return nil
}

// answers collects the final-answer tool's accepted arguments by call ID.
type answers struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

func (a *answers) put(id string, args json.RawMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = make(map[string]json.RawMessage)
	}
	a.m[id] = args
}

func (a *answers) take(id string) (json.RawMessage, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.m[id]
	delete(a.m, id)
	return v, ok
}

// ModelRequest returns the request for a model turn of a run, as Run
// makes it: the registry's tools as the tool filter and the deferred
// tools let them through, the tool search and final-answer tools, the
// background argument of the tools that allow it and, once msgs names a
// background job, the job tools (see [ToolSpec.Background]), the loop's
// tool choice (or choice, when it is not the zero value), the output
// format, then the Hooks.BeforeModel hooks. It is for drivers
// that take model turns themselves, such as the temporal package's model
// activity; pass the result to [AgentLoop.AfterModel] with the response.
func (l *AgentLoop) ModelRequest(ctx context.Context, runID string, turn int, msgs []Message, choice ToolChoice) (*ModelTurn, error) {
	rn := l.newRun(runID, nil)
	rn.turn = turn
	rn.driver, rn.jobBase = true, LastJobNumber(msgs)
	if err := rn.setup(nil); err != nil {
		return nil, err
	}
	return rn.request(ctx, msgs, choice)
}

// AfterModel runs the Hooks.AfterModel hooks on a response to the turn
// [AgentLoop.ModelRequest] made, as Run does, and returns the response
// to use. An error rejects the response.
func (l *AgentLoop) AfterModel(ctx context.Context, turn *ModelTurn, resp *Response) (*Response, error) {
	if len(l.Hooks.AfterModel) == 0 {
		return resp, nil
	}
	rn := l.newRun(turn.RunID, nil)
	rn.turn = turn.Turn
	return rn.afterModel(ctx, turn, resp)
}
