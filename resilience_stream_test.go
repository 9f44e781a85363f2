package toolloop_test

import (
	"context"
	"iter"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
)

// streamPlay is what one call of a streamModel does: yield deltas, then
// fail with err or end with resp.
type streamPlay struct {
	deltas []string
	err    error
	resp   *toolloop.Response
}

// streamModel is a streaming model that plays its plays in order, one a
// call, the last one forever. Generate plays the same without deltas.
type streamModel struct {
	mu    sync.Mutex
	plays []streamPlay
	calls int
}

func (s *streamModel) next() streamPlay {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.plays[min(s.calls, len(s.plays)-1)]
	s.calls++
	return p
}

func (s *streamModel) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *streamModel) Generate(ctx context.Context, _ *toolloop.Request) (*toolloop.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := s.next()
	return p.resp, p.err
}

func (s *streamModel) Stream(ctx context.Context, _ *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		p := s.next()
		for _, d := range p.deltas {
			if !yield(toolloop.Chunk{Text: d}, nil) {
				return
			}
		}
		if p.err != nil {
			yield(toolloop.Chunk{}, p.err)
			return
		}
		yield(toolloop.Chunk{Response: p.resp}, nil)
	}
}

// rudeStreamer streams as its model does, but goes on yielding after it
// was told to stop.
type rudeStreamer struct{ *streamModel }

func (r rudeStreamer) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		for ch, err := range r.streamModel.Stream(ctx, req) {
			yield(ch, err) // ignores false
		}
	}
}

func deltasOf(rec *looptest.Recorder) string {
	var s string
	for _, e := range rec.Of(toolloop.EventModelDelta) {
		s += e.Text
	}
	return s
}

func TestRetryStream(t *testing.T) {
	hello := streamPlay{deltas: []string{"Hel", "lo"}, resp: looptest.Text("Hello")}

	t.Run("fails before the first chunk", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			inner := &streamModel{plays: []streamPlay{{err: provErr(529, providers.ErrOverloaded)}, hello}}
			m := toolloop.Retry(inner, toolloop.RetryPolicy{})
			require.Implements(t, (*toolloop.Streamer)(nil), m)
			rec := &looptest.Recorder{}
			res, err := (&toolloop.AgentLoop{Model: m, OnEvent: rec.Record}).Run(context.Background(), user("hi"))
			require.NoError(t, err)
			assert.Equal(t, "Hello", res.FinalText)
			assert.Equal(t, "Hello", deltasOf(rec), "each delta once")
			assert.Len(t, rec.Of(toolloop.EventModelRetry), 1)
			assert.Equal(t, 2, inner.Calls())
		})
	})

	t.Run("fails after a chunk", func(t *testing.T) {
		cut := provErr(200, providers.ErrOverloaded) // retryable, but too late
		inner := &streamModel{plays: []streamPlay{{deltas: []string{"Hel"}, err: cut}, hello}}
		m := toolloop.Retry(inner, toolloop.RetryPolicy{}).(toolloop.Streamer)
		var got []string
		var gotErr error
		for ch, err := range m.Stream(context.Background(), &toolloop.Request{}) {
			if err != nil {
				gotErr = err
				break
			}
			got = append(got, ch.Text)
		}
		assert.Equal(t, []string{"Hel"}, got)
		assert.Same(t, cut, gotErr, "the error passes through unchanged")
		assert.Equal(t, 1, inner.Calls())

		inner = &streamModel{plays: []streamPlay{{deltas: []string{"Hel"}, err: cut}, hello}}
		rec := &looptest.Recorder{}
		_, err := (&toolloop.AgentLoop{Model: toolloop.Retry(inner, toolloop.RetryPolicy{}), OnEvent: rec.Record}).Run(context.Background(), user("hi"))
		assert.ErrorIs(t, err, providers.ErrOverloaded)
		assert.Equal(t, "Hel", deltasOf(rec))
		assert.Empty(t, rec.Of(toolloop.EventModelRetry))
	})

	t.Run("gives up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			inner := &streamModel{plays: []streamPlay{{err: provErr(429, providers.ErrRateLimit)}}}
			m := toolloop.Retry(inner, toolloop.RetryPolicy{MaxAttempts: 2}).(toolloop.Streamer)
			var errs []error
			for _, err := range m.Stream(context.Background(), &toolloop.Request{}) {
				errs = append(errs, err)
			}
			require.Len(t, errs, 1, "one error, then the sequence ends")
			assert.ErrorIs(t, errs[0], providers.ErrRateLimit)
			assert.Equal(t, 2, inner.Calls())
		})
	})

	t.Run("the consumer stops early", func(t *testing.T) {
		inner := &streamModel{plays: []streamPlay{hello}}
		m := toolloop.Retry(inner, toolloop.RetryPolicy{}).(toolloop.Streamer)
		n := 0
		for range m.Stream(context.Background(), &toolloop.Request{}) {
			n++
			break
		}
		assert.Equal(t, 1, n)
		assert.Equal(t, 1, inner.Calls())
	})

	t.Run("a stream that yields on after it was told to stop", func(t *testing.T) {
		inner := &streamModel{plays: []streamPlay{{deltas: []string{"a", "b", "c"}, err: provErr(503, providers.ErrOverloaded)}}}
		rude := rudeStreamer{inner}
		for name, m := range map[string]toolloop.Model{
			"Retry":    toolloop.Retry(rude, toolloop.RetryPolicy{}),
			"Fallback": toolloop.Fallback(rude, looptest.NewModel(t)),
		} {
			var got []string
			assert.NotPanics(t, func() {
				for ch := range m.(toolloop.Streamer).Stream(context.Background(), &toolloop.Request{}) {
					got = append(got, ch.Text)
					break
				}
			}, name)
			assert.Equal(t, []string{"a"}, got, name)
		}
	})

	t.Run("a model that does not stream", func(t *testing.T) {
		m := toolloop.Retry(looptest.Always(looptest.Text("x")), toolloop.RetryPolicy{})
		_, ok := m.(toolloop.Streamer)
		assert.False(t, ok, "Retry adds no ability the model lacks")
	})
}

func TestFallbackStream(t *testing.T) {
	t.Run("streamer fails before a chunk, a plain model answers", func(t *testing.T) {
		first := &streamModel{plays: []streamPlay{{err: provErr(503, providers.ErrOverloaded)}}}
		answer := looptest.Text("plain answer")
		answer.Model = "plain"
		second := looptest.NewModel(t, looptest.Turn{Reply: answer})
		m := toolloop.Fallback(first, second)
		require.Implements(t, (*toolloop.Streamer)(nil), m)
		rec := &looptest.Recorder{}
		res, err := (&toolloop.AgentLoop{Model: m, OnEvent: rec.Record}).Run(context.Background(), user("hi"))
		require.NoError(t, err)
		assert.Equal(t, "plain answer", res.FinalText)
		assert.Equal(t, "plain", res.Messages[len(res.Messages)-1].Model)
		assert.Empty(t, deltasOf(rec), "the plain model's answer comes as one chunk")
		assert.Len(t, rec.Of(toolloop.EventModelFallback), 1)
	})

	t.Run("a plain model fails, a streamer answers", func(t *testing.T) {
		first := looptest.NewModel(t, looptest.Turn{Err: provErr(429, providers.ErrRateLimit)})
		second := &streamModel{plays: []streamPlay{{deltas: []string{"Hi", "!"}, resp: looptest.Text("Hi!")}}}
		rec := &looptest.Recorder{}
		res, err := (&toolloop.AgentLoop{Model: toolloop.Fallback(first, second), OnEvent: rec.Record}).Run(context.Background(), user("hi"))
		require.NoError(t, err)
		assert.Equal(t, "Hi!", res.FinalText)
		assert.Equal(t, "Hi!", deltasOf(rec))
	})

	t.Run("streamer fails after a chunk", func(t *testing.T) {
		cut := provErr(200, providers.ErrOverloaded)
		first := &streamModel{plays: []streamPlay{{deltas: []string{"Hel"}, err: cut}}}
		second := looptest.NewModel(t) // never called
		m := toolloop.Fallback(first, second).(toolloop.Streamer)
		var gotErr error
		for _, err := range m.Stream(context.Background(), &toolloop.Request{}) {
			if err != nil {
				gotErr = err
			}
		}
		assert.Same(t, cut, gotErr)
	})

	t.Run("all fail", func(t *testing.T) {
		first := &streamModel{plays: []streamPlay{{err: provErr(503, providers.ErrOverloaded)}}}
		second := &streamModel{plays: []streamPlay{{err: provErr(429, providers.ErrRateLimit)}}}
		m := toolloop.Fallback(first, second).(toolloop.Streamer)
		var errs []error
		for _, err := range m.Stream(context.Background(), &toolloop.Request{}) {
			errs = append(errs, err)
		}
		require.Len(t, errs, 1)
		assert.ErrorIs(t, errs[0], providers.ErrOverloaded)
		assert.ErrorIs(t, errs[0], providers.ErrRateLimit)
	})

	t.Run("no model streams", func(t *testing.T) {
		m := toolloop.Fallback(looptest.Always(looptest.Text("a")), looptest.Always(looptest.Text("b")))
		_, ok := m.(toolloop.Streamer)
		assert.False(t, ok)
	})
}

// nopModel is the cheapest model: the same answer every time.
type nopModel struct{ resp *toolloop.Response }

func (n nopModel) Generate(context.Context, *toolloop.Request) (*toolloop.Response, error) {
	return n.resp, nil
}

// nopStreamer streams the same answer every time, in one chunk.
type nopStreamer struct{ nopModel }

func (n nopStreamer) Stream(context.Context, *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) { yield(toolloop.Chunk{Response: n.resp}, nil) }
}

// BenchmarkRetryOverhead is what the wrappers add to a model call that
// succeeds at once: a no-op model called directly, through Retry, through
// Fallback (the first model answers), and the same streamed; "observed"
// runs with an event sink on the context, as the loop sets one when
// anything watches the run.
func BenchmarkRetryOverhead(b *testing.B) {
	resp := looptest.Text("ok")
	plain := nopModel{resp}
	streamer := nopStreamer{nopModel{resp}}
	req := &toolloop.Request{Messages: user("hi")}
	observed := toolloop.WithEventSink(context.Background(), func(toolloop.Event) {})
	generate := func(m toolloop.Model, ctx context.Context) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Generate(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	stream := func(m toolloop.Model, ctx context.Context) func(b *testing.B) {
		s := m.(toolloop.Streamer)
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for ch, err := range s.Stream(ctx, req) {
					if err != nil || ch.Response == nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	bg := context.Background()
	b.Run("Generate/direct", generate(plain, bg))
	b.Run("Generate/Retry", generate(toolloop.Retry(plain, toolloop.RetryPolicy{}), bg))
	b.Run("Generate/Fallback", generate(toolloop.Fallback(plain, plain), bg))
	b.Run("Generate/Fallback-observed", generate(toolloop.Fallback(plain, plain), observed))
	b.Run("Generate/Fallback(Retry,Retry)", generate(toolloop.Fallback(toolloop.Retry(plain, toolloop.RetryPolicy{}), toolloop.Retry(plain, toolloop.RetryPolicy{})), bg))
	b.Run("Stream/direct", stream(streamer, bg))
	b.Run("Stream/Retry", stream(toolloop.Retry(streamer, toolloop.RetryPolicy{}), bg))
	b.Run("Stream/Fallback", stream(toolloop.Fallback(streamer, streamer), bg))
}
