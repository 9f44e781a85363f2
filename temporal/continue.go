package temporal

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
)

// carried is the state a run carries into its next workflow execution
// when it continues as new: with the transcript (Input.Messages), all the
// next execution needs to go on as if it were the same one.
type carried struct {
	// Turns counts the model turns taken so far, for Budget.MaxTurns and
	// for the activity IDs and call IDs of the next turns.
	Turns      int                      `json:"turns"`
	Accounting toolloop.Accounting      `json:"accounting"`
	Executions []toolloop.ToolExecution `json:"executions,omitempty"`
	FinalText  string                   `json:"final_text,omitempty"`
	StopReason toolloop.StopReason      `json:"stop_reason,omitempty"`
	// Elapsed is the time Budget.MaxDuration has counted so far.
	Elapsed   time.Duration `json:"elapsed_ns,omitempty"`
	LastModel string        `json:"last_model,omitempty"`
	Tokens    tokenCounter  `json:"tokens"`
	// Queued holds the messages sent into the run (SteerSignal) and not
	// yet delivered, follow-ups mostly; Interrupt is an interrupt it has
	// not acted on yet.
	Queued    []queued            `json:"queued,omitempty"`
	Interrupt *toolloop.Interrupt `json:"interrupt,omitempty"`
	// Jobs are the background jobs of the run so far, all ended (a run
	// continues as new with no job running), and JobsNext the number of
	// the last job ID given.
	Jobs     []toolloop.Job `json:"jobs,omitempty"`
	JobsNext int            `json:"jobs_next,omitempty"`
}

// restore puts the carried state into rn and returns the elapsed time.
func (c *carried) restore(rn *run) time.Duration {
	res := rn.res
	rn.turn, res.Turns = c.Turns, c.Turns
	res.Accounting, res.Executions = c.Accounting, c.Executions
	res.FinalText, res.StopReason = c.FinalText, c.StopReason
	rn.lastModel, rn.tokens = c.LastModel, c.Tokens
	if s := rn.steer; s != nil {
		s.queue, s.intr = c.Queued, c.Interrupt
	}
	if js := rn.jobs; js != nil {
		js.restore(rn, c.Jobs, c.JobsNext)
	}
	return c.Elapsed
}

// continueAsNew reports whether the run should continue as new before
// its next turn: Temporal suggests it (the history nears its limits on
// events or bytes), or this execution has taken Agent.MaxTurnsPerExecution
// turns (when positive). An execution always takes at least one turn.
func (rn *run) continueAsNew() bool {
	if !rn.longRun || rn.turnsHere == 0 {
		return false
	}
	suggested := workflow.GetInfo(rn.outer).GetContinueAsNewSuggested()
	if rn.jobs.anyRunning() {
		// A job's activity cannot outlive this execution: wait for the
		// jobs to end, unless the history nears its limits.
		return suggested
	}
	if m := rn.ag.MaxTurnsPerExecution; m > 0 && rn.turnsHere >= m {
		return true
	}
	return suggested
}

// continueAsNewError ends this execution and starts the next with the
// run's transcript and state. It is called between turns only: every
// call of the last turn has its result, so no call is cut off or run
// again. Decisions that came for no waiting call are dropped, as they
// would be anyway; the messages and the interrupt that came by signal and
// were not acted on go on to the next execution.
func (rn *run) continueAsNewError() error {
	rn.drainDecisions()
	res := rn.res
	c := &carried{
		Turns: rn.turn, Accounting: res.Accounting, Executions: res.Executions,
		FinalText: res.FinalText, StopReason: res.StopReason, Elapsed: rn.clock.total(rn.outer),
		LastModel: rn.lastModel, Tokens: rn.tokens,
	}
	if rn.jobs != nil {
		c.Jobs, c.JobsNext = rn.carryJobs(), rn.jobs.next
		c.Accounting = res.Accounting
	}
	if s := rn.steer; s != nil {
		rn.receive()
		c.Queued, c.Interrupt = s.queue, s.intr
		s.queue, s.intr = nil, nil
	}
	in := Input{Messages: res.Messages, Carried: c}
	workflow.GetLogger(rn.outer).Info("toolloop: continuing as new", "turn", rn.turn)
	return workflow.NewContinueAsNewError(rn.outer, rn.ag.Name, in)
}
