package toolloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toolloop/toolloop/providers"
)

// RetryPolicy says when and how often [Retry] asks a model again. The zero
// value is the default: three attempts, backoff from 1s up to 30s, on the
// errors [IsRetryable] names.
type RetryPolicy struct {
	// MaxAttempts is how many times a turn is asked for in all, the first
	// attempt included; 0 (or less) means 3, and 1 means no retry.
	MaxAttempts int
	// BaseDelay bounds the wait after the first failed attempt; each
	// further failure doubles the bound, up to MaxDelay. The wait is drawn
	// at random between 0 and the bound ("full jitter"), so that clients
	// rate-limited together do not come back together. 0 (or less) means
	// 1s.
	BaseDelay time.Duration
	// MaxDelay caps every wait, one the error asks for included; 0 (or
	// less) means 30s.
	MaxDelay time.Duration
	// Retryable reports whether an attempt that failed with err may be
	// tried again; nil means [IsRetryable]. It is never asked once the
	// caller's context is done: a cancelled or expired run is not retried.
	Retryable func(err error) bool
}

// The defaults of a zero RetryPolicy.
const (
	defaultMaxAttempts = 3
	defaultBaseDelay   = time.Second
	defaultMaxDelay    = 30 * time.Second
)

// withDefaults returns p with its zero fields set to their defaults.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = defaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = defaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = defaultMaxDelay
	}
	if p.Retryable == nil {
		p.Retryable = IsRetryable
	}
	return p
}

// retryAfter is what an error implements to say how long to wait before
// the next attempt, as an HTTP Retry-After header does.
type retryAfter interface {
	error
	RetryAfter() time.Duration
}

// delay returns the wait after attempt n failed with err: what err asks
// for, if it implements RetryAfter() time.Duration with a positive
// answer, else a random wait below BaseDelay·2ⁿ⁻¹; MaxDelay caps both.
func (p *RetryPolicy) delay(n int, err error) time.Duration {
	if ra, ok := errors.AsType[retryAfter](err); ok {
		if d := ra.RetryAfter(); d > 0 {
			return min(d, p.MaxDelay)
		}
	}
	bound := p.BaseDelay
	for i := 1; i < n && bound < p.MaxDelay; i++ {
		if bound > p.MaxDelay/2 {
			bound = p.MaxDelay
			break
		}
		bound *= 2
	}
	return rand.N(min(bound, p.MaxDelay))
}

// IsRetryable reports whether err is a failure that asking again may
// cure: the provider was rate limited ([providers.ErrRateLimit]) or
// overloaded ([providers.ErrOverloaded]), answered with a 5xx status (a
// [*providers.Error]), or the network failed on the way: a timeout (a
// [net.Error] whose Timeout is true, which includes a deadline of the
// SDK's own), a connection reset, refused or aborted, a broken pipe, a
// response cut short ([io.ErrUnexpectedEOF]) or a connection closed
// before any response (a [*url.Error] of [io.EOF]).
//
// It is false for nil, for [providers.ErrAuth] and
// [providers.ErrContextLength] (asking again would fail the same way), for
// [context.Canceled], for any other status a provider answered with, and
// for anything else. It looks only at error values, never at messages,
// so a network failure that a library reports as text alone (an HTTP/2
// GOAWAY, for one) is not retried.
//
// [context.DeadlineExceeded] counts as a timeout here: [Retry] and
// [Fallback] never ask again once the caller's own context is done, so a
// deadline they retry is one inside the model.
func IsRetryable(err error) bool {
	switch {
	case err == nil,
		errors.Is(err, providers.ErrAuth),
		errors.Is(err, providers.ErrContextLength),
		errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, providers.ErrRateLimit),
		errors.Is(err, providers.ErrOverloaded):
		return true
	}
	if pe, ok := errors.AsType[*providers.Error](err); ok {
		// The provider answered: its status decides.
		return pe.StatusCode >= 500 && pe.StatusCode <= 599
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, errno := range connErrnos {
		if errors.Is(err, errno) {
			return true
		}
	}
	if ue, ok := errors.AsType[*url.Error](err); ok && errors.Is(ue.Err, io.EOF) {
		return true
	}
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

// Retry returns a Model that asks m again when a turn fails with an error
// p allows (by default those [IsRetryable] names), up to p.MaxAttempts in
// all, waiting between attempts with exponential backoff and full jitter.
// An error that says how long to wait, by a method RetryAfter()
// time.Duration anywhere in its chain, is waited for that long instead,
// capped by p.MaxDelay: a *providers.Error does, with the wait the
// provider's Retry-After (or Gemini's retry delay) asked for.
//
// Each failed attempt that will be tried again is reported as an
// [EventModelRetry] event to the sink ctx carries (see [WithEventSink];
// [AgentLoop] sets one while anything observes the run): its Attempt
// holds the attempt's number, its error and the wait. Every attempt is
// sent the same *Request, which Retry never changes.
//
// What the caller gets back:
//
//   - an error p does not allow, on the first attempt, unchanged;
//   - once more than one attempt was made, an error that says how many
//     and wraps the last attempt's error, so that errors.Is finds the
//     provider's sentinel ([providers.ErrRateLimit], ...) and errors.As
//     its [*providers.Error];
//   - when ctx is done while Retry waits, at once, an error that wraps
//     both ctx's error and the last attempt's.
//
// Once ctx is done an attempt is never retried, whatever p says.
//
// The model Retry returns has m's abilities: it is a [Streamer] when m
// is, and its [NativeOutput] answers as m's does (false if m lacks it).
// A stream is retried only if it failed before it yielded any chunk;
// once a chunk has been passed on (and the loop reported its deltas), a
// later error passes through unchanged, since what was sent cannot be
// taken back.
//
// A panic in m is not retried: it propagates to the caller (the loop
// recovers it and ends the run with an error), as it would without Retry.
//
// If m is nil, the model's Generate returns an error that wraps
// [ErrNoModel].
func Retry(m Model, p RetryPolicy) Model {
	if m == nil {
		return errModel{noModel("toolloop: Retry was given a nil Model")}
	}
	r := &retryModel{m: m, p: p.withDefaults()}
	if s, ok := m.(Streamer); ok {
		return &retryStreamer{retryModel: r, s: s}
	}
	return r
}

type retryModel struct {
	m Model
	p RetryPolicy
}

type retryStreamer struct {
	*retryModel
	s Streamer
}

// Generate implements [Model].
func (r *retryModel) Generate(ctx context.Context, req *Request) (*Response, error) {
	for n := 1; ; n++ {
		resp, err := r.m.Generate(ctx, req)
		if err == nil {
			return resp, nil
		}
		if err = r.again(ctx, n, err); err != nil {
			return nil, err
		}
	}
}

// NativeOutput implements [NativeOutput] as the inner model does.
func (r *retryModel) NativeOutput(withTools bool) bool {
	no, ok := r.m.(NativeOutput)
	return ok && no.NativeOutput(withTools)
}

// Stream implements [Streamer]: a stream that fails before its first
// chunk is asked for again; after it, its error passes through.
func (r *retryStreamer) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		rl := &relay{yield: yield}
		for n := 1; ; n++ {
			if !rl.pass(r.s.Stream(ctx, req)) {
				return
			}
			if err := r.again(ctx, n, rl.failed); err != nil {
				yield(Chunk{}, err)
				return
			}
		}
	}
}

// relay passes the chunks of a model's stream on to the consumer of a
// wrapper's stream.
type relay struct {
	yield  func(Chunk, error) bool
	sent   bool  // a chunk of this stream was passed on
	done   bool  // the stream failed, or the consumer stopped
	failed error // the error the stream failed with
}

// pass relays seq. It reports whether seq failed before it yielded any
// chunk, its error in failed: only then may another stream take its
// place. Otherwise the stream is over for the consumer: it ended, the
// consumer stopped, or it failed after a chunk and its error was passed
// on unchanged.
func (rl *relay) pass(seq iter.Seq2[Chunk, error]) bool {
	rl.sent, rl.done, rl.failed = false, false, nil
	seq(rl.chunk)
	switch {
	case rl.failed == nil:
		return false
	case rl.sent:
		rl.yield(Chunk{}, rl.failed)
		return false
	}
	return true
}

// chunk is the yield function a relayed stream is called with. Like a
// range loop's it returns false once it has, but it ignores a stream
// that yields on after that rather than panic.
func (rl *relay) chunk(ch Chunk, err error) bool {
	switch {
	case rl.done:
		return false
	case err != nil:
		rl.failed, rl.done = err, true
		return false
	}
	rl.sent = true
	if !rl.yield(ch, nil) {
		rl.done = true
		return false
	}
	return true
}

// again decides, after attempt n failed with err, whether to try once
// more. If so it reports the attempt, waits, and returns nil; if not it
// returns the error to give up with.
func (r *retryModel) again(ctx context.Context, n int, err error) error {
	if ctx.Err() != nil || !r.p.Retryable(err) {
		if n == 1 {
			return err
		}
		return fmt.Errorf("retry: gave up after %d attempts: %w", n, err)
	}
	if n >= r.p.MaxAttempts {
		return fmt.Errorf("retry: gave up after %d attempts: %w", n, err)
	}
	d := r.p.delay(n, err)
	if sink := sinkOf(ctx); sink != nil {
		idx, _ := ctx.Value(modelIndexKey{}).(int)
		sink(Event{Type: EventModelRetry, Attempt: &ModelAttempt{Attempt: n, Model: idx, Error: err.Error(), Delay: d}})
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("retry: stopped waiting after %d attempts: %w; last error: %w", n, ctx.Err(), err)
	case <-t.C:
		return nil
	}
}

// sinkOf returns the event sink ctx carries, or nil.
func sinkOf(ctx context.Context) func(Event) {
	sink, _ := ctx.Value(eventSinkKey{}).(func(Event))
	return sink
}

// modelIndexKey keys the index of the model a [Fallback] is asking, for
// the events of a [Retry] inside it.
type modelIndexKey struct{}

// FallbackPolicy says when [FallbackWith] moves on to the next model. The
// zero value is the default of [Fallback].
type FallbackPolicy struct {
	// On reports whether a model that failed with err should give way to
	// the next one; nil means [IsRetryable] or
	// [providers.ErrContextLength]. It is never asked once the caller's
	// context is done.
	On func(err error) bool
}

// fallbackOn is the default of FallbackPolicy.On.
func fallbackOn(err error) bool {
	return IsRetryable(err) || errors.Is(err, providers.ErrContextLength)
}

// Fallback returns a Model that asks models in turn, on every call from
// the first: when one fails with an error the default [FallbackPolicy]
// allows, the next is asked. That is, on the errors [IsRetryable] names
// (rate limited, overloaded, a 5xx, a network failure) and on
// [providers.ErrContextLength], since a model further down the list may
// have a larger context window. A loop with ContextManagers only compacts
// its transcript when every model has answered that the request is too
// long (the error then still matches ErrContextLength). Use
// [FallbackWith] with On set to [IsRetryable] to let the loop compact
// first. Fallback never moves on on [providers.ErrAuth], on any error the
// policy does not name, nor once the caller's context is done: it then
// returns at once.
//
// Each move is reported as an [EventModelFallback] event to the sink ctx
// carries (see [WithEventSink]), whose Attempt.Model is the index of the
// model that failed. A [Retry] inside the list reports its retries with
// Attempt.Model set to its own index in the list. Every model is sent
// the same *Request, which Fallback never changes, and the answer is the
// answering model's own Response (its Model field names that model).
//
// When only the first model was asked, its error is returned unchanged.
// Otherwise the error names every model that was asked and wraps each
// one's error, so that errors.Is and errors.As reach every one of them.
//
// The model Fallback returns is a [Streamer] when any of models is: a
// model that does not stream then answers as one chunk that holds its
// Response. A stream gives way to the next model only if it failed before
// it yielded any chunk; after that its error passes through unchanged.
// Its [NativeOutput] is true only when every model's is. A panic in a
// model propagates to the caller, as it would without Fallback: it is a
// bug, not an outage, and is not hidden by asking another model.
//
// With no models, or a nil one among them, the model's Generate returns
// an error that wraps [ErrNoModel].
func Fallback(models ...Model) Model {
	return FallbackWith(FallbackPolicy{}, models...)
}

// FallbackWith is [Fallback] with a policy that says on which errors to
// move on to the next model.
func FallbackWith(p FallbackPolicy, models ...Model) Model {
	if len(models) == 0 {
		return errModel{noModel("toolloop: Fallback was given no models")}
	}
	for i, m := range models {
		if m == nil {
			return errModel{noModel(fmt.Sprintf("toolloop: Fallback was given a nil Model at index %d", i))}
		}
	}
	f := &fallbackModel{models: slices.Clone(models), on: p.On}
	if f.on == nil {
		f.on = fallbackOn
	}
	for _, m := range models {
		if _, ok := m.(Streamer); ok {
			return &fallbackStreamer{f}
		}
	}
	return f
}

type fallbackModel struct {
	models []Model
	on     func(error) bool
}

type fallbackStreamer struct {
	*fallbackModel
}

// Generate implements [Model].
func (f *fallbackModel) Generate(ctx context.Context, req *Request) (*Response, error) {
	var errs []error
	for i, m := range f.models {
		resp, err := m.Generate(f.modelCtx(ctx, i), req)
		if err == nil {
			return resp, nil
		}
		errs = append(errs, err)
		if !f.next(ctx, i, err) {
			break
		}
	}
	return nil, f.failed(errs)
}

// NativeOutput implements [NativeOutput]: true when every model's is.
func (f *fallbackModel) NativeOutput(withTools bool) bool {
	for _, m := range f.models {
		if no, ok := m.(NativeOutput); !ok || !no.NativeOutput(withTools) {
			return false
		}
	}
	return true
}

// Stream implements [Streamer].
func (f *fallbackStreamer) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		var errs []error
		var rl *relay
		for i, m := range f.models {
			mctx := f.modelCtx(ctx, i)
			var err error
			if s, ok := m.(Streamer); ok {
				if rl == nil {
					rl = &relay{yield: yield}
				}
				if !rl.pass(s.Stream(mctx, req)) {
					return
				}
				err = rl.failed
			} else {
				var resp *Response
				if resp, err = m.Generate(mctx, req); err == nil {
					yield(Chunk{Response: resp}, nil)
					return
				}
			}
			errs = append(errs, err)
			if !f.next(ctx, i, err) {
				break
			}
		}
		yield(Chunk{}, f.failed(errs))
	}
}

// modelCtx returns the context model i is asked with: one that tells a
// Retry inside the list its index, when anything listens for events.
func (f *fallbackModel) modelCtx(ctx context.Context, i int) context.Context {
	if sinkOf(ctx) == nil {
		return ctx
	}
	if i == 0 && ctx.Value(modelIndexKey{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, modelIndexKey{}, i)
}

// next reports whether, after model i failed with err, the next one is to
// be asked, and reports the move if so.
func (f *fallbackModel) next(ctx context.Context, i int, err error) bool {
	if i == len(f.models)-1 || ctx.Err() != nil || !f.on(err) {
		return false
	}
	emitTo(ctx, Event{Type: EventModelFallback, Attempt: &ModelAttempt{Attempt: i + 1, Model: i, Error: err.Error()}})
	return true
}

// failed returns the error of a call on which the models that were asked
// failed with errs.
func (f *fallbackModel) failed(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return &fallbackError{errs: errs, of: len(f.models)}
}

// fallbackError is the error of a [Fallback] whose models failed.
type fallbackError struct {
	errs []error
	of   int
}

func (e *fallbackError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fallback: %d of %d models failed", len(e.errs), e.of)
	for i, err := range e.errs {
		fmt.Fprintf(&b, "; model %d: %v", i, err)
	}
	return b.String()
}

func (e *fallbackError) Unwrap() []error { return e.errs }

// errModel is a Model that was set up wrong: every call fails with err.
type errModel struct{ err error }

func (m errModel) Generate(context.Context, *Request) (*Response, error) { return nil, m.err }

// noModel is the error of a wrapper given no model: it says which, and
// matches [ErrNoModel].
type noModel string

func (e noModel) Error() string { return string(e) }

func (e noModel) Unwrap() error { return ErrNoModel }
