package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrDiverged: a program run again on resume (see [Inner]) made an inner
// call other than the one its journal holds at that place, so it cannot
// be served from the journal and must not run twice. The tool's call
// fails with it; no inner call of the new path runs.
var ErrDiverged = errors.New("toolloop: the program took another path when it ran again on resume")

// Inner makes the inner calls of one call: the calls to other tools of
// the same run that its tool makes while it runs, as a program written by
// the model does in code mode (see the codemode module). Get it with
// [Call.Inner], from the tool's Run, and use it only until Run returns.
//
// Each inner call is a call of its own through the run's whole pipeline:
// it is resolved, validated and guarded (it can be denied, rewritten or
// asked about), its hooks run, it executes under its own timeout and the
// call's context, and its result is truncated as any call's. Its events
// carry the call's ID as Event.ParentCallID (with ParentRunID empty: it
// is part of the same run), and its own ID is the call's ID, "/" and its
// number (call_1/3 for the third). It counts against the run's
// Budget.MaxToolCalls and Accounting.ToolCalls (through the call's
// ResultMeta.InnerCalls), and one call's inner calls are bounded by
// Limits.MaxCallsPerTurn, as a turn's are; at most
// Limits.MaxConcurrency of them run at once. Its result is not in the
// transcript: the tool decides what of it the model sees.
//
// An inner call that needs a person's decision (the guard asks, the loop
// has PauseForApproval and no Approver) pauses the whole run: its Run
// returns an error wrapping [ErrPaused], and the tool must stop and
// return that error. The calls already running finish first. The paused
// call's [PendingCall] then holds the inner calls that finished, in
// Program, and lists the ones that wait in [PendingCall.Waiting]. On
// [AgentLoop.Resume] the tool runs again from the start, and each inner
// call it makes is answered from that journal, by number, as long as its
// name and arguments are the same: nothing that ran runs twice, and the
// calls that waited run (or are denied) as decided. A program must
// therefore take the same path when run again (code mode makes time and
// randomness deterministic); one that does not gets [ErrDiverged].
//
// When the call ends, its inner calls still running are cancelled and
// waited for (a tool that ignores its context is answered for after its
// grace, as in a turn), and later inner calls are answered as not run.
type Inner struct {
	cr *callRun
}

// InnerCall is one inner call, numbered (see [Inner.Prepare]) and not yet
// run.
type InnerCall struct {
	in   *Inner
	seq  int
	id   string
	name string
	args json.RawMessage
}

// Inner returns the maker of the call's inner calls (see [Inner]), or nil
// when the call is not run by a loop (a Call made by hand) or is itself
// an inner call: programs do not nest.
func (c *Call) Inner() *Inner {
	return nil
}

// Prepare numbers an inner call to the tool name with the given
// arguments (JSON; empty means {}), in the order the program makes its
// calls, and returns it to be run. Prepare does no work and never
// blocks; call it on the goroutine that runs the program, in program
// order, so that a program run again on resume numbers its calls the
// same way. Run may then run on any goroutine.
func (in *Inner) Prepare(name string, args json.RawMessage) *InnerCall {
	return nil
}

// Started is when the program first started: the time of the call's
// first run, or, when it runs again on resume, the time its first run
// started (kept in [ProgramState]). Code mode shows the program this
// clock, so that a program run again sees the same time.
func (in *Inner) Started() time.Time { return time.Time{} }

// ID is the inner call's ID: the call's ID, "/" and the inner call's
// number, counting from 1.
func (ic *InnerCall) ID() string { return ic.id }

// Run runs the inner call through the pipeline and returns its result:
// the tool's, or a failed result (kind denied, invalid_args, not_found,
// timeout, ...) saying why it did not run or failed. It blocks until the
// call is done, waiting first for a free slot under
// Limits.MaxConcurrency. The error is non-nil only when the program must
// stop: it wraps [ErrPaused] when the call waits for a decision, and
// [ErrDiverged] when a program run again on resume strayed from its
// journal; the tool then returns the error as its own. ctx is the tool's
// context, or one derived from it. Run the same InnerCall once.
func (ic *InnerCall) Run(ctx context.Context) (*ToolResult, error) {
	return nil, errors.New("not implemented")
}

// ProgramState is what a call whose inner calls paused the run (see
// [Inner]) had done: the journal its tool is answered from when it runs
// again on resume.
type ProgramState struct {
	// Started is when the program first started (see [Inner.Started]).
	Started time.Time `json:"started"`
	// Done lists the inner calls that finished, in the order of their
	// numbers, each with the arguments the program gave and the result
	// it got.
	Done []InnerRecord `json:"done,omitempty"`
	// Pending lists the inner calls that wait for a decision, with their
	// own IDs (see [Inner]); [PendingCall.Waiting] lists them as the run
	// does, and Resume takes a decision for each.
	Pending []PendingCall `json:"pending"`
}

// InnerRecord is an inner call that finished before its run paused.
type InnerRecord struct {
	// Name and Arguments are the call as the program made it.
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Result is the result it got; its CallID is the inner call's ID.
	Result *ToolResult `json:"result"`
}
