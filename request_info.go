package toolloop

import (
	"slices"
	"time"
)

// RequestInfo describes a model request, on model.request: what the
// model was offered and how much of its context window the request
// fills. The request's messages are the event's Messages, from index
// From of the request on: every message on a run's first request (the
// system and user prompts, or a resumed transcript), and after that the
// ones the previous request did not have (the model's last turn, the
// results as the model sees them, messages sent into the run, a wrap-up
// message), or, after a transcript edit or a before-model hook changed
// earlier messages, everything from the first message that changed (a
// compaction's summary, cleared results). A viewer rebuilds each
// request's whole transcript from the run's model.request events alone.
type RequestInfo struct {
	// From is the index, in the request's messages, of the event's first
	// message; Messages counts the request's messages.
	From     int `json:"from"`
	Messages int `json:"messages"`
	// Tools names the tools offered, in the order sent; Loaded names
	// those of them that are deferred tools the model loaded with the
	// tool search (see [AgentLoop.Deferred]).
	Tools  []string `json:"tools,omitempty"`
	Loaded []string `json:"loaded,omitempty"`
	// ToolChoice is the request's tool choice.
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// Output names the native output format asked for, if any (see
	// [NativeOutput]).
	Output string `json:"output,omitempty"`
	// Tokens estimates the request's input tokens, starting from what the
	// provider counted of the previous request (see [EstimateTokens]),
	// and Window is the context window of the model that answered last,
	// from the model table; 0 when unknown.
	Tokens int `json:"tokens"`
	Window int `json:"window,omitempty"`
}

// CallTiming splits a call's time into its stages, on
// tool.execution_complete: what a timeline needs to account for the
// whole call. Stages a call did not reach are zero. The call's
// [ResultMeta].Duration runs from the first stage's start to the last's
// end, so it includes Approval: an approver, often a person, may think
// for minutes about a call that runs for milliseconds.
type CallTiming struct {
	// Checks is resolution, argument repair, validation and the guard.
	Checks time.Duration `json:"checks_ns,omitempty"`
	// Approval is the wait for the approver's decision.
	Approval time.Duration `json:"approval_ns,omitempty"`
	// PreHooks is the pre-tool-use hooks.
	PreHooks time.Duration `json:"pre_hooks_ns,omitempty"`
	// Tool is the tool itself, through the middleware; for a call that
	// starts a background job, the job's start.
	Tool time.Duration `json:"tool_ns,omitempty"`
	// After is the post-tool-use hooks and truncation.
	After time.Duration `json:"after_ns,omitempty"`
}

// requestInfo describes req, the request for the run's transcript msgs,
// whose first from messages the previous request had too.
func (rn *runState) requestInfo(req *Request, msgs []Message, from int) *RequestInfo {
	info := &RequestInfo{From: from, Messages: len(req.Messages), ToolChoice: req.ToolChoice,
		Window: rn.window(msgs)}
	if len(req.Tools) > 0 && !sameSlice(req.Tools, rn.toolSpecs) {
		rn.toolSpecs, rn.toolNames = req.Tools, make([]string, len(req.Tools))
		for i := range req.Tools {
			rn.toolNames[i] = req.Tools[i].Name
		}
	}
	if len(req.Tools) > 0 {
		info.Tools = rn.toolNames
	}
	if c := rn.ctl; c != nil && len(c.loaded) > 0 {
		for _, name := range info.Tools {
			if c.loaded[name] {
				info.Loaded = append(info.Loaded, name)
			}
		}
		slices.Sort(info.Loaded)
	}
	if req.Output != nil {
		info.Output = req.Output.Name
	}
	if sameSlice(req.Messages, msgs) {
		info.Tokens = rn.tokens.count(msgs)
	} else {
		info.Tokens = EstimateTokens(req.Messages) + rn.tokens.specs
	}
	return info
}
