package toolloop

import (
	"context"
	"sync"
	"time"
)

// runTurn runs the calls of one assistant turn through exec (nil:
// rn.execCall) and returns their results in call order.
//
// Each call runs on its own goroutine, up to MaxConcurrency at once. An
// exclusive tool waits for the calls before it and holds back the calls
// after it. Calls whose result is already known (done[i] non-nil, on
// resume) are not run again. A call that must wait for approval has a nil
// result and is listed in pending.
//
// runTurn never waits on a call that will not end: a tool still running
// cancelGrace after its timeout, or any call still running cancelGrace after
// ctx is done, is answered for (timeout or canceled) and left behind; its
// late result is dropped. So a hanging tool cannot hang the run, but its
// goroutine lives until the tool returns.
func (rn *runState) runTurn(ctx context.Context, calls []ToolCall, done []*ToolResult,
	exec func(context.Context, *callRun) (*ToolResult, *PendingCall)) ([]*ToolResult, []PendingCall) {
	n := len(calls)
	// finished has room for every call's index and one wake (see wait).
	t := &turn{rn: rn, exec: exec, finished: make(chan int, n+1), begin: time.Now(), widx: -1}
	t.watched = !inBubble(t.begin)
	if n <= len(t.small.results) { // most turns: no allocation per slice
		t.results, t.pend, t.crs, t.seen = t.small.results[:n], t.small.pend[:n], t.small.crs[:n], t.small.seen[:n]
	} else {
		t.results, t.pend, t.crs, t.seen = make([]*ToolResult, n), make([]*PendingCall, n), make([]*callRun, n), make([]bool, n)
	}
	copy(t.results, done)
	limit := rn.lim.MaxConcurrency
	ctxDone := ctx.Done()
	var cancelAt time.Duration // since t.begin; 0 until ctx is done
	next, running, remaining := 0, 0, 0
	exclusiveRunning := false
	for i := range calls {
		if t.results[i] == nil {
			remaining++
		}
	}
	rn.share = rn.lim.resultShare(remaining)
	for remaining > 0 {
		// Start what may start.
		for next < n {
			if t.results[next] != nil {
				next++
				continue
			}
			if ctx.Err() != nil {
				// Never started: answer at once.
				cr := rn.newCall(calls[next], next)
				t.crs[next] = cr
				t.results[next], t.pend[next] = t.run(ctx, cr)
				next++
				remaining--
				continue
			}
			if rn.steer != nil && rn.steer.holding() {
				// An interrupt after the model turn: what has not started
				// does not.
				t.results[next] = rn.answerNotRun(calls[next], notRunInterrupted)
				next++
				remaining--
				continue
			}
			e := rn.resolveTool(ctx, calls[next].Name)
			excl := e != nil && e.spec.Exclusive
			if running >= limit || exclusiveRunning || (excl && running > 0) {
				break
			}
			started := t.start(ctx, calls[next], next, rn.timeoutOf(e))
			exclusiveRunning = excl
			running++
			next++
			// A call cannot hang before it has had its timeout.
			t.alarm(started + rn.timeoutOf(e) + rn.l.cancelGrace())
		}
		if remaining == 0 {
			break
		}
		switch i := t.wait(ctxDone); i {
		default:
			t.seen[i] = true
			running--
			remaining--
		case wokeByTimer:
			t.armed = false
			now := time.Since(t.begin)
			for i, cr := range t.crs {
				if cr == nil || t.seen[i] {
					continue
				}
				if st := cr.state.Load(); st == callFinished || st == callAbandoned {
					continue
				}
				started := time.Duration(cr.execStart.Load())
				switch {
				case cancelAt > 0 && now >= cancelAt:
					if !t.abandon(i, false) {
						continue // it finished meanwhile: t.finished has it
					}
				case started > 0:
					hangAt := started + cr.timeout + rn.l.cancelGrace()
					if now < hangAt {
						t.wakeBy(hangAt - now)
						continue
					}
					if !t.abandon(i, true) {
						continue
					}
				default:
					t.wakeBy(cr.timeout + rn.l.cancelGrace())
					continue
				}
				running--
				remaining--
			}
			if cancelAt > 0 {
				t.wakeBy(max(cancelAt-now, 0))
			}
		case wokeByContext:
			ctxDone = nil
			cancelAt = time.Since(t.begin) + rn.l.cancelGrace()
			t.wakeBy(rn.l.cancelGrace())
		}
		if running == 0 {
			exclusiveRunning = false
		}
	}
	if t.watched {
		watch.remove(t)
	} else {
		if t.armed {
			rn.timer.Stop()
		}
		rn.putTimer()
	}
	var pending []PendingCall
	for i, p := range t.pend {
		if p != nil {
			p.Index = i
			pending = append(pending, *p)
		}
	}
	return t.results, pending
}

// turn is runTurn's bookkeeping.
type turn struct {
	rn       *runState
	exec     func(context.Context, *callRun) (*ToolResult, *PendingCall) // nil: rn.execCall
	results  []*ToolResult
	pend     []*PendingCall
	crs      []*callRun
	seen     []bool // the coordinator has the call's answer
	finished chan int
	begin    time.Time
	armed    bool          // the coordinator is to be woken (see alarm)
	wakeAt   time.Duration // when, since begin
	// watched: the watchdog wakes the coordinator (see watch); otherwise,
	// in a testing/synctest bubble, the run's own timer does.
	watched bool
	widx    int       // the turn's place in watch.turns, or -1; guarded by watch.mu
	due     time.Time // when watch wakes the turn; guarded by watch.mu
	// first is the state of the turn's first call to start.
	first struct {
		cr   callRun
		used bool
	}
	// small holds the slices of turns of up to four calls.
	small struct {
		results [4]*ToolResult
		pend    [4]*PendingCall
		crs     [4]*callRun
		seen    [4]bool
	}
}

// run runs call cr through the turn's exec.
func (t *turn) run(ctx context.Context, cr *callRun) (*ToolResult, *PendingCall) {
	if t.exec != nil {
		return t.exec(ctx, cr)
	}
	return t.rn.execCall(ctx, cr)
}

// start runs call i on a worker goroutine. It returns when the call
// started, as time since the turn began.
func (t *turn) start(ctx context.Context, tc ToolCall, i int, timeout time.Duration) time.Duration {
	var cr *callRun
	if !t.first.used {
		// The turn's first call: its state is part of the turn's, and it
		// starts as the turn begins (a lookup and a validation later),
		// which spares it an allocation and a clock read.
		t.first.used = true
		cr = &t.first.cr
		*cr = callRun{rn: t.rn, tc: tc, index: int32(i), start: t.begin, decision: t.rn.decision}
	} else {
		cr = t.rn.newCall(tc, i)
	}
	cr.turn, cr.timeout, cr.parent = t, timeout, ctx
	t.crs[i] = cr
	if inBubble(cr.start) {
		go cr.run() // see inBubble
	} else {
		workers.run(cr)
	}
	return cr.start.Sub(t.begin)
}

// What wait returns when no call finished.
const (
	wokeByTimer   = -1 // the time asked for with wakeBy has come
	wokeByContext = -2 // the run's context is done
)

// wait waits for a call to finish, and returns its index, or for the time
// asked for with wakeBy (wokeByTimer), or for ctxDone (wokeByContext).
// The watchdog's wake comes on the calls' channel, so a turn whose context
// cannot be canceled waits on that channel alone: the cheapest wait there
// is.
func (t *turn) wait(ctxDone <-chan struct{}) int {
	t.first.used = true // a call started from now on starts later than the turn
	if t.watched && ctxDone == nil {
		return <-t.finished
	}
	select {
	case i := <-t.finished:
		return i
	case <-t.timerC():
		return wokeByTimer
	case <-ctxDone:
		return wokeByContext
	}
}

// wake is the watchdog waking the coordinator. A wake already waiting in
// the channel does for both, so it never blocks.
func (t *turn) wake() {
	select {
	case t.finished <- wokeByTimer:
	default:
	}
}

// run is the call's job on its worker (see turn.start): it runs the call
// and hands its result to the turn's coordinator.
func (cr *callRun) run() {
	t, i := cr.turn, int(cr.index)
	res, p := t.run(cr.parent, cr)
	if res == nil && p == nil {
		return // abandoned: the coordinator answered already
	}
	// A call pending on its guard is still running; one pending on an
	// agent that paused is finished already (see pausedCall).
	if p != nil && !cr.state.CompareAndSwap(callRunning, callFinished) && cr.state.Load() != callFinished {
		return
	}
	t.results[i], t.pend[i] = res, p
	t.finished <- i
}

// abandon answers for call i, which is still running: timed out, or
// canceled with the run. A call whose tool has not started yet (it waits
// for its guard, approver or pre-hooks) is answered as not run, and the
// same atomic step keeps its tool from starting afterwards (see claim).
//
// It reports false if the call finished meanwhile.
func (t *turn) abandon(i int, timedOut bool) bool {
	res := t.crs[i].giveUp(timedOut)
	if res == nil {
		return false
	}
	t.seen[i] = true
	t.results[i] = res
	return true
}

// wakeBy makes sure the coordinator wakes within d to look for calls to
// give up on.
func (t *turn) wakeBy(d time.Duration) {
	t.alarm(time.Since(t.begin) + d)
}

// alarm makes sure the coordinator wakes by at (since the turn began).
// The watchdog wakes it, or in a testing/synctest bubble the run's own
// timer, which serves every turn of the run.
func (t *turn) alarm(at time.Duration) {
	if t.armed && t.wakeAt <= at {
		return
	}
	t.wakeAt, t.armed = at, true
	if t.watched {
		watch.set(t, t.begin.Add(at))
		return
	}
	d := at - time.Since(t.begin)
	if t.rn.timer == nil {
		// A timer from outside a testing/synctest bubble runs on the real
		// clock, which the bubble's fake time never moves: none is taken
		// into a bubble, and none leaves one (see putTimer).
		if tm, ok := timers.Get().(*time.Timer); ok && !inBubble(t.begin) {
			t.rn.timer = tm
		} else {
			if ok {
				timers.Put(tm)
			}
			t.rn.timer = time.NewTimer(d)
			return
		}
	}
	t.rn.timer.Reset(d)
}

func (t *turn) timerC() <-chan time.Time {
	if !t.armed || t.watched {
		return nil
	}
	return t.rn.timer.C
}

// timers holds stopped timers for the turns of runs to come: RunCall makes
// a run per call, and a timer each would cost it two allocations.
var timers sync.Pool

// putTimer gives the run's timer, stopped, back to the pool.
func (rn *runState) putTimer() {
	if rn.timer != nil {
		rn.timer.Stop()
		if !inBubble(rn.started) {
			timers.Put(rn.timer)
		}
		rn.timer = nil
	}
}

func (rn *runState) newCall(tc ToolCall, i int) *callRun {
	return &callRun{rn: rn, tc: tc, index: int32(i), start: time.Now(), decision: rn.decision}
}

// timeoutOf is the execution timeout of a resolved tool (or the default).
func (rn *runState) timeoutOf(e *entry) time.Duration {
	if e != nil && e.spec.Timeout > 0 {
		return e.spec.Timeout
	}
	return rn.lim.ToolTimeout
}
