package toolloop_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
)

// provErr is an error response of a provider, after the SDK's retries.
func provErr(status int, kind error) *providers.Error {
	return &providers.Error{Provider: "test", StatusCode: status, Kind: kind, Message: "try later"}
}

// waitErr is a rate limit that says how long to wait, as a Retry-After
// header does.
type waitErr struct{ d time.Duration }

func (e waitErr) Error() string             { return fmt.Sprintf("rate limited; retry after %s", e.d) }
func (e waitErr) Unwrap() error             { return providers.ErrRateLimit }
func (e waitErr) RetryAfter() time.Duration { return e.d }

// timeoutErr is a net.Error, a timeout or not.
type timeoutErr bool

func (e timeoutErr) Error() string   { return "i/o timeout" }
func (e timeoutErr) Timeout() bool   { return bool(e) }
func (e timeoutErr) Temporary() bool { return false }

func TestIsRetryable(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"rate limit sentinel, wrapped", fmt.Errorf("call: %w", providers.ErrRateLimit), true},
		{"overloaded sentinel", providers.ErrOverloaded, true},
		{"429 rate limit", provErr(429, providers.ErrRateLimit), true},
		{"529 overloaded", provErr(529, providers.ErrOverloaded), true},
		{"500 of no kind", provErr(500, nil), true},
		{"502 of no kind, wrapped", fmt.Errorf("gateway: %w", provErr(502, nil)), true},
		{"400 of no kind", provErr(400, nil), false},
		{"404", provErr(404, nil), false},
		{"error event in a stream, of no kind", provErr(200, nil), false},
		{"401 auth", provErr(401, providers.ErrAuth), false},
		{"403 auth", provErr(403, providers.ErrAuth), false},
		{"context length", provErr(400, providers.ErrContextLength), false},
		{"context length on a 5xx", provErr(500, providers.ErrContextLength), false},
		{"auth sentinel", providers.ErrAuth, false},
		{"context canceled", context.Canceled, false},
		{"context canceled in a url.Error", &url.Error{Op: "Post", URL: "http://x", Err: context.Canceled}, false},
		{"deadline (a timeout inside the model)", context.DeadlineExceeded, true},
		{"net timeout", timeoutErr(true), true},
		{"net error that is no timeout", timeoutErr(false), false},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"connection refused", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, true},
		{"connection aborted", syscall.ECONNABORTED, true},
		{"broken pipe", &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}, true},
		{"unexpected EOF", fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), true},
		{"connection closed before the response", &url.Error{Op: "Post", URL: "http://x", Err: io.EOF}, true},
		{"bare EOF", io.EOF, false},
		{"unknown host", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, false},
		{"anything else", errors.New("model returned no response"), false},
		{"Retry-After error", waitErr{time.Second}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, toolloop.IsRetryable(tt.err))
		})
	}
}

// A rate limit, then an overload, then an answer: the run ends fine, two
// model.retry events say which attempts failed and how long the loop
// waited, the waits were waited, and every attempt was sent the same
// request.
func TestRetryThenSuccessThroughRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := looptest.NewModel(t,
			looptest.Turn{Err: provErr(429, providers.ErrRateLimit)},
			looptest.Turn{Err: provErr(529, providers.ErrOverloaded)},
			looptest.Turn{Reply: looptest.Text("fine")})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: toolloop.Retry(inner, toolloop.RetryPolicy{}), OnEvent: rec.Record}
		start := time.Now()
		res, err := l.Run(context.Background(), user("hi"))
		require.NoError(t, err)
		assert.Equal(t, "fine", res.FinalText)
		assert.Equal(t, 1, res.Turns)

		retries := rec.Of(toolloop.EventModelRetry)
		require.Len(t, retries, 2)
		var waited time.Duration
		for i, e := range retries {
			require.NotNil(t, e.Attempt)
			assert.Equal(t, i+1, e.Attempt.Attempt)
			assert.Equal(t, 0, e.Attempt.Model)
			assert.NotEmpty(t, e.Attempt.Error)
			assert.Equal(t, res.RunID, e.RunID, "the loop fills in the run")
			assert.Equal(t, 1, e.Turn)
			waited += e.Attempt.Delay
		}
		assert.GreaterOrEqual(t, retries[0].Attempt.Delay, time.Duration(0))
		assert.Less(t, retries[0].Attempt.Delay, time.Second, "the first wait is below BaseDelay")
		assert.Less(t, retries[1].Attempt.Delay, 2*time.Second, "the second below twice that")
		assert.Equal(t, waited, time.Since(start), "the run waited what the events say, no more")

		reqs := inner.Requests()
		require.Len(t, reqs, 3)
		assert.Equal(t, reqs[0], reqs[1])
		assert.Equal(t, reqs[0], reqs[2])

		types := rec.Types()
		assert.Equal(t, toolloop.EventRunEnd, types[len(types)-1])
		assert.Empty(t, rec.Of(toolloop.EventRunEnd)[0].Error)
	})
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limited := provErr(429, providers.ErrRateLimit)
		inner := looptest.NewModel(t, looptest.Turn{Err: limited, Times: 4})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: toolloop.Retry(inner, toolloop.RetryPolicy{MaxAttempts: 4}), OnEvent: rec.Record}
		res, err := l.Run(context.Background(), user("hi"))
		require.Error(t, err)
		assert.ErrorIs(t, err, providers.ErrRateLimit)
		var pe *providers.Error
		require.ErrorAs(t, err, &pe)
		assert.Same(t, limited, pe)
		assert.ErrorContains(t, err, "after 4 attempts")
		assert.Equal(t, toolloop.StopError, res.StopReason)
		assert.Len(t, inner.Requests(), 4)
		retries := rec.Of(toolloop.EventModelRetry)
		require.Len(t, retries, 3, "the last attempt is not followed by a retry")
		for i, e := range retries {
			assert.Equal(t, i+1, e.Attempt.Attempt)
		}
	})
}

// An error the policy does not name is returned as it is, after one
// attempt, with no event; so is any error once the caller's context is
// done.
func TestRetryDoesNotRetry(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"auth", provErr(401, providers.ErrAuth)},
		{"context length", provErr(400, providers.ErrContextLength)},
		{"a 400 of no kind", provErr(400, nil)},
		{"anything else", errors.New("bad response")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inner := looptest.NewModel(t, looptest.Turn{Err: tt.err})
			var events []toolloop.Event
			ctx := toolloop.WithEventSink(context.Background(), func(e toolloop.Event) { events = append(events, e) })
			_, err := toolloop.Retry(inner, toolloop.RetryPolicy{}).Generate(ctx, &toolloop.Request{Messages: user("hi")})
			assert.Same(t, tt.err, err)
			assert.Len(t, inner.Requests(), 1)
			assert.Empty(t, events)
		})
	}

	t.Run("caller's context done", func(t *testing.T) {
		limited := provErr(429, providers.ErrRateLimit) // retryable, but the run is over
		var events []toolloop.Event
		ctx := toolloop.WithEventSink(context.Background(), func(e toolloop.Event) { events = append(events, e) })
		ctx, cancel := context.WithCancel(ctx)
		calls := 0
		inner := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
			calls++
			cancel()
			return nil, limited
		})
		_, err := toolloop.Retry(inner, toolloop.RetryPolicy{}).Generate(ctx, &toolloop.Request{})
		assert.Same(t, limited, err, "returned as it is, with no wait")
		assert.Equal(t, 1, calls)
		assert.Empty(t, events)
	})
}

// A deadline inside the model (the SDK's own timeout) is a timeout to
// retry while the caller's context is alive.
func TestRetryInnerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := looptest.NewModel(t, looptest.Turn{Err: context.DeadlineExceeded}, looptest.Turn{Reply: looptest.Text("ok")})
		resp, err := toolloop.Retry(inner, toolloop.RetryPolicy{}).Generate(context.Background(), &toolloop.Request{})
		require.NoError(t, err)
		assert.Equal(t, "ok", resp.Message.Text())
	})
}

func TestRetryCustomPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		flaky := errors.New("flaky backend")
		inner := looptest.NewModel(t, looptest.Turn{Err: flaky, Times: 2})
		p := toolloop.RetryPolicy{MaxAttempts: 2, Retryable: func(err error) bool { return errors.Is(err, flaky) }}
		_, err := toolloop.Retry(inner, p).Generate(context.Background(), &toolloop.Request{})
		assert.ErrorIs(t, err, flaky)
		assert.Len(t, inner.Requests(), 2)

		// The custom policy replaces the default one: a rate limit is not
		// retried under it.
		inner = looptest.NewModel(t, looptest.Turn{Err: provErr(429, providers.ErrRateLimit)})
		_, err = toolloop.Retry(inner, p).Generate(context.Background(), &toolloop.Request{})
		assert.ErrorIs(t, err, providers.ErrRateLimit)
		assert.Len(t, inner.Requests(), 1)
	})
}

// Cancelling the run while Retry waits returns at once, with an error
// that matches both the cancellation and the last model error.
func TestRetryCanceledDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		var waits []time.Duration
		ctx = toolloop.WithEventSink(ctx, func(e toolloop.Event) {
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, e.Attempt.Delay)
		})
		inner := looptest.NewModel(t, looptest.Turn{Err: provErr(503, providers.ErrOverloaded), Times: looptest.Forever})
		m := toolloop.Retry(inner, toolloop.RetryPolicy{MaxAttempts: 100, BaseDelay: time.Minute, MaxDelay: time.Hour})
		type result struct {
			err     error
			elapsed time.Duration
		}
		done := make(chan result, 1)
		go func() {
			start := time.Now()
			_, err := m.Generate(ctx, &toolloop.Request{})
			done <- result{err, time.Since(start)}
		}()
		synctest.Wait() // Retry is waiting now
		mu.Lock()
		require.NotEmpty(t, waits)
		var waited time.Duration
		for _, d := range waits {
			waited += d
		}
		last := waits[len(waits)-1]
		mu.Unlock()
		require.Positive(t, last, "the call is blocked in a wait")
		cancel()
		r := <-done
		assert.ErrorIs(t, r.err, context.Canceled)
		assert.ErrorIs(t, r.err, providers.ErrOverloaded)
		assert.Equal(t, waited-last, r.elapsed, "the last wait was cut short at once")
	})
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name      string
		after     time.Duration
		maxDelay  time.Duration
		wantDelay time.Duration
	}{
		{"as asked", 7 * time.Second, 0, 7 * time.Second},
		{"capped by MaxDelay", time.Hour, 0, 30 * time.Second},
		{"capped by a MaxDelay of its own", time.Minute, 10 * time.Second, 10 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := looptest.NewModel(t, looptest.Turn{Err: fmt.Errorf("provider: %w", waitErr{tt.after})}, looptest.Turn{Reply: looptest.Text("ok")})
				var got []time.Duration
				ctx := toolloop.WithEventSink(context.Background(), func(e toolloop.Event) { got = append(got, e.Attempt.Delay) })
				start := time.Now()
				_, err := toolloop.Retry(inner, toolloop.RetryPolicy{MaxDelay: tt.maxDelay}).Generate(ctx, &toolloop.Request{})
				require.NoError(t, err)
				assert.Equal(t, []time.Duration{tt.wantDelay}, got)
				assert.Equal(t, tt.wantDelay, time.Since(start))
			})
		})
	}
}

// Each wait is drawn below a bound that doubles from BaseDelay up to
// MaxDelay, and the draws differ (jitter).
func TestRetryBackoffBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := toolloop.RetryPolicy{MaxAttempts: 8, BaseDelay: time.Second, MaxDelay: 10 * time.Second}
		bounds := []time.Duration{1, 2, 4, 8, 10, 10, 10}
		seen := map[time.Duration]bool{}
		for range 20 {
			inner := looptest.NewModel(t, looptest.Turn{Err: provErr(429, providers.ErrRateLimit), Times: 8})
			var waits []time.Duration
			ctx := toolloop.WithEventSink(context.Background(), func(e toolloop.Event) { waits = append(waits, e.Attempt.Delay) })
			_, err := toolloop.Retry(inner, p).Generate(ctx, &toolloop.Request{})
			require.ErrorIs(t, err, providers.ErrRateLimit)
			require.Len(t, waits, 7)
			for i, d := range waits {
				assert.GreaterOrEqual(t, d, time.Duration(0))
				assert.Less(t, d, bounds[i]*time.Second, "wait %d", i+1)
				seen[d] = true
			}
		}
		assert.Greater(t, len(seen), 100, "140 waits drawn at random are mostly different")
	})
}

// The bound of the wait stops doubling at MaxDelay without overflowing,
// however large the attempt number and the delays.
func TestRetryBackoffDoesNotOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxDelay = time.Duration(1<<63 - 1)
		p := toolloop.RetryPolicy{MaxAttempts: 20, BaseDelay: 1<<62 + 1, MaxDelay: maxDelay}
		// Eight attempts that ask to wait a nanosecond, then one whose wait
		// is drawn below a bound of BaseDelay·2⁸, which MaxDelay caps.
		inner := looptest.NewModel(t, looptest.Turn{Err: waitErr{time.Nanosecond}, Times: 8}, looptest.Turn{Err: provErr(429, providers.ErrRateLimit)})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var waits []time.Duration
		ctx = toolloop.WithEventSink(ctx, func(e toolloop.Event) {
			waits = append(waits, e.Attempt.Delay)
			if e.Attempt.Attempt == 9 {
				cancel() // do not wait for centuries
			}
		})
		_, err := toolloop.Retry(inner, p).Generate(ctx, &toolloop.Request{})
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, providers.ErrRateLimit)
		require.Len(t, waits, 9)
		assert.Equal(t, time.Nanosecond, waits[0])
		// Drawn below a bound of MaxDelay, the wait is below an hour once
		// in 2.5 million runs; a bound that overflowed would be tiny.
		assert.Greater(t, waits[8], time.Hour)
	})
}

// A panicking model is not retried: the panic reaches the caller, and the
// loop turns it into an error.
func TestRetryDoesNotRetryAPanic(t *testing.T) {
	calls := 0
	inner := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		calls++
		panic("model bug")
	})
	m := toolloop.Retry(inner, toolloop.RetryPolicy{})
	assert.PanicsWithValue(t, "model bug", func() { _, _ = m.Generate(context.Background(), &toolloop.Request{}) })
	assert.Equal(t, 1, calls)

	res, err := (&toolloop.AgentLoop{Model: m}).Run(context.Background(), user("hi"))
	require.Error(t, err)
	assert.Equal(t, toolloop.StopError, res.StopReason)
	assert.Equal(t, 2, calls)

	f := toolloop.Fallback(inner, looptest.NewModel(t))
	assert.PanicsWithValue(t, "model bug", func() { _, _ = f.Generate(context.Background(), &toolloop.Request{}) })
	assert.Equal(t, 3, calls, "the next model is not asked")
}

func TestWrappersOfNoModel(t *testing.T) {
	ok := looptest.Always(looptest.Text("ok"))
	for name, m := range map[string]toolloop.Model{
		"Retry(nil)":           toolloop.Retry(nil, toolloop.RetryPolicy{}),
		"Fallback()":           toolloop.Fallback(),
		"Fallback(ok, nil)":    toolloop.Fallback(ok, nil),
		"Fallback(nil, ok)":    toolloop.Fallback(nil, ok),
		"FallbackWith(p)":      toolloop.FallbackWith(toolloop.FallbackPolicy{}),
		"Retry(Fallback())":    toolloop.Retry(toolloop.Fallback(), toolloop.RetryPolicy{}),
		"Fallback(Retry(nil))": toolloop.Fallback(toolloop.Retry(nil, toolloop.RetryPolicy{})),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := m.Generate(context.Background(), &toolloop.Request{})
			assert.ErrorIs(t, err, toolloop.ErrNoModel)
			_, err = (&toolloop.AgentLoop{Model: m}).Run(context.Background(), user("hi"))
			assert.ErrorIs(t, err, toolloop.ErrNoModel)
		})
	}
}

// The primary model is overloaded; the backup answers, and the transcript
// says which model did.
func TestFallbackThroughRun(t *testing.T) {
	primary := looptest.NewModel(t, looptest.Turn{Err: provErr(529, providers.ErrOverloaded)})
	answer := looptest.Text("from the backup")
	answer.Model = "backup-1"
	backup := looptest.NewModel(t, looptest.Turn{Reply: answer})
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: toolloop.Fallback(primary, backup), OnEvent: rec.Record}
	res, err := l.Run(context.Background(), user("hi"))
	require.NoError(t, err)
	assert.Equal(t, "from the backup", res.FinalText)
	last := res.Messages[len(res.Messages)-1]
	assert.Equal(t, "backup-1", last.Model)

	fallbacks := rec.Of(toolloop.EventModelFallback)
	require.Len(t, fallbacks, 1)
	e := fallbacks[0]
	require.NotNil(t, e.Attempt)
	assert.Equal(t, toolloop.ModelAttempt{Attempt: 1, Model: 0, Error: provErr(529, providers.ErrOverloaded).Error()}, *e.Attempt)
	assert.Equal(t, res.RunID, e.RunID)
	assert.Equal(t, 1, e.Turn)
	assert.Equal(t, primary.Requests()[0], backup.Requests()[0], "both were sent the same request")
}

func TestFallbackAllFail(t *testing.T) {
	errs := []error{provErr(429, providers.ErrRateLimit), provErr(529, providers.ErrOverloaded), provErr(500, nil)}
	var models []toolloop.Model
	for _, err := range errs {
		models = append(models, looptest.NewModel(t, looptest.Turn{Err: err}))
	}
	var events []toolloop.Event
	ctx := toolloop.WithEventSink(context.Background(), func(e toolloop.Event) { events = append(events, e) })
	_, err := toolloop.Fallback(models...).Generate(ctx, &toolloop.Request{})
	require.Error(t, err)
	for _, want := range errs {
		assert.ErrorIs(t, err, want)
	}
	assert.ErrorIs(t, err, providers.ErrRateLimit)
	assert.ErrorIs(t, err, providers.ErrOverloaded)
	var pe *providers.Error
	assert.ErrorAs(t, err, &pe)
	assert.ErrorContains(t, err, "3 of 3 models failed")
	require.Len(t, events, 2, "a move to the next model per failure but the last")
	for i, e := range events {
		assert.Equal(t, toolloop.EventModelFallback, e.Type)
		assert.Equal(t, i, e.Attempt.Model)
		assert.Equal(t, i+1, e.Attempt.Attempt)
		assert.Equal(t, errs[i].Error(), e.Attempt.Error)
	}
}

// Fallback does not move on on an error its policy does not name, nor
// once the caller's context is done.
func TestFallbackStops(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"auth", provErr(401, providers.ErrAuth)},
		{"a 400 of no kind", provErr(400, nil)},
		{"anything else", errors.New("bad response")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first := looptest.NewModel(t, looptest.Turn{Err: tt.err})
			second := looptest.NewModel(t) // never called
			_, err := toolloop.Fallback(first, second).Generate(context.Background(), &toolloop.Request{})
			assert.Same(t, tt.err, err, "the first model's error, unchanged")
		})
	}

	t.Run("caller's context done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		first := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
			cancel()
			return nil, provErr(503, providers.ErrOverloaded)
		})
		_, err := toolloop.Fallback(first, looptest.NewModel(t)).Generate(ctx, &toolloop.Request{})
		assert.ErrorIs(t, err, providers.ErrOverloaded)
	})

	t.Run("in the middle of the list", func(t *testing.T) {
		auth := provErr(401, providers.ErrAuth)
		models := []toolloop.Model{
			looptest.NewModel(t, looptest.Turn{Err: provErr(429, providers.ErrRateLimit)}),
			looptest.NewModel(t, looptest.Turn{Err: auth}),
			looptest.NewModel(t),
		}
		_, err := toolloop.Fallback(models...).Generate(context.Background(), &toolloop.Request{})
		assert.ErrorIs(t, err, providers.ErrRateLimit)
		assert.ErrorIs(t, err, providers.ErrAuth)
		assert.ErrorContains(t, err, "2 of 3 models failed")
	})
}

// By default a request too long for one model is sent to the next, which
// may have a larger window; a policy can leave it to the loop's context
// managers.
func TestFallbackOnContextLength(t *testing.T) {
	tooLong := provErr(400, providers.ErrContextLength)
	first := looptest.NewModel(t, looptest.Turn{Err: tooLong})
	second := looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("it fits")})
	resp, err := toolloop.Fallback(first, second).Generate(context.Background(), &toolloop.Request{})
	require.NoError(t, err)
	assert.Equal(t, "it fits", resp.Message.Text())

	first = looptest.NewModel(t, looptest.Turn{Err: tooLong})
	m := toolloop.FallbackWith(toolloop.FallbackPolicy{On: toolloop.IsRetryable}, first, looptest.NewModel(t))
	_, err = m.Generate(context.Background(), &toolloop.Request{})
	assert.Same(t, tooLong, err)
}

// Retries inside a fallback list say which model of the list they are.
func TestFallbackOfRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limited := provErr(429, providers.ErrRateLimit)
		p := toolloop.RetryPolicy{MaxAttempts: 2}
		primary := looptest.NewModel(t, looptest.Turn{Err: limited, Times: 2})
		backup := looptest.NewModel(t, looptest.Turn{Err: limited}, looptest.Turn{Reply: looptest.Text("ok")})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: toolloop.Fallback(toolloop.Retry(primary, p), toolloop.Retry(backup, p)), OnEvent: rec.Record}
		res, err := l.Run(context.Background(), user("hi"))
		require.NoError(t, err)
		assert.Equal(t, "ok", res.FinalText)

		type step struct {
			typ            toolloop.EventType
			attempt, model int
		}
		var got []step
		for _, e := range rec.Events() {
			if e.Attempt != nil {
				got = append(got, step{e.Type, e.Attempt.Attempt, e.Attempt.Model})
			}
		}
		assert.Equal(t, []step{
			{toolloop.EventModelRetry, 1, 0},
			{toolloop.EventModelFallback, 1, 0},
			{toolloop.EventModelRetry, 1, 1},
		}, got)
	})
}

// native is a model whose NativeOutput answers as set.
type native struct {
	toolloop.Model
	yes bool
}

func (n native) NativeOutput(bool) bool { return n.yes }

func TestWrappersNativeOutput(t *testing.T) {
	plain := looptest.Always(looptest.Text("x"))
	yes, no := native{plain, true}, native{plain, false}
	for _, tt := range []struct {
		name string
		m    toolloop.Model
		want bool
	}{
		{"Retry of a model that can", toolloop.Retry(yes, toolloop.RetryPolicy{}), true},
		{"Retry of a model that cannot", toolloop.Retry(no, toolloop.RetryPolicy{}), false},
		{"Retry of a model that does not say", toolloop.Retry(plain, toolloop.RetryPolicy{}), false},
		{"Retry of a streamer that can", toolloop.Retry(native{&streamModel{}, true}, toolloop.RetryPolicy{}), true},
		{"Fallback where all can", toolloop.Fallback(yes, yes), true},
		{"Fallback where one cannot", toolloop.Fallback(yes, no), false},
		{"Fallback where one does not say", toolloop.Fallback(yes, plain), false},
		{"Fallback of Retries", toolloop.Fallback(toolloop.Retry(yes, toolloop.RetryPolicy{}), yes), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			no, ok := tt.m.(toolloop.NativeOutput)
			require.True(t, ok, "the wrappers always answer")
			assert.Equal(t, tt.want, no.NativeOutput(true))
		})
	}
}

// The wrappers meet the Model contract (and the Streamer one, where they
// stream).
func TestWrappersMeetTheModelContract(t *testing.T) {
	hello := looptest.Text("Hello!")
	stream := func() *streamModel {
		return &streamModel{plays: []streamPlay{{deltas: []string{"Hel", "lo!"}, resp: hello}}}
	}
	for name, m := range map[string]toolloop.Model{
		"Retry":               toolloop.Retry(looptest.Always(hello), toolloop.RetryPolicy{}),
		"Retry of a streamer": toolloop.Retry(stream(), toolloop.RetryPolicy{}),
		"Fallback":            toolloop.Fallback(looptest.Always(hello), looptest.Always(hello)),
		"Fallback, first one failing": toolloop.Fallback(toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
			return nil, providers.ErrOverloaded
		}), looptest.Always(hello)),
		"Fallback with a streamer": toolloop.Fallback(stream(), looptest.Always(hello)),
		"Retry of a Fallback":      toolloop.Retry(toolloop.Fallback(stream(), stream()), toolloop.RetryPolicy{}),
	} {
		t.Run(name, func(t *testing.T) { looptest.TestModel(t, m) })
	}
}
