package toolloop

import (
	"context"
	"slices"
	"sync"
	"time"
)

// callCtx is the context a tool runs with: its parent's values and
// cancellation, plus the call's deadline. It behaves like the context of
// context.WithTimeout followed by a deferred cancel, but costs nothing until
// the tool asks for Done or derives a context from it: only then are the
// timer and the watch on the parent set up. Most tools never ask, and the
// loop's per-call overhead stays small.
type callCtx struct {
	parent   context.Context
	deadline time.Time

	mu         sync.Mutex
	done       chan struct{}
	err        error
	timedOut   bool // err came from this call's own deadline
	armed      bool
	timer      *time.Timer
	stopParent func() bool
	afters     []*ctxAfter
}

type ctxAfter struct {
	f       func()
	stopped bool
}

func (c *callCtx) init(parent context.Context, start time.Time, timeout time.Duration) {
	c.parent = parent
	c.deadline = start.Add(timeout)
}

// Deadline implements context.Context.
func (c *callCtx) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Value implements context.Context.
func (c *callCtx) Value(key any) any { return c.parent.Value(key) }

// Err implements context.Context.
func (c *callCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checkLocked()
	return c.err
}

// Done implements context.Context.
func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.checkLocked() // before the channel exists, so it is closed once
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	c.armLocked()
	return c.done
}

// AfterFunc lets contexts derived from this one follow its cancellation
// without a goroutine each (see context.AfterFunc).
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := &ctxAfter{f: f}
	c.checkLocked()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	c.afters = append(c.afters, a)
	c.armLocked()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if a.stopped || c.err != nil {
			return false
		}
		a.stopped = true
		c.afters = slices.DeleteFunc(c.afters, func(x *ctxAfter) bool { return x == a })
		return true
	}
}

// checkLocked notices a cancelled parent or a passed deadline.
func (c *callCtx) checkLocked() {
	if c.err != nil {
		return
	}
	if err := c.parent.Err(); err != nil {
		c.cancelLocked(err, false)
	} else if !time.Now().Before(c.deadline) {
		c.cancelLocked(context.DeadlineExceeded, true)
	}
}

// armLocked starts watching the deadline and the parent.
func (c *callCtx) armLocked() {
	if c.armed || c.err != nil {
		return
	}
	c.armed = true
	c.timer = time.AfterFunc(time.Until(c.deadline), func() { c.cancel(context.DeadlineExceeded, true) })
	if c.parent.Done() != nil {
		c.stopParent = context.AfterFunc(c.parent, func() { c.cancel(c.parent.Err(), false) })
	}
}

func (c *callCtx) cancel(err error, timedOut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelLocked(err, timedOut)
}

func (c *callCtx) cancelLocked(err error, timedOut bool) {
	if c.err != nil {
		return
	}
	c.err, c.timedOut = err, timedOut
	if c.done != nil {
		close(c.done)
	}
	for _, a := range c.afters {
		if !a.stopped {
			go a.f()
		}
	}
	c.afters = nil
}

// release ends the context when the call is over, like the deferred
// cancel of context.WithTimeout. If check is set it first reports whether
// the context had ended by then, and whether through the call's own
// deadline.
func (c *callCtx) release(check bool) (ended, timedOut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if check {
		c.checkLocked()
	}
	ended, timedOut = c.err != nil, c.timedOut
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stopParent != nil {
		c.stopParent()
	}
	c.cancelLocked(context.Canceled, false)
	return ended, timedOut
}
