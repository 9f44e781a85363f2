package toolloop

import (
	"context"
	"time"
)

// runTurn runs the calls of one assistant turn through exec and returns
// their results in call order.
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
	t := &turn{
		rn: rn, results: make([]*ToolResult, n), pend: make([]*PendingCall, n),
		crs: make([]*callRun, n), finished: make(chan int, n), started: make(chan *callRun, n),
	}
	copy(t.results, done)
	limit := rn.l.maxConcurrency()
	ctxDone := ctx.Done()
	var cancelAt time.Time // when to give up on calls after ctx is done
	next, running, remaining := 0, 0, 0
	exclusiveRunning := false
	for i := range calls {
		if t.results[i] == nil {
			remaining++
		}
	}
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
				t.results[next], t.pend[next] = exec(ctx, cr)
				next++
				remaining--
				continue
			}
			excl := rn.exclusive(ctx, calls[next].Name)
			if running >= limit || exclusiveRunning || (excl && running > 0) {
				break
			}
			t.start(ctx, calls[next], next, exec)
			exclusiveRunning = excl
			running++
			next++
		}
		if remaining == 0 {
			break
		}
		select {
		case i := <-t.finished:
			t.crs[i].finishedSeen = true
			running--
			remaining--
			if running == 0 {
				exclusiveRunning = false
			}
		case cr := <-t.started:
			cr.hangAt = time.Now().Add(cr.timeout + cancelGrace)
			t.armTimer(cancelAt)
		case <-t.timerC():
			now := time.Now()
			for i, cr := range t.crs {
				if cr == nil || cr.finishedSeen || cr.state.Load() != callRunning {
					continue
				}
				switch {
				case !cancelAt.IsZero() && !now.Before(cancelAt):
					t.abandon(i, cr.contextResult(false, " and did not stop when asked"))
				case !cr.hangAt.IsZero() && !now.Before(cr.hangAt):
					t.abandon(i, cr.contextResult(true, " and did not stop when asked"))
				default:
					continue
				}
				running--
				remaining--
			}
			if running == 0 {
				exclusiveRunning = false
			}
			t.armTimer(cancelAt)
		case <-ctxDone:
			ctxDone = nil
			cancelAt = time.Now().Add(cancelGrace)
			t.armTimer(cancelAt)
		}
	}
	if t.timer != nil {
		t.timer.Stop()
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
	results  []*ToolResult
	pend     []*PendingCall
	crs      []*callRun
	finished chan int
	started  chan *callRun
	timer    *time.Timer
}

// start runs call i on its own goroutine.
func (t *turn) start(ctx context.Context, tc ToolCall, i int, exec func(context.Context, *callRun) (*ToolResult, *PendingCall)) {
	cr := t.rn.newCall(tc, i)
	cr.started = func(cr *callRun) { t.started <- cr }
	t.crs[i] = cr
	go func() {
		res, p := exec(ctx, cr)
		if res == nil && p == nil {
			return // abandoned: the coordinator answered already
		}
		if p != nil && !cr.state.CompareAndSwap(callRunning, callFinished) {
			return
		}
		t.results[i], t.pend[i] = res, p
		t.finished <- i
	}()
}

// abandon answers for call i, which is still running.
func (t *turn) abandon(i int, res *ToolResult) {
	cr := t.crs[i]
	if !cr.state.CompareAndSwap(callRunning, callAbandoned) {
		return
	}
	cr.finishedSeen = true
	t.results[i] = cr.abandoned(res)
}

// armTimer sets the timer for the earliest moment a running call may have
// to be given up on.
func (t *turn) armTimer(cancelAt time.Time) {
	at := cancelAt
	for _, cr := range t.crs {
		if cr != nil && !cr.finishedSeen && !cr.hangAt.IsZero() && (at.IsZero() || cr.hangAt.Before(at)) {
			at = cr.hangAt
		}
	}
	if at.IsZero() {
		return
	}
	d := max(time.Until(at), 0)
	if t.timer == nil {
		t.timer = time.NewTimer(d)
		return
	}
	t.timer.Reset(d)
}

func (t *turn) timerC() <-chan time.Time {
	if t.timer == nil {
		return nil
	}
	return t.timer.C
}

func (rn *runState) newCall(tc ToolCall, i int) *callRun {
	return &callRun{rn: rn, tc: tc, index: i, start: time.Now()}
}

func (rn *runState) exclusive(ctx context.Context, name string) bool {
	if rn.l.Tools == nil {
		return false
	}
	e := rn.l.Tools.resolve(ctx, name)
	return e != nil && e.spec.Exclusive
}
