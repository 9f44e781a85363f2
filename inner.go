package toolloop

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
// Limits.MaxCallsPerTurn, as a turn's are (a program past either limit
// is stopped, see [InnerCall.Run]); at most
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
// If the loop answers for the call itself (its tool timed out and did
// not stop), it answers for the inner calls too: those still running, or
// made later, emit no events (nor does anything after run.end).
type Inner struct {
	cr      *callRun // the call whose tool makes the inner calls
	started time.Time
	resume  *innerResume // the journal, when the call runs again on resume

	seq   atomic.Int32 // numbers handed out by Prepare
	count atomic.Int32 // inner calls through the pipeline (or served)
	sem   chan struct{}
	wg    sync.WaitGroup // Runs in progress
	// ctx ends when the call does; the inner calls run under it as well.
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	closed  bool
	stop    error // the first error that stops the program
	records []InnerRecord
	reached map[string]bool // the journal's calls this run made again
	pending []PendingCall
	spent   Accounting // what inner calls to agents spent
}

// innerResume is the journal a call's tool is answered from when it runs
// again on resume.
type innerResume struct {
	state     *ProgramState
	calls     map[string]*InnerRecord // by inner call ID
	pending   map[string]PendingCall  // by inner call ID
	decisions map[string]Approval     // as the run's Resume was given them
}

// InnerCall is one inner call, numbered (see [Inner.Prepare]) and not yet
// run.
type InnerCall struct {
	in   *Inner
	seq  int
	id   string
	name string
	args json.RawMessage
	ran  atomic.Bool
}

// Inner returns the maker of the call's inner calls (see [Inner]), or nil
// when the call is not run by a loop (a Call made by hand), runs as a
// background job, or is itself an inner call: programs do not nest.
func (c *Call) Inner() *Inner {
	cr := c.cr
	if cr == nil || cr.outer != nil || c.Job != "" {
		return nil
	}
	if in := cr.inner.Load(); in != nil {
		return in
	}
	in := &Inner{cr: cr, started: time.Now(), sem: make(chan struct{}, max(cr.rn.lim.MaxConcurrency, 1))}
	if r := cr.ex().resume; r != nil {
		in.resume, in.started = r, r.state.Started
	}
	in.ctx, in.cancel = context.WithCancelCause(context.Background())
	if !cr.inner.CompareAndSwap(nil, in) {
		in.cancel(nil)
		return cr.inner.Load()
	}
	return in
}

// Started is when the program first started: the time of the call's
// first run, or, when it runs again on resume, the time its first run
// started (kept in [ProgramState]). Code mode shows the program this
// clock, so that a program run again sees the same time.
func (in *Inner) Started() time.Time { return in.started }

// Prepare numbers an inner call to the tool name with the given
// arguments (JSON; empty means {}), in the order the program makes its
// calls, and returns it to be run. Prepare does no work and never
// blocks; call it on the goroutine that runs the program, in program
// order, so that a program run again on resume numbers its calls the
// same way. Run may then run on any goroutine.
func (in *Inner) Prepare(name string, args json.RawMessage) *InnerCall {
	n := int(in.seq.Add(1))
	return &InnerCall{in: in, seq: n, id: in.cr.tc.ID + "/" + strconv.Itoa(n), name: name, args: normalizeArgs(args)}
}

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
// journal; it is a *ToolError of kind denied when the program made more
// calls than Limits.MaxCallsPerTurn or the run's Budget.MaxToolCalls
// allows. The tool then returns the error as its own, and every later
// Run returns it too. ctx is the tool's
// context, or one derived from it. Run the same InnerCall once.
func (ic *InnerCall) Run(ctx context.Context) (*ToolResult, error) {
	in := ic.in
	if !ic.ran.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("toolloop: the inner call %s was run twice", ic.id)
	}
	in.mu.Lock()
	switch {
	case in.stop != nil:
		in.mu.Unlock()
		return nil, in.stop
	case in.closed || in.cr.answered():
		in.mu.Unlock()
		return in.answer(ic, errorResult(KindCanceled, "not run: the call %s that made it had ended", in.cr.tc.ID)), nil
	}
	in.wg.Add(1)
	in.mu.Unlock()
	defer in.wg.Done()

	rn := in.cr.rn
	var decided *PendingCall
	if r := in.resume; r != nil {
		if rec, ok := r.calls[ic.id]; ok {
			if rec.Name != ic.name || !sameJSON(rec.Arguments, ic.args) {
				return nil, in.halt(fmt.Errorf("%w: its call %s was %s(%s), and is now %s(%s); the calls it had made are not run again",
					ErrDiverged, ic.id, rec.Name, rec.Arguments, ic.name, ic.args))
			}
			in.mu.Lock()
			if in.reached == nil {
				in.reached = make(map[string]bool)
			}
			in.reached[ic.id] = true
			in.mu.Unlock()
			if rec.Result != nil { // it ran: serve its result
				in.count.Add(1)
				in.record(ic, rec.Result)
				r := *rec.Result
				return &r, nil
			}
			p := r.pending[ic.id]
			decided = &p
		}
	}
	if n := int(in.count.Add(1)); rn.lim.MaxCallsPerTurn > 0 && n > rn.lim.MaxCallsPerTurn {
		in.count.Add(-1)
		return nil, in.limit(ic, fmt.Sprintf("the program was stopped at its call %s: it made more than %d tool calls, "+
			"the most one call may make (Limits.MaxCallsPerTurn)", ic.id, rn.lim.MaxCallsPerTurn))
	}
	if m := rn.l.Budget.MaxToolCalls; m > 0 && decided == nil && rn.callsAt+int(rn.innerCalls.Add(1)) > m {
		rn.innerCalls.Add(-1)
		in.count.Add(-1)
		return nil, in.limit(ic, fmt.Sprintf("the program was stopped at its call %s: the run's budget allows %d tool calls, and they are spent", ic.id, m))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(in.ctx, func() { cancel(context.Cause(in.ctx)) })
	defer stop()
	select {
	case in.sem <- struct{}{}:
	case <-ctx.Done():
		return in.answer(ic, errorResult(KindCanceled, "not run: the program's call ended before %s started (%v)", ic.name, context.Cause(ctx))), nil
	}
	defer func() { <-in.sem }()

	cr := &callRun{rn: rn, tc: ToolCall{ID: ic.id, Name: ic.name, Arguments: ic.args}, index: in.cr.index,
		start: time.Now(), outer: in.cr, parent: ctx}
	if d := rn.decision; d != nil && !d.Approved {
		// A driver's denial, given before the call ran (an MCP client
		// that cannot be asked), settles the inner calls' asks too; its
		// approval is for the call itself, never for what it calls.
		cr.decision = d
	}
	res, p := in.exec(ctx, cr, decided)
	if p != nil {
		if in.cr.call.Job != "" {
			res = errorResult(KindDenied, "denied: this call needs approval, and the call %s that made it cannot pause", in.cr.tc.ID)
		} else {
			p.CallID, p.Name, p.Index = ic.id, ic.name, 0
			in.mu.Lock()
			in.records = append(in.records, InnerRecord{ID: ic.id, Name: ic.name, Arguments: ic.args})
			in.pending = append(in.pending, *p)
			if in.stop == nil {
				in.stop = fmt.Errorf("%w: the inner call %s (%s) waits for a decision", ErrPaused, ic.id, ic.name)
			}
			err := in.stop
			in.mu.Unlock()
			return nil, err
		}
	}
	if s := res.Meta.Spent; s != nil {
		in.mu.Lock()
		in.spent.AddSpent(s)
		in.mu.Unlock()
	}
	in.record(ic, res)
	return res, nil
}

// answer is the result of an inner call that did not go through the
// pipeline: made its own, as the pipeline would, and reported.
func (in *Inner) answer(ic *InnerCall, res *ToolResult) *ToolResult {
	res.CallID, res.Name = ic.id, ic.name
	res.Meta.Bytes = contentBytes(res.Content)
	// Once the coordinator answered for the call, it answered for its
	// inner calls too. The turn is the call's, not the run's: a call
	// answered after its program's call ended may be made while the run
	// is in a later turn.
	if in.cr.rn.observed && !in.cr.answered() {
		in.cr.rn.emit(&Event{Type: EventComplete, CallID: ic.id, Tool: ic.name, ParentCallID: in.cr.tc.ID, Turn: in.cr.callv.Turn, Result: res})
	}
	return res
}

// limit answers an inner call beyond a limit as not run, and stops the
// program with the reason (kind denied), so that a program that catches
// the error cannot spin on calls that will never run.
func (in *Inner) limit(ic *InnerCall, why string) error {
	in.answer(ic, errorResult(KindDenied, "not run: %s", why))
	return in.halt(Errorf(KindDenied, "%s", why))
}

// record keeps a finished inner call for the journal.
func (in *Inner) record(ic *InnerCall, res *ToolResult) {
	in.mu.Lock()
	in.records = append(in.records, InnerRecord{ID: ic.id, Name: ic.name, Arguments: ic.args, Result: res})
	in.mu.Unlock()
}

// halt stops the program with err, unless something stopped it already.
func (in *Inner) halt(err error) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.stop == nil {
		in.stop = err
	}
	return in.stop
}

// exec runs an inner call on a goroutine of its own and waits for it,
// as a turn's coordinator does: a call still running its grace after its
// timeout, or after ctx ends, is answered for (timeout or canceled) and
// left behind. decided, if set, is the pending call it was when the run
// paused, to finish with its decision.
func (in *Inner) exec(ctx context.Context, cr *callRun, decided *PendingCall) (*ToolResult, *PendingCall) {
	rn := cr.rn
	type outcome struct {
		res  *ToolResult
		pend *PendingCall
	}
	done := make(chan outcome, 1)
	go func() {
		var res *ToolResult
		var p *PendingCall
		switch {
		case decided == nil:
			res, p = rn.execCall(ctx, cr)
		case decided.Child != nil:
			res, p = rn.resumeAgent(ctx, cr, *decided, in.resume.decisions)
		case decided.Program != nil: // cannot be: programs do not nest
			res = errorResult(KindExecutionFailed, "not run: a program's inner call cannot be a program")
		default:
			res, p = rn.resumeCall(ctx, cr, *decided, in.resume.decisions[cr.tc.ID])
		}
		if res == nil && p == nil {
			return // abandoned: answered already
		}
		if p != nil && !cr.state.CompareAndSwap(callRunning, callFinished) && cr.state.Load() != callFinished {
			return
		}
		done <- outcome{res, p}
	}()
	grace := rn.l.cancelGrace()
	timeout := rn.timeoutOf(rn.resolveTool(ctx, cr.tc.Name))
	timer := time.NewTimer(timeout + grace)
	defer timer.Stop()
	ctxDone := ctx.Done()
	var cancelAt time.Time
	for {
		select {
		case o := <-done:
			return o.res, o.pend
		case <-ctxDone:
			ctxDone = nil
			cancelAt = time.Now().Add(grace)
			timer.Reset(grace)
		case <-timer.C:
			now := time.Now()
			if !cancelAt.IsZero() && !now.Before(cancelAt) {
				if r := cr.giveUp(false); r != nil {
					return r, nil
				}
				continue // it finished meanwhile: done has it
			}
			started := time.Duration(cr.execStart.Load())
			if started == 0 { // still before the tool: it cannot hang yet
				timer.Reset(timeout + grace)
				continue
			}
			hangAt := cr.start.Add(started + cr.timeout + grace)
			if now.Before(hangAt) {
				timer.Reset(hangAt.Sub(now))
				continue
			}
			if r := cr.giveUp(true); r != nil {
				return r, nil
			}
		}
	}
}

// close ends the inner calls of the call, once its tool has returned:
// those still running are cancelled and waited for, and later ones are
// answered as not run. It returns the program's state if an inner call
// waits for a decision: the call then pauses.
func (in *Inner) close() *ProgramState {
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	in.cancel(errors.New("the call that made the inner calls ended"))
	in.wg.Wait()
	if len(in.pending) == 0 {
		return nil
	}
	recs, pend := slices.Clone(in.records), slices.Clone(in.pending)
	for _, rec := range in.unmade() {
		if rec.Result != nil { // it ran: it stays, so that it never runs twice
			recs = append(recs, rec)
		}
	}
	slices.SortFunc(recs, func(a, b InnerRecord) int { return cmp.Compare(innerSeq(a.ID), innerSeq(b.ID)) })
	slices.SortFunc(pend, func(a, b PendingCall) int { return cmp.Compare(innerSeq(a.CallID), innerSeq(b.CallID)) })
	return &ProgramState{Started: in.started, Calls: recs, Pending: pend}
}

// meta records the inner calls on the call's result: how many, and what
// those to agents spent.
func (in *Inner) meta(r *ToolResult) {
	in.mu.Lock()
	// The journal's calls that this run did not make again were made
	// all the same, and counted against the budget (see resumeWith).
	r.Meta.InnerCalls = int(in.count.Load()) + len(in.unmade())
	spent := in.spent
	in.mu.Unlock()
	if spent != (Accounting{}) {
		if r.Meta.Spent != nil {
			spent.AddSpent(r.Meta.Spent)
		}
		r.Meta.Spent = &spent
	}
}

// unmade returns the calls of the journal (see innerResume) that this
// run of the program did not make again: it stopped, or returned, before
// it made them. Call it with in.mu held, or once the Runs are done.
func (in *Inner) unmade() []InnerRecord {
	if in.resume == nil {
		return nil
	}
	var out []InnerRecord
	for _, rec := range in.resume.state.Calls {
		if !in.reached[rec.ID] {
			out = append(out, rec)
		}
	}
	return out
}

// innerSeq is the number at the end of an inner call's ID.
func innerSeq(id string) int {
	n, _ := strconv.Atoi(id[strings.LastIndexByte(id, '/')+1:])
	return n
}

// sameJSON reports whether two JSON texts are the same value.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// resumeProgram finishes a call whose tool's inner calls paused the
// run: the tool runs again from the start, and its inner calls are
// answered from the journal, or finish with their decisions (see
// [Inner]). The guard and the pre-hooks do not run again for the call
// itself. The program may pause again.
func (rn *runState) resumeProgram(ctx context.Context, cr *callRun, p PendingCall, decisions map[string]Approval) (*ToolResult, *PendingCall) {
	if err := ctx.Err(); err != nil {
		cr.tc.Arguments, cr.kind, cr.source = p.Arguments, p.Meta.Source, p.Meta.SourceName
		res := errorResult(KindCanceled, "the run was canceled before the program of %s ran again: "+
			"the inner calls it had made stand, and none of those it waited on ran (%v)", cr.tc.Name, context.Cause(ctx))
		res.Meta.InnerCalls = len(p.Program.Calls) // they count as the run's calls
		return cr.finish(ctx, res), nil
	}
	if res := cr.restore(ctx, p, nil); res != nil {
		return cr.finish(ctx, res), nil
	}
	r := &innerResume{state: p.Program, calls: make(map[string]*InnerRecord, len(p.Program.Calls)),
		pending: make(map[string]PendingCall, len(p.Program.Pending)), decisions: decisions}
	for i := range p.Program.Calls {
		r.calls[p.Program.Calls[i].ID] = &p.Program.Calls[i]
	}
	for _, q := range p.Program.Pending {
		r.pending[q.CallID] = q
	}
	cr.extra().resume = r
	res := cr.runTool(ctx)
	if res == nil {
		return cr.pausedCall()
	}
	return cr.finish(ctx, res), nil
}

// ProgramState is what a call whose inner calls paused the run (see
// [Inner]) had done: the journal its tool is answered from when it runs
// again on resume.
type ProgramState struct {
	// Started is when the program first started (see [Inner.Started]).
	Started time.Time `json:"started"`
	// Calls lists the inner calls made before the pause, in the order of
	// their numbers, each with the arguments the program gave and the
	// result it got, or none if it waits.
	Calls []InnerRecord `json:"calls,omitempty"`
	// Pending lists the inner calls that wait for a decision, with their
	// own IDs (see [Inner]); [PendingCall.Waiting] lists them as the run
	// does, and Resume takes a decision for each.
	Pending []PendingCall `json:"pending"`
}

// InnerRecord is an inner call made before its run paused.
type InnerRecord struct {
	// ID is the inner call's ID (see [Inner]).
	ID string `json:"id"`
	// Name and Arguments are the call as the program made it.
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Result is the result it got; nil while it waits for a decision.
	Result *ToolResult `json:"result,omitempty"`
}
