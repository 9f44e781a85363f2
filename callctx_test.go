package toolloop

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitLong bounds every wait in these tests. It only turns a hang into a
// failure; no test measures time.
const waitLong = 10 * time.Second

func newCallCtx(parent context.Context, timeout time.Duration) *callCtx {
	c := &callCtx{}
	c.init(parent, time.Now(), timeout)
	return c
}

func requireDone(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLong):
		t.Fatalf("%s: not done", what)
	}
}

func requireNotDone(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: done too early", what)
	default:
	}
}

var _ context.Context = (*callCtx)(nil)

func TestCallCtxErrBeforeAndAfterDeadline(t *testing.T) {
	c := newCallCtx(context.Background(), 100*time.Millisecond)
	assert.NoError(t, c.Err())
	requireDone(t, c.Done(), "own deadline")
	assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	ended, timedOut := c.release(true)
	assert.True(t, ended)
	assert.True(t, timedOut)
	assert.ErrorIs(t, c.Err(), context.DeadlineExceeded, "release does not overwrite the first error")
}

// Err notices a passed deadline even if nobody ever asked for Done, so no
// timer was started.
func TestCallCtxErrWithoutDone(t *testing.T) {
	c := newCallCtx(context.Background(), time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	select {
	case <-c.Done():
	default:
		t.Fatal("Done must be closed once Err is set")
	}
	ended, timedOut := c.release(false)
	assert.True(t, ended)
	assert.True(t, timedOut)
}

// release(true) reports a passed deadline even if nothing looked.
func TestCallCtxReleaseChecks(t *testing.T) {
	c := newCallCtx(context.Background(), time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	ended, timedOut := c.release(true)
	assert.True(t, ended)
	assert.True(t, timedOut)
}

func TestCallCtxParentCancel(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	c := newCallCtx(parent, time.Hour)
	done := c.Done()
	requireNotDone(t, done, "before cancel")
	cause := errors.New("user pressed ctrl-c")
	cancel(cause)
	requireDone(t, done, "parent canceled")
	assert.ErrorIs(t, c.Err(), context.Canceled)
	assert.ErrorIs(t, context.Cause(c), cause, "the parent's cause shows through")
	ended, timedOut := c.release(true)
	assert.True(t, ended)
	assert.False(t, timedOut, "the parent's cancellation is not this call's timeout")
}

func TestCallCtxParentAlreadyCanceled(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	cancel()
	c := newCallCtx(parent, time.Hour)
	assert.ErrorIs(t, c.Err(), context.Canceled)
	requireDone(t, c.Done(), "Done after Err")
	_, timedOut := c.release(true)
	assert.False(t, timedOut)
}

// doneNoPanic calls c.Done, turning a panic into a test failure.
func doneNoPanic(t *testing.T, c *callCtx) (ch <-chan struct{}) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("Done panicked: %v", p)
			ch = nil
		}
	}()
	return c.Done()
}

// The first call of Done may come after the context has already ended,
// without Err having been called: a tool that computes past its timeout
// and then selects on ctx.Done(), or one handed a context whose run was
// just canceled. Done must return a closed channel, not panic. (A panic
// here in a goroutine the tool started, such as an HTTP transport's, would
// crash the process.)
func TestCallCtxFirstDoneAfterEnd(t *testing.T) {
	t.Run("parent already canceled", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		cancel()
		c := newCallCtx(parent, time.Hour)
		if ch := doneNoPanic(t, c); ch != nil {
			requireDone(t, ch, "Done")
		}
		assert.ErrorIs(t, c.Err(), context.Canceled)
	})
	t.Run("own deadline already passed", func(t *testing.T) {
		c := newCallCtx(context.Background(), time.Millisecond)
		time.Sleep(5 * time.Millisecond)
		if ch := doneNoPanic(t, c); ch != nil {
			requireDone(t, ch, "Done")
		}
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	})
	t.Run("derived after the parent was canceled", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		cancel()
		c := newCallCtx(parent, time.Hour)
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("context.WithCancel panicked: %v", p)
				}
			}()
			d, dc := context.WithCancel(c)
			defer dc()
			assert.ErrorIs(t, d.Err(), context.Canceled)
		}()
	})
}

// A parent deadline that passes first ends the call, but it is not the
// call's own timeout: the loop reports it as canceled, not timed out.
func TestCallCtxParentDeadlineIsNotOwnTimeout(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	c := newCallCtx(parent, time.Hour)
	requireDone(t, c.Done(), "parent deadline")
	assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	ended, timedOut := c.release(true)
	assert.True(t, ended)
	assert.False(t, timedOut)
}

func TestCallCtxDeadline(t *testing.T) {
	t.Run("own is earlier", func(t *testing.T) {
		parent, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		before := time.Now()
		c := newCallCtx(parent, time.Minute)
		defer c.release(false)
		d, ok := c.Deadline()
		assert.True(t, ok)
		assert.WithinRange(t, d, before.Add(time.Minute), time.Now().Add(time.Minute))
	})
	t.Run("parent is earlier", func(t *testing.T) {
		parent, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := newCallCtx(parent, time.Hour)
		defer c.release(false)
		pd, _ := parent.Deadline()
		d, ok := c.Deadline()
		assert.True(t, ok)
		assert.Equal(t, pd, d)
	})
	t.Run("parent has none", func(t *testing.T) {
		c := newCallCtx(context.Background(), time.Minute)
		defer c.release(false)
		_, ok := c.Deadline()
		assert.True(t, ok)
	})
}

func TestCallCtxValue(t *testing.T) {
	type key struct{ n int }
	parent := context.WithValue(context.Background(), key{1}, "one")
	c := newCallCtx(parent, time.Minute)
	defer c.release(false)
	assert.Equal(t, "one", c.Value(key{1}))
	assert.Nil(t, c.Value(key{2}))
	// Derived contexts see the values too.
	d, cancel := context.WithCancel(c)
	defer cancel()
	assert.Equal(t, "one", d.Value(key{1}))
}

func TestCallCtxCauseOwnDeadline(t *testing.T) {
	c := newCallCtx(context.Background(), time.Millisecond)
	requireDone(t, c.Done(), "own deadline")
	assert.ErrorIs(t, context.Cause(c), context.DeadlineExceeded)
	c.release(false)
}

// context.Cause must explain a done context, whatever its parent. For
// context.WithTimeout(parent) it is DeadlineExceeded when the context's own
// deadline passed, even when the parent is a cancelable context still
// running (the usual case: the loop runs under the caller's cancelable
// context).
func TestCallCtxCauseOwnDeadlineUnderCancelableParent(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()

	std, stdCancel := context.WithTimeout(parent, time.Millisecond)
	defer stdCancel()
	<-std.Done()
	require.ErrorIs(t, context.Cause(std), context.DeadlineExceeded, "the standard library's behaviour")

	c := newCallCtx(parent, time.Millisecond)
	requireDone(t, c.Done(), "own deadline")
	require.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	assert.ErrorIs(t, context.Cause(c), context.DeadlineExceeded, "Cause of a done context must not be nil")
	c.release(false)
}

func TestCallCtxReleaseCancels(t *testing.T) {
	c := newCallCtx(context.Background(), time.Hour)
	done := c.Done()
	ended, timedOut := c.release(true)
	assert.False(t, ended, "the call ended before its context did")
	assert.False(t, timedOut)
	requireDone(t, done, "released")
	assert.ErrorIs(t, c.Err(), context.Canceled)

	// Idempotent; Done asked for after release is closed too.
	ended, timedOut = c.release(true)
	assert.True(t, ended)
	assert.False(t, timedOut)
	requireDone(t, c.Done(), "Done after release")
}

func TestCallCtxReleaseWithoutDone(t *testing.T) {
	c := newCallCtx(context.Background(), time.Hour)
	ended, _ := c.release(true)
	assert.False(t, ended)
	assert.ErrorIs(t, c.Err(), context.Canceled)
	requireDone(t, c.Done(), "Done after release")
}

// After release, the parent's later cancellation changes nothing (the
// watch on the parent was stopped).
func TestCallCtxReleaseStopsWatchingParent(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	c := newCallCtx(parent, time.Hour)
	_ = c.Done()
	c.release(false)
	cancel(errors.New("later"))
	assert.ErrorIs(t, c.Err(), context.Canceled)
	_, timedOut := c.release(true)
	assert.False(t, timedOut)
}

func (c *callCtx) afterCount() (registered, stopped int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.afters {
		registered++
		if a.stopped {
			stopped++
		}
	}
	return registered, stopped
}

// A context derived from a callCtx follows it through AfterFunc, with no
// goroutine of its own.
func TestCallCtxDerivedUsesAfterFunc(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		end     func(c *callCtx, cancelParent context.CancelFunc)
		want    error
	}{
		{"released", time.Hour, func(c *callCtx, _ context.CancelFunc) { c.release(false) }, context.Canceled},
		{"own deadline", 200 * time.Millisecond, func(*callCtx, context.CancelFunc) {}, context.DeadlineExceeded},
		{"parent canceled", time.Hour, func(_ *callCtx, cancel context.CancelFunc) { cancel() }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancelParent := context.WithCancel(context.Background())
			defer cancelParent()
			c := newCallCtx(parent, tt.timeout)
			defer c.release(false)

			d1, cancel1 := context.WithCancel(c)
			defer cancel1()
			d2, cancel2 := context.WithTimeout(c, time.Hour)
			defer cancel2()
			d3, cancel3 := context.WithCancel(d1) // a grandchild follows d1 the standard way
			defer cancel3()
			n, _ := c.afterCount()
			require.Equal(t, 2, n, "derived contexts register through AfterFunc")

			tt.end(c, cancelParent)
			for i, d := range []context.Context{d1, d2, d3} {
				requireDone(t, d.Done(), "derived context")
				assert.ErrorIs(t, d.Err(), tt.want, "derived %d", i+1)
				assert.ErrorIs(t, context.Cause(d), tt.want, "derived %d", i+1)
			}
		})
	}
}

// Canceling a derived context unregisters it: stop is called, and the
// context is not canceled again later.
func TestCallCtxDerivedCancelStops(t *testing.T) {
	c := newCallCtx(context.Background(), time.Hour)
	d, cancel := context.WithCancel(c)
	cancel()
	n, _ := c.afterCount()
	assert.Equal(t, 0, n, "a stopped AfterFunc is forgotten")
	c.release(false)
	assert.ErrorIs(t, d.Err(), context.Canceled)
}

func TestCallCtxAfterFunc(t *testing.T) {
	t.Run("runs once on cancel, stop then false", func(t *testing.T) {
		c := newCallCtx(context.Background(), time.Hour)
		ran := make(chan struct{}, 2)
		stop := c.AfterFunc(func() {
			_ = c.Err() // must not deadlock: f runs without c's lock
			ran <- struct{}{}
		})
		c.release(false)
		requireDone(t, chanDone(ran), "AfterFunc")
		assert.False(t, stop(), "stop after the function started")
		assert.Empty(t, ran, "runs once")
	})
	t.Run("stop before cancel", func(t *testing.T) {
		c := newCallCtx(context.Background(), time.Hour)
		var ran atomic.Bool
		stop := c.AfterFunc(func() { ran.Store(true) })
		assert.True(t, stop())
		assert.False(t, stop(), "second stop")
		c.release(false)
		time.Sleep(20 * time.Millisecond) // give a wrongly started f time to run
		assert.False(t, ran.Load(), "a stopped function never runs")
	})
	t.Run("already done", func(t *testing.T) {
		c := newCallCtx(context.Background(), time.Hour)
		c.release(false)
		ran := make(chan struct{}, 1)
		stop := c.AfterFunc(func() { ran <- struct{}{} })
		requireDone(t, chanDone(ran), "AfterFunc on a done context")
		assert.False(t, stop())
	})
	t.Run("context.AfterFunc", func(t *testing.T) {
		c := newCallCtx(context.Background(), 200*time.Millisecond)
		ran := make(chan struct{}, 1)
		var wrong atomic.Bool
		stopped := context.AfterFunc(c, func() { wrong.Store(true) })
		context.AfterFunc(c, func() { ran <- struct{}{} })
		assert.True(t, stopped())
		requireDone(t, chanDone(ran), "context.AfterFunc on deadline")
		c.release(false)
		assert.False(t, wrong.Load(), "a stopped function ran")
	})
}

// chanDone returns a channel closed when ch yields a value.
func chanDone(ch <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
		case <-time.After(waitLong):
			return
		}
		close(done)
	}()
	return done
}

// Everything at once from many goroutines while the deadline passes and
// the call is released. Run with -race.
func TestCallCtxConcurrent(t *testing.T) {
	for range 20 {
		parent, cancel := context.WithCancel(context.Background())
		c := newCallCtx(parent, 5*time.Millisecond)
		// Ask for Done once before the deadline: a first Done after the end
		// panics today (TestCallCtxFirstDoneAfterEnd), which would crash
		// the test binary from these goroutines.
		_ = doneNoPanic(t, c)
		var wg sync.WaitGroup
		var fired atomic.Int32
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					switch i % 4 {
					case 0:
						<-c.Done()
					case 1:
						_ = c.Err()
						_, _ = c.Deadline()
					case 2:
						stop := c.AfterFunc(func() { fired.Add(1) })
						if i%8 == 2 {
							stop()
						}
					case 3:
						d, dc := context.WithCancel(c)
						<-d.Done()
						dc()
					}
				}
			}()
		}
		if time.Now().UnixNano()%2 == 0 {
			cancel()
		}
		wg.Wait()
		ended, _ := c.release(true)
		cancel()
		assert.True(t, ended, "every goroutine waited for Done")
		assert.Error(t, c.Err())
	}
}
