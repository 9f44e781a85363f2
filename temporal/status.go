package temporal

import (
	"github.com/toolloop/toolloop"
)

// Decision is a human's answer for a call that waits for approval, sent
// to the run with Decide (or as DecisionSignal; in JSON,
// {"call_id": "...", "approved": true, "reason": "..."}).
type Decision struct {
	CallID string `json:"call_id"`
	toolloop.Approval
}

// Status is what a run is doing, as StatusQuery reports it.
type Status struct {
	RunID string `json:"run_id"`
	// Turn is the model turn in progress, counting from 1.
	Turn int `json:"turn"`
	// Calls are the calls of the turn, in call order; empty while the
	// model answers.
	Calls []CallStatus `json:"calls,omitempty"`
	// Jobs are the run's background jobs, in the order started (see
	// toolloop.Job); Describe adds the output size of each running one.
	Jobs []toolloop.Job `json:"jobs,omitempty"`
}

// Awaiting returns the calls that wait for a Decision. A call to an agent
// whose run paused (see toolloop.AgentTool) waits on calls of its child
// run, and a call whose program paused waits on its inner calls (see
// toolloop.Inner): they are listed in its stead, each under the
// qualified CallID a Decision names it by (see
// toolloop.PendingCall.ParentCallID), with its own Name and Pending.
func (s *Status) Awaiting() []CallStatus {
	var out []CallStatus
	for _, c := range s.Calls {
		if c.State != CallAwaiting {
			continue
		}
		if c.Pending == nil || !nests(c.Pending) {
			out = append(out, c)
			continue
		}
		for _, w := range c.Waiting {
			out = append(out, CallStatus{CallID: w.CallID, Name: w.Name, State: CallAwaiting, Pending: &w})
		}
	}
	return out
}

// CallState says where a call of the current turn stands.
type CallState string

// The call states.
const (
	// CallQueued: the call waits for a free slot (MaxConcurrency, an
	// exclusive tool), or for its second run after a decision.
	CallQueued CallState = "queued"
	// CallRunning: the call's activity is scheduled or running.
	CallRunning CallState = "running"
	// CallAwaiting: the guard asked; the call waits for a Decision.
	CallAwaiting CallState = "awaiting_approval"
	// CallDone: the call has its result.
	CallDone CallState = "done"
)

// CallStatus is the state of one call.
type CallStatus struct {
	CallID string    `json:"call_id"`
	Name   string    `json:"name"`
	State  CallState `json:"state"`
	// Pending is set while the call awaits approval: the arguments it
	// will run with and the guard's reason, for the person deciding; for
	// a call to an agent whose run paused, its child's state.
	Pending *toolloop.PendingCall `json:"pending,omitempty"`
	// Waiting, on a call to an agent whose run paused, lists the calls of
	// its child run that still wait for a Decision (see Awaiting); on a
	// call whose program paused, its inner calls that still wait.
	Waiting []toolloop.PendingCall `json:"waiting,omitempty"`
	// Error is the kind of a failed call's result, once it is done.
	Error toolloop.ErrorKind `json:"error,omitempty"`

	// Attempt, Progress and Partial come from the heartbeats of the
	// call's running activity: Describe fills them in, StatusQuery
	// alone cannot (a workflow never sees its activities' heartbeats).
	Attempt int32 `json:"attempt,omitempty"`
	// Progress is the latest progress the tool reported.
	Progress *toolloop.Progress `json:"progress,omitempty"`
	// Partial is the latest piece of output the tool reported, cut to
	// its last KiB.
	Partial string `json:"partial,omitempty"`
}

// status answers StatusQuery.
func (rn *run) status() (*Status, error) {
	st := &Status{RunID: rn.res.RunID, Turn: rn.turn, Jobs: rn.jobs.infos()}
	for _, s := range rn.calls {
		cs := CallStatus{CallID: s.tc.ID, Name: s.tc.Name, State: s.state, Pending: s.pending}
		if s.pending != nil && nests(s.pending) {
			for _, w := range s.pending.Waiting() {
				if _, done := s.decisions[w.CallID]; !done {
					cs.Waiting = append(cs.Waiting, w)
				}
			}
		}
		if s.result != nil && s.result.Error != nil {
			cs.Error = s.result.Error.Kind
		}
		st.Calls = append(st.Calls, cs)
	}
	return st, nil
}
