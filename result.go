package toolloop

import (
	"encoding/json"
	"time"
)

// RunResult is what a run produced, complete or not.
type RunResult struct {
	RunID string `json:"run_id"`
	// Messages is the whole transcript: the input, every assistant turn and
	// one tool message per call. It is always valid to send to a model
	// again: every call has exactly one result, in call order.
	Messages []Message `json:"messages"`
	// FinalText is the text of the last assistant message.
	FinalText  string     `json:"final_text"`
	StopReason StopReason `json:"stop_reason"`
	// Turns counts the model turns taken.
	Turns int `json:"turns"`
	// Accounting is what the run spent: tokens, cost and tool calls.
	Accounting
	// Executions records every call, in order.
	Executions []ToolExecution `json:"executions,omitempty"`
	// Output is the final answer, when the run has an output format (see
	// AgentLoop.Output and RunTyped) and ended with a valid answer.
	Output json.RawMessage `json:"output,omitempty"`
	// Paused is set when the run stopped for approval (ErrPaused).
	Paused *PauseState `json:"paused,omitempty"`
	// Undelivered holds the messages sent into the run (see [Inbox]) that
	// it had not delivered when it ended, in the order sent, so that the
	// program can start the next run with them. A paused run keeps them
	// in Paused.Queued instead.
	Undelivered []Message `json:"undelivered,omitempty"`
	// Jobs lists the background jobs the run started (see [Job]), in the
	// order started, each as it ended: a run ends (or pauses) its jobs
	// still running, as canceled with the reason, so none outlives it.
	// A job whose end the model was not told has Reported false.
	Jobs []Job `json:"jobs,omitempty"`
}

// Accounting is what a run has spent. A [RunResult] and a [PauseState]
// hold it; run.paused, run.limit and run.end events carry it.
type Accounting struct {
	// Usage adds up the tokens of the run's model turns and compactions.
	Usage Usage `json:"usage"`
	// Cost is what they cost in US dollars, priced from AgentLoop.ModelTable
	// and [LookupModel] by the model each response names. UnpricedTurns
	// counts the responses whose model has no known price, which Cost
	// leaves out.
	Cost          float64 `json:"cost_usd,omitempty"`
	UnpricedTurns int     `json:"unpriced_turns,omitempty"`
	// ToolCalls counts the calls the run sent through the pipeline; calls
	// answered without running (over budget, after a length stop) are not
	// counted, and neither are calls of the output tool (see
	// AgentLoop.Output), which OutputCalls counts.
	ToolCalls int `json:"tool_calls,omitempty"`
	// OutputCalls counts the calls of the output tool: the final answers
	// the model gave by calling it, valid or not. Budget.MaxToolCalls and
	// MaxCallsPerTurn never hold them back.
	OutputCalls int `json:"output_calls,omitempty"`
	// ConsecutiveFailures counts the failed calls since the last one that
	// succeeded, for the failure policy.
	ConsecutiveFailures int `json:"consecutive_failures,omitempty"`
}

// ToolExecution records one tool call of a run.
type ToolExecution struct {
	Name    string `json:"name"`
	CallID  string `json:"call_id"`
	Turn    int    `json:"turn"`
	Success bool   `json:"success"`
	// Output is the text the model saw.
	Output  string        `json:"output"`
	Error   *ToolError    `json:"error,omitempty"`
	Latency time.Duration `json:"latency_ns"`
}

// price adds what u cost on model to the run's cost.
func (rn *runState) price(res *RunResult, model string, u Usage) {
	if u == (Usage{}) {
		return
	}
	if info, ok := rn.l.lookupModel(model); ok && info.Price != nil {
		res.Cost += info.Price.Cost(u)
		return
	}
	res.UnpricedTurns++
}

// appendResults adds one tool message per result to the transcript, and
// what agents used as tools spent to the run's accounting.
func (rn *runState) appendResults(res *RunResult, results []*ToolResult) {
	if res.Executions == nil && len(results) > 0 {
		// Room for two turns of one call, as for the transcript (see
		// runWith), rather than growing at the second.
		res.Executions = make([]ToolExecution, 0, max(len(results), 2))
	}
	for _, r := range results {
		res.Messages = append(res.Messages, ToolMessage(r))
		res.Executions = append(res.Executions, execution(rn.turn, r))
		if s := r.Meta.Spent; s != nil {
			res.Accounting.AddSpent(s)
		}
		res.ToolCalls += r.Meta.InnerCalls
	}
}

func execution(turn int, r *ToolResult) ToolExecution {
	return ToolExecution{
		Name: r.Name, CallID: r.CallID, Turn: turn,
		Success: r.Status == StatusOK, Output: r.Text(), Error: r.Error, Latency: r.Meta.Duration,
	}
}

// AddSpent adds what another run spent to a: its usage, cost and
// unpriced turns. The loop adds the Spent of an agent's result (see
// ResultMeta.Spent) this way; its tool calls and failures are the other
// run's own, and stay out.
func (a *Accounting) AddSpent(s *Accounting) {
	a.Usage.Add(s.Usage)
	a.Cost += s.Cost
	a.UnpricedTurns += s.UnpricedTurns
}
