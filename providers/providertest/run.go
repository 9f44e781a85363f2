package providertest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
)

// Run checks the model h makes against fake servers that answer in the
// provider's wire format, each check a subtest:
//
//   - turns: every turn of Harness.Replies, through Generate and, for a
//     toolloop.Streamer, through Stream, each event stream sent in pieces
//     of 1 and 7 bytes and whole: the answer has the turn's stop reason
//     and the Want of its reply (text, calls with their IDs, names and
//     arguments, reasoning, usage, model); the calls name offered tools
//     with distinct IDs and JSON object arguments; a stream's deltas add
//     up to its response, which comes last; the request is left as it
//     was, and its body matches its golden file;
//   - stream: a stream cut off before its end fails with an error
//     matching io.ErrUnexpectedEOF, and a consumer may stop early;
//   - reasoning: the blocks of a reasoning answer go back in the next
//     request (signature, encrypted content, or else text), and another
//     provider's do not;
//   - tool_choice: auto, none (as the loop's wrap-up turn sends it),
//     required and named each send a request of their own; without
//     tools, none sends what auto does; a choice no request can honour
//     fails before anything is sent;
//   - output: a structured answer to Request.Output, with tools where
//     toolloop.NativeOutput says the model takes them, streamed, and
//     refused; a format the model cannot take fails with
//     providers.ErrConfig, and a format without an object schema fails,
//     before anything is sent;
//   - errors: each ErrorCase through each call it answers becomes a
//     *providers.Error matching its Kind and no other, naming the
//     request it answered, with its status, type, message and wait;
//     retried or not as it says; a context-length error ends a loop's
//     run, and one answering the loop's wrap-up turn is recovered from
//     by leaving the oldest turns out;
//   - cancel: a cancelled call returns the context's error at once,
//     sending nothing.
//
// A feature in h.Lacks is not checked, and Run logs that it is not.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil || h.Replies == nil {
		t.Fatal("providertest: Harness.New and Harness.Replies are required")
	}
	r := &runner{h: h}
	_, probe := r.serve(t, 0)
	_, r.streams = probe.(toolloop.Streamer)
	if !r.streams {
		t.Logf("providertest: %T is no toolloop.Streamer: no stream checks", probe)
	}
	n, ok := probe.(toolloop.NativeOutput)
	r.native, r.nativeTools = ok && n.NativeOutput(false), ok && n.NativeOutput(true)
	for _, f := range []struct {
		lacks bool
		what  string
	}{{h.Lacks.Parallel, "parallel tool calls"}, {h.Lacks.Reasoning, "reasoning"}, {h.Lacks.Refusal, "refusals"}, {h.Lacks.Usage, "usage"}} {
		if f.lacks {
			t.Logf("providertest: the provider lacks %s: not checked", f.what)
		}
	}
	t.Run("turns", r.turns)
	if r.streams {
		t.Run("stream", r.stream)
	}
	if !h.Lacks.Reasoning {
		t.Run("reasoning", r.reasoning)
	}
	t.Run("tool_choice", r.toolChoice)
	t.Run("output", r.outputs)
	t.Run("errors", r.errorCases)
	t.Run("cancel", r.cancel)
}

// runner runs the checks of one harness.
type runner struct {
	h       Harness
	streams bool
	// native and nativeTools say whether the model takes Request.Output
	// without tools and with them.
	native, nativeTools bool
}

// serve starts an empty server and the model under test, talking to it.
func (r *runner) serve(t *testing.T, retries int) (*Server, toolloop.Model) {
	t.Helper()
	srv := NewServer(t)
	m := r.h.New(t, Setup{URL: srv.URL, Client: srv.Client(), Retries: retries})
	if m == nil {
		t.Fatal("providertest: Harness.New returned a nil model")
	}
	return srv, m
}

// turn returns the named turn, answering req.
func turn(name string, req *toolloop.Request) Turn {
	return Turn{Name: name, Stream: strings.HasPrefix(name, "stream_"), Request: req, Want: canonical(name)}
}

// replies returns the harness's replies to a turn, failing the test if
// there are none; each is sent with the golden file of the request, if
// any.
func (r *runner) replies(t *testing.T, tn Turn, golden string) []Reply {
	t.Helper()
	rs := r.h.Replies(tn)
	if len(rs) == 0 {
		t.Fatalf("providertest: no reply for turn %q: give one, or declare the feature in Harness.Lacks", tn.Name)
	}
	for i := range rs {
		if golden != "" && r.h.Golden != "" {
			rs[i].Golden, rs[i].Update = r.h.Golden+golden+".json", r.h.Update
		}
	}
	return rs
}

// first returns the first reply of the named turn, to answer req.
func (r *runner) first(t *testing.T, name string, req *toolloop.Request) Reply {
	t.Helper()
	return r.replies(t, turn(name, req), "")[0]
}

// chunks are the piece sizes event streams are sent in: a byte at a
// time, a few bytes, and whole.
var chunks = []struct {
	name string
	size int
}{{"chunk_1", 1}, {"chunk_7", 7}, {"whole", 1 << 30}}

// each checks every reply of the named turn as the answer to req.
func (r *runner) each(t *testing.T, name string, req *toolloop.Request, golden string) {
	t.Helper()
	srv, m := r.serve(t, 0)
	tn := turn(name, req)
	for i, reply := range r.replies(t, tn, golden) {
		vary := tn.Stream && reply.Chunk == 0
		sizes := chunks[:1]
		if vary {
			sizes = chunks
		}
		for _, size := range sizes {
			label := reply.name(i)
			if vary {
				reply.Chunk = size.size
				label += "/" + size.name
			}
			srv.add(reply)
			t.Run(label, func(t *testing.T) {
				a := ask(context.Background(), m, req, tn.Stream)
				if r.h.Update && r.answerFile(reply) != "" && a.resp != nil {
					if err := r.record(reply, a, tn.Stream, srv); err != nil {
						t.Fatal(err)
					}
				}
				want, err := r.want(tn, reply, srv)
				if err != nil {
					t.Fatal(err)
				}
				report(t, a.check(name, tn.Stream, req, &want, r.h.Lacks))
			})
		}
	}
}

// report fails t with each problem.
func report(t *testing.T, probs []string) {
	t.Helper()
	for _, p := range probs {
		t.Error(p)
	}
}

func (r *runner) turns(t *testing.T) {
	for _, s := range answers {
		if s.lacks != nil && s.lacks(r.h.Lacks) || s.stream && !r.streams {
			continue
		}
		t.Run(s.name, func(t *testing.T) { r.each(t, s.name, weatherRequest(), s.golden) })
	}
}

// stream checks a stream cut off before its end, and a consumer that
// stops early.
func (r *runner) stream(t *testing.T) {
	t.Run("cut_off", func(t *testing.T) {
		srv, m := r.serve(t, 0)
		reply := r.first(t, turnStreamText, weatherRequest())
		body, err := reply.body()
		if err != nil {
			t.Fatal(err)
		}
		cut, ok := cutStream(body)
		if !ok {
			t.Fatalf("providertest: the stream_text reply %s has too few events to cut off", reply.name(0))
		}
		reply.Body, reply.File, reply.Stream = cut, "", true
		srv.add(reply)
		a := ask(context.Background(), m, weatherRequest(), true)
		if !errors.Is(a.err, io.ErrUnexpectedEOF) {
			t.Errorf("a stream cut off before its end: error %v, want one matching io.ErrUnexpectedEOF", a.err)
		}
		if a.resp != nil {
			t.Errorf("a stream cut off before its end yielded a response")
		}
	})
	t.Run("consumer_stops", func(t *testing.T) {
		srv, m := r.serve(t, 0)
		srv.add(r.first(t, turnStreamText, weatherRequest()))
		n := 0
		for ch, err := range m.(toolloop.Streamer).Stream(context.Background(), weatherRequest()) {
			if err != nil {
				t.Fatalf("the stream failed: %v", err)
			}
			if ch.Text != "" {
				n++
				break
			}
		}
		if n != 1 {
			t.Errorf("the stream yielded no text")
		}
	})
}

// cutStream returns body cut at the end of the event half way through
// it, and whether it has enough events to be cut.
func cutStream(body []byte) ([]byte, bool) {
	var ends []int
	for i := 0; i+1 < len(body); i++ {
		switch {
		case body[i] == '\n' && body[i+1] == '\n':
			ends = append(ends, i+2)
		case i+3 < len(body) && string(body[i:i+4]) == "\r\n\r\n":
			ends = append(ends, i+4)
		}
	}
	if len(ends) < 2 {
		return nil, false
	}
	return body[:ends[len(ends)/2-1]], true
}

// cancel checks that a cancelled call returns the context's error, not a
// provider's, sending nothing.
func (r *runner) cancel(t *testing.T) {
	srv, m := r.serve(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, stream := range []bool{false, true} {
		if stream && !r.streams {
			continue
		}
		done := make(chan answer, 1)
		go func() { done <- ask(ctx, m, weatherRequest(), stream) }()
		var a answer
		select {
		case a = <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("%s with a cancelled context did not return within 5s", callName(stream))
			a = <-done
		}
		var pe *providers.Error
		switch {
		case !errors.Is(a.err, context.Canceled):
			t.Errorf("%s with a cancelled context: error %v, want context.Canceled", callName(stream), a.err)
		case errors.As(a.err, &pe):
			t.Errorf("%s with a cancelled context: a provider's error %v", callName(stream), a.err)
		}
	}
	if n := len(srv.Requests()); n > 0 {
		t.Errorf("cancelled calls sent %d request(s)", n)
	}
}

// callName names the call a check makes.
func callName(stream bool) string {
	if stream {
		return "Stream"
	}
	return "Generate"
}

// sentinels are the errors a provider's error may match.
var sentinels = []struct {
	err  error
	name string
}{
	{providers.ErrContextLength, "ErrContextLength"},
	{providers.ErrRateLimit, "ErrRateLimit"},
	{providers.ErrOverloaded, "ErrOverloaded"},
	{providers.ErrAuth, "ErrAuth"},
	{providers.ErrConfig, "ErrConfig"},
}

// failsBeforeSending checks that each call of m with req fails, matching
// providers.ErrConfig if config is set and not otherwise, and that srv
// received nothing.
func (r *runner) failsBeforeSending(t *testing.T, srv *Server, m toolloop.Model, req *toolloop.Request, config bool) {
	t.Helper()
	for _, stream := range []bool{false, true} {
		if stream && !r.streams {
			continue
		}
		a := ask(context.Background(), m, req, stream)
		switch {
		case a.err == nil:
			t.Errorf("%s: no error", callName(stream))
		case errors.Is(a.err, providers.ErrConfig) != config:
			t.Errorf("%s: error %v; want one that matches providers.ErrConfig: %v", callName(stream), a.err, config)
		}
	}
	if n := len(srv.Requests()); n > 0 {
		t.Errorf("%d request(s) sent", n)
	}
}
