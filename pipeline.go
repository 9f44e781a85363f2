package toolloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// cancelGrace is how long a cancelled or timed-out call gets to return on
// its own before the loop gives up waiting and answers for it.
const cancelGrace = 200 * time.Millisecond

// cancelGrace is the loop's grace; tests shorten it with l.grace.
func (l *AgentLoop) cancelGrace() time.Duration {
	if l.grace > 0 {
		return l.grace
	}
	return cancelGrace
}

// callRun is one tool call on its way through the pipeline:
// normalize → resolve → validate → guard → pre-hook → execute → post-hook → truncate.
type callRun struct {
	rn    *runState
	tc    ToolCall
	start time.Time
	e     *entry
	call  *Call // &callv once the tool is resolved
	callv Call
	// decision, if set, settles an Ask verdict (RunCall).
	decision *Approval
	// tm times the call's stages, while the run is observed.
	tm *callMarks
	// parent is the context the call runs under, on its worker.
	parent context.Context
	// kind and source are the resolved tool's provenance.
	kind   SourceKind
	source string
	// x holds what few calls have: repairs, rewrites, notes, a stack.
	x *callExtra
	// result is where finish builds the call's result: a copy, so the
	// loop never modifies a result the tool may still hold (typed tools
	// write theirs here directly). It is allocated apart from the call's
	// state, so a transcript that keeps the result keeps none of the rest.
	result *ToolResult

	// state says who owns the call's result: the goroutine running it
	// until it finishes, or the coordinator if it gave up waiting. The
	// step from callRunning to callExecuting is the tool's start: once the
	// coordinator has answered for the call, it can no longer happen.
	state atomic.Int32
	index int32 // the call's position in its turn
	ctx   callCtx
	// timeout bounds the tool. The coordinator sets it before the call
	// starts; calls run outside a turn set it when the tool starts.
	timeout time.Duration
	// execStart is when the tool started, as time since the turn began; 0
	// until then. The turn's coordinator reads it to find hanging tools.
	turn      *turn // the turn coordinating this call, if any
	execStart atomic.Int64
	// rep rate-limits progress and partial output; nil until the tool
	// reports, so the calls that never do pay nothing for it.
	rep atomic.Pointer[reports]
	// bg: the model asked to run the call in the background.
	bg bool
	// outer is the call whose tool made this one, for an inner call (see
	// Inner); inner is the maker of this call's inner calls, once its
	// tool asked for it.
	outer *callRun
	inner atomic.Pointer[Inner]
}

// callExtra is the part of a call's state that few calls need, kept
// apart so that the rest stays small.
type callExtra struct {
	repairs, modified []string // the argument repairs and rewrites
	notes             []string // text the model sees after the output
	stack             string   // a panic's stack
	unloaded          bool     // a deferred tool the model had not loaded
	// paused is the state of an agent's run that paused (see AgentTool).
	paused *PauseState
	// program is what the tool's program had done when one of its inner
	// calls paused the run; resume is the journal it runs again with.
	program *ProgramState
	resume  *innerResume
}

// extra returns the call's extra state, making it on first use.
func (cr *callRun) extra() *callExtra {
	if cr.x == nil {
		cr.x = new(callExtra)
	}
	return cr.x
}

// ex returns the call's extra state for reading.
func (cr *callRun) ex() callExtra {
	if cr.x == nil {
		return callExtra{}
	}
	return *cr.x
}

// The states of a callRun.
const (
	callRunning   int32 = iota // in the stages before the tool
	callExecuting              // the tool has started
	callFinished               // the call's goroutine answered
	callAbandoned              // the coordinator answered for it
)

// execCall runs one call through the pipeline. It returns the call's
// result, or, when the guard asked and the run pauses for a human, the
// pending call instead.
func (rn *runState) execCall(ctx context.Context, cr *callRun) (*ToolResult, *PendingCall) {
	if rn.observed {
		// Look the tool up early so the start event names its source.
		if ctx.Err() == nil {
			if e := rn.resolveTool(ctx, cr.tc.Name); e != nil {
				cr.kind, cr.source = e.kind, e.source
			}
		}
		cr.emit(&Event{Type: EventStart, Arguments: eventArgs(cr.tc.Arguments)})
		cr.tm = &callMarks{mark: cr.start}
	}
	res, pend := cr.prepare(ctx)
	if pend != nil {
		return nil, pend
	}
	cr.tm.lap(stageChecks)
	if res == nil {
		if res = cr.proceed(ctx); res == nil {
			return cr.pausedCall()
		}
	}
	return cr.finish(ctx, res), nil
}

// prepare runs the stages up to and including the guard. It returns a
// result when the call ends early, a pending call when it must wait for a
// human, or neither when the call may proceed.
func (cr *callRun) prepare(ctx context.Context) (*ToolResult, *PendingCall) {
	l := cr.rn.l
	if err := ctx.Err(); err != nil {
		return errorResult(KindCanceled, "not run: the run was canceled before this call started (%v)", context.Cause(ctx)), nil
	}
	args := normalizeArgs(cr.tc.Arguments)
	if l.Repair != nil && needsRepair(args) {
		if fixed, repairs := cr.repair(args); len(repairs) > 0 {
			args = fixed
			cr.extra().repairs = repairs
			if cr.rn.observed {
				cr.emit(&Event{Type: EventArgumentsRepaired, Repairs: repairs, Arguments: eventArgs(args)})
			}
		}
	}
	if res := cr.resolve(ctx); res != nil {
		return res, nil
	}
	if cr.e.spec.Background {
		args, cr.bg = cr.rn.takeBackground(cr.e, args)
		cr.bg = cr.bg && cr.outer == nil // a program's calls run in its time
	}
	if te := cr.e.validate(args); te != nil {
		return ErrorResult(te), nil
	}
	cr.setCall(args)
	if l.Guard == nil {
		return nil, nil
	}
	return cr.guard(ctx)
}

// pendingMeta is what a paused call carries of its metadata.
func (cr *callRun) pendingMeta() ResultMeta {
	x := cr.ex()
	m := ResultMeta{Repairs: x.repairs, Modified: x.modified}
	m.Source, m.SourceName = cr.kind, cr.source
	return m
}

// setCall makes the Call that guards, hooks and the tool see.
func (cr *callRun) setCall(args json.RawMessage) {
	cr.callv = Call{
		ID: cr.tc.ID, Name: cr.tc.Name, Arguments: args,
		Annotations: cr.e.spec.Annotations, Source: cr.e.kind, SourceName: cr.e.source,
		RunID: cr.rn.id, Turn: cr.turnNo(), MaxOutputBytes: max(cr.rn.lim.MaxOutputBytes, 0),
	}
	if cr.rn.observed {
		cr.callv.Reporter = cr
	}
	cr.callv.cr = cr
	if cr.bg {
		cr.callv.Job = cr.rn.reserveJob()
	}
	cr.call = &cr.callv
}

func (cr *callRun) repair(args json.RawMessage) (fixed json.RawMessage, repairs []string) {
	defer func() {
		if p := recover(); p != nil {
			fixed, repairs = args, nil
			cr.rn.logger().Warn("argument repairer panicked", "tool", cr.tc.Name, "panic", p)
		}
	}()
	return cr.rn.l.Repair(args)
}

func (cr *callRun) resolve(ctx context.Context) *ToolResult {
	reg := cr.rn.l.Tools
	cr.e = cr.rn.resolveTool(ctx, cr.tc.Name)
	if cr.e != nil {
		cr.kind, cr.source = cr.e.kind, cr.e.source
		if cr.rn.ctl != nil && cr.rn.unloaded(cr.e) {
			cr.extra().unloaded = true
		}
		return nil
	}
	msg := fmt.Sprintf("unknown tool %q.", cr.tc.Name)
	if reg != nil {
		if near := reg.Suggest(cr.tc.Name); len(near) > 0 {
			msg += " Did you mean " + quoteList(near) + "?"
		} else if specs := reg.Specs(ctx); len(specs) > 0 {
			names := make([]string, 0, min(len(specs), 30))
			for _, s := range specs[:min(len(specs), 30)] {
				names = append(names, s.Name)
			}
			msg += " Available tools: " + quoteList(names) + "."
		}
	}
	return errorResult(KindNotFound, "%s", msg)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// guard asks the guard, and the approver if the guard asks.
func (cr *callRun) guard(ctx context.Context) (*ToolResult, *PendingCall) {
	l := cr.rn.l
	v, perr := protect(func() Verdict { return l.Guard.Check(ctx, cr.call) })
	if perr != nil {
		v = Verdict{Decision: Deny, Reason: "the guard failed: " + perr.Error(), Rule: "panic"}
		cr.extra().stack = string(perr.(*panicError).stack)
	}
	if cr.rn.observed {
		cr.tm.lap(stageChecks)
		cr.emit(&Event{Type: EventGuardVerdict, Verdict: &v})
	}
	switch v.Decision {
	case Allow, "":
		return nil, nil
	case Modify:
		return cr.modify(v), nil
	case Deny:
		return errorResult(KindDenied, "denied by policy: %s", orDefault(v.Reason, "no reason given")), nil
	case Ask:
		if v.Arguments != nil {
			if res := cr.modify(v); res != nil {
				return res, nil
			}
		}
		return cr.ask(ctx, v)
	}
	return errorResult(KindDenied, "denied: the guard gave an unknown decision %q", v.Decision), nil
}

// modify applies a guard's rewritten arguments.
func (cr *callRun) modify(v Verdict) *ToolResult {
	args := normalizeArgs(v.Arguments)
	if te := cr.e.validate(args); te != nil {
		return errorResult(KindInvalidArgs, "policy rewrote the arguments into ones %s does not accept, so it did not run: %s", cr.tc.Name, te.Message)
	}
	cr.call.Arguments = args
	cr.extra().modified = append(cr.extra().modified, "guard: "+orDefault(v.Rule, v.Reason))
	cr.extra().notes = append(cr.extra().notes, fmt.Sprintf("Note: policy changed the arguments before the call ran (%s). It ran with: %s",
		orDefault(v.Reason, "no reason given"), args))
	return nil
}

// ask settles an Ask verdict: with an approver, synchronously; without
// one, by pausing the run if the loop allows it, or else by denying.
func (cr *callRun) ask(ctx context.Context, v Verdict) (*ToolResult, *PendingCall) {
	l := cr.rn.l
	if cr.decision != nil { // decided before the call came back (RunCall)
		if cr.rn.observed {
			cr.emit(&Event{Type: EventPermissionCompleted, Approval: cr.decision})
		}
		if !cr.decision.Approved {
			return notApproved(*cr.decision), nil
		}
		return cr.approvedWith(cr.decision.Arguments), nil
	}
	if cr.rn.observed && (l.Approver != nil || l.PauseForApproval) {
		cr.emit(&Event{Type: EventPermissionRequested, Verdict: &v})
	}
	if l.Approver == nil {
		if l.PauseForApproval {
			return nil, &PendingCall{
				CallID: cr.tc.ID, Name: cr.tc.Name, Arguments: cr.call.Arguments,
				Reason: v.Reason, Rule: v.Rule, Meta: cr.pendingMeta(), Notes: cr.ex().notes,
			}
		}
		cr.rn.warnNoApprover(cr.tc.Name)
		return errorResult(KindDenied, "denied: this call needs approval (%s) and no approver is configured", orDefault(v.Reason, "no reason given")), nil
	}
	cr.tm.lap(stageChecks)
	cr.rn.approveMu.Lock()
	a, err := protect2(func() (Approval, error) { return l.Approver.Approve(ctx, cr.call, v.Reason) })
	cr.rn.approveMu.Unlock()
	cr.tm.lap(stageApproval)
	if err != nil {
		a = Approval{Approved: false, Reason: "the approver failed: " + err.Error()}
	}
	if cr.rn.observed {
		cr.emit(&Event{Type: EventPermissionCompleted, Approval: &a})
	}
	if !a.Approved {
		return notApproved(a), nil
	}
	return cr.approvedWith(a.Arguments), nil
}

func notApproved(a Approval) *ToolResult {
	return errorResult(KindDenied, "denied by the approver: %s", orDefault(a.Reason, "no reason given"))
}

// sameArgs reports whether a and b are the same JSON text, but for
// insignificant white space.
func sameArgs(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// approvedWith applies the arguments an approval edited, if any: the
// call runs with them once the tool's schema accepts them. It returns a
// result when it does not.
func (cr *callRun) approvedWith(edited json.RawMessage) *ToolResult {
	if edited == nil {
		return nil
	}
	args := normalizeArgs(edited)
	if sameArgs(args, cr.call.Arguments) {
		return nil
	}
	if te := cr.e.validate(args); te != nil {
		return errorResult(KindInvalidArgs, "the arguments edited when the call was approved are not ones %s accepts, so it did not run: %s", cr.tc.Name, te.Message)
	}
	cr.call.Arguments = args
	x := cr.extra()
	x.modified = append(x.modified, "approval: edited")
	x.notes = append(x.notes, fmt.Sprintf("Note: the arguments were edited when the call was approved, before it ran. It ran with: %s", args))
	return nil
}

// proceed runs the pre-hooks, the tool and the post-hooks. It returns nil
// when the tool is an agent whose run paused (see pausedCall).
func (cr *callRun) proceed(ctx context.Context) *ToolResult {
	if res := cr.preHooks(ctx); res != nil {
		return res
	}
	return cr.runTool(ctx)
}

// runTool runs the tool and the post-hooks, or returns nil when the tool
// is an agent whose run paused.
func (cr *callRun) runTool(ctx context.Context) *ToolResult {
	if res := cr.claim(ctx); res != nil {
		return res
	}
	cr.tm.lap(stagePreHooks)
	if cr.call.Job != "" {
		res := cr.startJob()
		cr.tm.ran()
		return cr.postHooks(ctx, res)
	}
	res := cr.execute(ctx)
	cr.tm.ran()
	if res == nil {
		return nil // paused
	}
	if res = cr.cutOutput(res); cr.answered() {
		return res // the coordinator answered meanwhile: no post-hook starts
	}
	return cr.postHooks(ctx, res)
}

// pausedCall is the pending call of a tool that is an agent whose run
// paused for approval: it waits, as a call the guard asked about does,
// and holds the child's state for Resume. Nothing of the call is
// reported complete. If the turn's coordinator answered for the call
// meanwhile, there is no pending call either.
func (cr *callRun) pausedCall() (*ToolResult, *PendingCall) {
	if !cr.state.CompareAndSwap(callExecuting, callFinished) {
		return nil, nil
	}
	cr.closeReports(true)
	return nil, &PendingCall{
		CallID: cr.tc.ID, Name: cr.tc.Name, Arguments: cr.call.Arguments,
		Meta: cr.pendingMeta(), Notes: cr.ex().notes, Child: cr.x.paused, Program: cr.x.program,
	}
}

// claim marks the tool as started, unless the run is over or the turn's
// coordinator has already answered for the call: then it returns the
// result that says the tool did not run. The step is atomic with the
// coordinator's answer (see turn.abandon), so a call the model is told
// did not run never runs.
func (cr *callRun) claim(ctx context.Context) *ToolResult {
	if err := ctx.Err(); err != nil {
		return notStarted(cr.tc.Name, context.Cause(ctx))
	}
	if !cr.state.CompareAndSwap(callRunning, callExecuting) {
		return notStarted(cr.tc.Name, context.Canceled) // answered already; finish drops it
	}
	return nil
}

// notStarted is the result of a call stopped before its tool started.
func notStarted(name string, cause error) *ToolResult {
	return errorResult(KindCanceled, "not run: the run was canceled before %s started (%v)", name, cause)
}

// answered reports that the turn's coordinator has answered for the call.
func (cr *callRun) answered() bool { return cr.state.Load() == callAbandoned }

// cutOutput cuts a tool's output to the pre-hook budget, so post-hooks
// and everything after them hold no more than that.
func (cr *callRun) cutOutput(res *ToolResult) *ToolResult {
	budget := cr.rn.lim.MaxOutputBytes
	if res == nil || budget <= 0 {
		return res
	}
	n := contentBytes(res.Content)
	if n <= budget {
		return res
	}
	r := cr.own(res)
	r.Content, _ = truncateContent(r.Content, budget)
	r.Meta.Bytes = max(r.Meta.Bytes, n)
	r.Meta.Truncated = true
	return r
}

// preHooks runs the pre-tool-use hooks, if there are any.
func (cr *callRun) preHooks(ctx context.Context) *ToolResult {
	if len(cr.rn.l.Hooks.PreToolUse) == 0 {
		return nil
	}
	return cr.runPreHooks(ctx)
}

// runPreHooks is preHooks with hooks to run. It is apart because its
// stack frame is large (2.5 KB): entered by every call, it made a worker
// grow its stack after every garbage collection had shrunk it.
func (cr *callRun) runPreHooks(ctx context.Context) *ToolResult {
	hooks := cr.rn.l.Hooks.PreToolUse
	modified := false
	for i, h := range hooks {
		if cr.answered() || ctx.Err() != nil {
			return notStarted(cr.tc.Name, context.Cause(ctx))
		}
		r, err := protect2(func() (PreToolUse, error) { return h(ctx, cr.call) })
		if err != nil {
			cr.hookEvent("pre_tool_use", i, effectOf(err), err.Error())
			if ctx.Err() != nil && isContextErr(err) {
				return notStarted(cr.tc.Name, context.Cause(ctx))
			}
			return cr.hookFailure("pre-tool-use", i, err, ", so "+cr.tc.Name+" did not run")
		}
		if r.Deny {
			cr.hookEvent("pre_tool_use", i, "deny", r.Reason)
			return errorResult(KindDenied, "denied by a pre-tool-use hook: %s", orDefault(r.Reason, "no reason given"))
		}
		if r.Arguments != nil {
			cr.call.Arguments = normalizeArgs(r.Arguments)
			cr.extra().modified = append(cr.extra().modified, fmt.Sprintf("pre_tool_use[%d]", i))
			modified = true
			cr.hookEvent("pre_tool_use", i, "modify", string(cr.call.Arguments))
		}
		if r.Context != "" {
			cr.extra().notes = append(cr.extra().notes, r.Context)
			cr.hookEvent("pre_tool_use", i, "context", r.Context)
		}
	}
	if modified {
		if te := cr.e.validate(cr.call.Arguments); te != nil {
			return errorResult(KindInvalidArgs, "a pre-tool-use hook rewrote the arguments into ones %s does not accept, so it did not run: %s", cr.tc.Name, te.Message)
		}
	}
	return nil
}

func (cr *callRun) postHooks(ctx context.Context, res *ToolResult) *ToolResult {
	for i, h := range cr.rn.l.Hooks.PostToolUse {
		if cr.answered() {
			return res
		}
		r, err := protect2(func() (*ToolResult, error) { return h(ctx, cr.call, res) })
		if err != nil {
			eff := effectOf(err)
			if eff == "error" {
				eff = "reject"
			}
			cr.hookEvent("post_tool_use", i, eff, err.Error())
			return cr.hookFailure("post-tool-use", i, err, "")
		}
		if r != nil {
			res = r
			cr.hookEvent("post_tool_use", i, "transform", "")
		}
	}
	return res
}

// hookFailure turns a hook's error into the call's result: a *ToolError
// keeps its kind, a panic is kind panic, anything else execution_failed.
// what, if set, says what became of the tool.
func (cr *callRun) hookFailure(hook string, i int, err error, what string) *ToolResult {
	var pe *panicError
	if errors.As(err, &pe) {
		cr.extra().stack = string(pe.stack)
		return errorResult(KindPanic, "%s hook %d panicked%s: %v", hook, i, what, pe.value)
	}
	var te *ToolError
	if errors.As(err, &te) {
		return ErrorResult(te)
	}
	return errorResult(KindExecutionFailed, "%s hook %d failed%s: %v", hook, i, what, err)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func effectOf(err error) string {
	var pe *panicError
	if errors.As(err, &pe) {
		return "panic"
	}
	return "error"
}

func (cr *callRun) hookEvent(hook string, i int, effect, detail string) {
	if cr.rn.observed {
		cr.emit(&Event{Type: EventHook, Hook: &HookEffect{Hook: hook, Index: i, Effect: effect, Detail: detail}})
	}
}

// execute runs the tool, through the middleware, bounded by its timeout.
// It runs on the call's own goroutine; if the tool ignores its context and
// hangs, the turn's coordinator stops waiting for it (see runTurn). It
// returns nil, with the child's state in cr.x.paused, when the tool is an
// agent whose run paused.
func (cr *callRun) execute(ctx context.Context) (res *ToolResult) {
	if cr.timeout == 0 {
		cr.timeout = cr.rn.timeoutOf(cr.e)
	}
	// The timeout runs from the tool's start. When nothing could have held
	// the call since it entered the pipeline (no guard, no pre-hook), that
	// is the call's own start, give or take a validation: one clock read
	// less on every call.
	start := cr.start
	if l := cr.rn.l; l.Guard != nil || len(l.Hooks.PreToolUse) > 0 || cr.decision != nil {
		start = time.Now()
	}
	cr.ctx.init(ctx, start, cr.timeout)
	if cr.turn != nil {
		// Tell the turn's coordinator the tool is starting.
		cr.execStart.Store(int64(max(start.Sub(cr.turn.begin), 1)))
	} else if cr.outer != nil {
		cr.execStart.Store(int64(max(start.Sub(cr.start), 1))) // see Inner.exec
	}
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				cr.extra().stack = string(debug.Stack())
				res, err = errorResult(KindPanic, "tool %s panicked: %v", cr.tc.Name, p), nil
			}
		}()
		mw := cr.rn.l.Hooks.Middleware
		if ft, ok := cr.e.tool.(resultWriter); ok && len(mw) == 0 {
			// A typed tool writes its result in place, with room for one
			// content block: two allocations less.
			cr.result = newResultBlock()
			if err = ft.runInto(&cr.ctx, cr.call, cr.result); err == nil {
				res = cr.result
			}
		} else if len(mw) > 0 {
			res, err = chain(cr.e.tool.Run, mw)(&cr.ctx, cr.call)
		} else {
			res, err = cr.e.tool.Run(&cr.ctx, cr.call) // no method value to allocate
		}
	}()
	if in := cr.inner.Load(); in != nil {
		if ps := in.close(); ps != nil {
			// An inner call waits for a decision: the call pauses, whatever
			// the tool made of it, and runs again on resume.
			cr.ctx.release(true)
			cr.extra().program = ps
			return nil
		}
	}
	ended, timedOut := cr.ctx.release(err != nil)
	switch {
	case err != nil:
		if ap := asAgentPaused(err); ap != nil {
			cr.extra().paused = ap.state
			return nil
		}
		if ended && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return cr.contextResult(timedOut, "")
		}
		var ps interface{ PanicStack() string }
		if errors.As(err, &ps) {
			cr.extra().stack = ps.PanicStack() // a panic in another process
		}
		return ErrorResult(err)
	case res == nil:
		return &ToolResult{Status: StatusOK}
	}
	return res
}

func (cr *callRun) contextResult(timedOut bool, extra string) *ToolResult {
	if timedOut {
		return errorResult(KindTimeout, "tool %s timed out after %v%s", cr.tc.Name, cr.timeout, extra)
	}
	if cr.parent != nil && context.Cause(cr.parent) == errInterruptNow {
		return errorResult(KindCanceled, "tool %s was canceled: the run was interrupted while it ran%s", cr.tc.Name, extra)
	}
	return errorResult(KindCanceled, "tool %s was canceled: the run was stopped while it ran%s", cr.tc.Name, extra)
}

// finish normalizes the result, runs the failure hooks, adds the notes,
// truncates, fills in the metadata and reports completion.
//
// It returns nil if the turn's coordinator gave up on the call meanwhile
// and answered for it.
func (cr *callRun) finish(ctx context.Context, res *ToolResult) *ToolResult {
	r := cr.own(res)
	r.Content = r.Content[:len(r.Content):len(r.Content)]
	normalizeResult(r)
	if r.Status == StatusError && len(cr.rn.l.Hooks.PostToolUseFailure) > 0 {
		cr.failureHooks(ctx, r)
	}
	if !cr.state.CompareAndSwap(callRunning, callFinished) && !cr.state.CompareAndSwap(callExecuting, callFinished) {
		return nil
	}
	cr.closeReports(true)
	x := cr.ex()
	for _, n := range x.notes {
		r.Content = append(r.Content, TextContent(n))
	}
	budget := cr.rn.share
	r.Meta.Bytes = max(r.Meta.Bytes, contentBytes(r.Content))
	if budget > 0 {
		var cut bool
		r.Content, cut = truncateContent(r.Content, budget)
		r.Meta.Truncated = r.Meta.Truncated || cut
	}
	r.CallID, r.Name = cr.tc.ID, cr.tc.Name
	r.Meta.Source, r.Meta.SourceName = cr.kind, cr.source
	r.Meta.Repairs, r.Meta.Modified = x.repairs, x.modified
	r.Meta.Unloaded = x.unloaded
	r.Meta.Duration = time.Since(cr.start)
	if in := cr.inner.Load(); in != nil {
		in.meta(r)
	}
	if cr.rn.observed {
		cr.emitComplete(r, x.stack)
	}
	return r
}

// callMarks times a call's stages (see CallTiming): each stage's end
// adds the time since the previous one's to its own. Its methods do
// nothing on a nil callMarks, which is what a call of a run nobody
// observes has.
type callMarks struct {
	t    CallTiming
	mark time.Time
	// tool: the tool has returned, so what is left is post-hooks and
	// truncation, not checks.
	tool bool
}

// The stages of a call, as callMarks.lap counts them.
const (
	stageChecks = iota
	stageApproval
	stagePreHooks
	stageTool
	stageAfter
)

// lap adds the time since the last mark to the stage's time, and marks
// now.
func (m *callMarks) lap(stage int) {
	if m == nil {
		return
	}
	now := time.Now()
	d := now.Sub(m.mark)
	m.mark = now
	switch stage {
	case stageChecks:
		m.t.Checks += d
	case stageApproval:
		m.t.Approval += d
	case stagePreHooks:
		m.t.PreHooks += d
	case stageTool:
		m.t.Tool += d
	default:
		m.t.After += d
	}
}

// ran marks the tool's return.
func (m *callMarks) ran() {
	if m == nil {
		return
	}
	m.lap(stageTool)
	m.tool = true
}

// timing returns the call's timing at its end, or nil.
func (m *callMarks) timing() *CallTiming {
	if m == nil {
		return nil
	}
	if m.tool {
		m.lap(stageAfter)
	} else {
		m.lap(stageChecks)
	}
	return &m.t
}

// failureHooks runs the post-tool-use-failure hooks on r, a failed
// result. It is apart from finish to keep finish's stack frame, which
// every call enters, small.
func (cr *callRun) failureHooks(ctx context.Context, r *ToolResult) {
	if cr.call == nil { // failed before the tool was resolved or validated
		cr.callv = Call{ID: cr.tc.ID, Name: cr.tc.Name, Arguments: cr.tc.Arguments, RunID: cr.rn.id, Turn: cr.turnNo()}
		cr.call = &cr.callv
	}
	for i, h := range cr.rn.l.Hooks.PostToolUseFailure {
		if cr.answered() {
			break
		}
		g, err := protect(func() string { return h(ctx, cr.call, r) })
		if err != nil {
			cr.hookEvent("post_tool_use_failure", i, "panic", err.Error())
			continue
		}
		if g != "" {
			cr.extra().notes = append(cr.extra().notes, g)
			cr.hookEvent("post_tool_use_failure", i, "guidance", g)
		}
	}
}

// emitComplete reports the call's completion. It is apart from finish,
// which every call enters, to keep the event out of finish's stack frame
// (see runState.emitMessages).
//
//go:noinline
func (cr *callRun) emitComplete(r *ToolResult, stack string) {
	cr.emit(&Event{Type: EventComplete, Result: r, Stack: stack, Timing: cr.tm.timing()})
}

// normalizeResult makes r's status and error agree, and gives a failed
// result with no content its error's message, as the model is shown it;
// JSON nested too deep becomes text.
func normalizeResult(r *ToolResult) {
	r.Content = deepJSONAsText(r.Content)
	switch {
	case r.Error != nil:
		r.Status = StatusError
	case r.Status == StatusError:
		r.Error = &ToolError{Kind: KindExecutionFailed, Message: orDefault(r.Text(), "the tool reported an error")}
	case r.Status == "":
		r.Status = StatusOK
	}
	if r.Status == StatusError && len(r.Content) == 0 {
		r.Content = []Content{TextContent(r.Error.Message)}
	}
}

// own returns res as the call's own result, which the loop may change: a
// copy, unless res is that already. The loop never changes a result a tool
// may still hold.
func (cr *callRun) own(res *ToolResult) *ToolResult {
	if res == cr.result {
		return res
	}
	if cr.result == nil {
		cr.result = new(ToolResult)
	}
	*cr.result = *res
	return cr.result
}

// abandoned completes a call the coordinator gave up waiting for, with res.
// It runs on the coordinator's goroutine while the call's own goroutine may
// still be inside user code, so it reads only what that goroutine no longer
// writes: the source, once the tool has started.
func (cr *callRun) abandoned(res *ToolResult) *ToolResult {
	r := *res
	r.CallID, r.Name = cr.tc.ID, cr.tc.Name
	if cr.execStart.Load() != 0 {
		r.Meta.Source, r.Meta.SourceName = cr.kind, cr.source
	}
	r.Meta.Bytes = contentBytes(r.Content)
	r.Meta.Duration = time.Since(cr.start)
	if in := cr.inner.Load(); in != nil {
		in.meta(&r)
	}
	cr.closeReports(false)
	if cr.rn.observed && (cr.outer == nil || !cr.outer.answered()) {
		cr.rn.emit(&Event{Type: EventComplete, CallID: r.CallID, Tool: r.Name, ParentCallID: cr.parentID(), Turn: cr.turnNo(),
			Source: r.Meta.Source, SourceName: r.Meta.SourceName, Result: &r})
	}
	return &r
}

// giveUp answers for a call that is still running: timed out, or
// canceled with its run. A call whose tool has not started yet (it waits
// for its guard, approver or pre-hooks) is answered as not run, and the
// same atomic step keeps its tool from starting afterwards (see claim).
// It returns nil if the call finished meanwhile.
func (cr *callRun) giveUp(timedOut bool) *ToolResult {
	var res *ToolResult
	switch {
	case cr.state.CompareAndSwap(callRunning, callAbandoned):
		res = errorResult(KindCanceled, "not run: the run was canceled while %s waited for its guard, approver or hooks, which did not stop when asked; the tool did not start", cr.tc.Name)
	case cr.state.CompareAndSwap(callExecuting, callAbandoned):
		res = cr.contextResult(timedOut, " and did not stop when asked")
	default:
		return nil
	}
	return cr.abandoned(res)
}

// turnNo is the number of the call's turn: its program's, for an inner
// call, which may run after the run went on to its next turn (its
// program's call was answered for and left behind).
func (cr *callRun) turnNo() int {
	if cr.outer != nil {
		return cr.outer.callv.Turn
	}
	return cr.rn.turn
}

// parentID is the ID of the call whose tool made this one, for an inner
// call (see Inner), and empty otherwise.
func (cr *callRun) parentID() string {
	if cr.outer == nil {
		return ""
	}
	return cr.outer.tc.ID
}

func (cr *callRun) emit(e *Event) {
	if cr.answered() || cr.outer != nil && cr.outer.answered() {
		return // the coordinator answered for this call, or its program's
	}
	e.CallID, e.Tool = cr.tc.ID, cr.tc.Name
	e.Source, e.SourceName = cr.kind, cr.source
	if cr.outer != nil {
		// Its program's turn: the run may be in a later one once the
		// program's call was answered for (see turnNo).
		e.ParentCallID, e.Turn = cr.outer.tc.ID, cr.turnNo()
	}
	cr.rn.emit(e)
}

// deepJSONAsText turns JSON blocks nested deeper than MaxJSONDepth into
// text blocks of the same JSON, so the transcript can be read back. It
// copies cs before changing it: the blocks may be the tool's own.
func deepJSONAsText(cs []Content) []Content {
	cloned := false
	for i := range cs {
		if len(cs[i].JSON) == 0 || !tooDeep(cs[i].JSON) {
			continue
		}
		if !cloned {
			cs, cloned = slices.Clone(cs), true
		}
		c := &cs[i]
		c.Type, c.Text, c.JSON = ContentText, string(c.JSON), nil
	}
	return cs
}

// normalizeArgs trims space and turns empty arguments into {}, as models
// send for tools without parameters.
func normalizeArgs(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}")
	}
	return t
}

func needsRepair(args json.RawMessage) bool {
	return args[0] == '"' || args[0] == '`' || !json.Valid(args)
}

// eventArgs makes arguments safe to put in an event: invalid or too deeply
// nested JSON travels as a JSON string.
func eventArgs(raw json.RawMessage) json.RawMessage {
	if json.Valid(raw) && !tooDeep(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// panicError carries a recovered panic as an error.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// protect calls f, turning a panic into a *panicError.
func protect[T any](f func() T) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return f(), nil
}

// protect2 is protect for functions that return an error too.
func protect2[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return f()
}
