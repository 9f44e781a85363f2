package providertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
)

// errorCases checks each error case, a context-length error through a loop,
// and the loop's recovery from one on its wrap-up turn.
func (r *runner) errorCases(t *testing.T) {
	for _, s := range sentinels[:4] {
		if !hasKind(r.h.Errors, s.err) {
			t.Errorf("providertest: no ErrorCase of kind providers.%s: give the provider's error response for it", s.name)
		}
	}
	for _, c := range r.h.Errors {
		t.Run(c.Name, func(t *testing.T) { r.errorCase(t, c) })
	}
	long, ok := contextLength(r.h.Errors)
	if !ok {
		return
	}
	t.Run("context_length_through_the_loop", func(t *testing.T) {
		srv, m := r.serve(t, 0)
		srv.add(long.Reply)
		loop := &toolloop.AgentLoop{Model: m}
		res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("a very long transcript")})
		if !errors.Is(err, providers.ErrContextLength) {
			t.Errorf("the run ended with %v, want an error matching providers.ErrContextLength", err)
		}
		if res == nil || res.StopReason != toolloop.StopError {
			t.Errorf("the run's result %+v, want stop reason %q", res, toolloop.StopError)
		}
	})
	t.Run("wrap_up_overflow", func(t *testing.T) { r.wrapUp(t, long, false) })
	t.Run("wrap_up_overflow_nothing_fits", func(t *testing.T) { r.wrapUp(t, long, true) })
}

// hasKind reports whether some case is of kind.
func hasKind(cases []ErrorCase, kind error) bool {
	for _, c := range cases {
		if c.Kind == kind {
			return true
		}
	}
	return false
}

// contextLength returns the first error response of kind
// providers.ErrContextLength, if there is one.
func contextLength(cases []ErrorCase) (ErrorCase, bool) {
	for _, c := range cases {
		if c.Kind == providers.ErrContextLength && status(c.Reply) >= 300 {
			return c, true
		}
	}
	return ErrorCase{}, false
}

// status is the status a reply sends.
func status(r Reply) int {
	if r.Status == 0 {
		return http.StatusOK
	}
	return r.Status
}

// errorCase checks c through each call it answers: its error, the
// requests made, and whether it is retried.
func (r *runner) errorCase(t *testing.T, c ErrorCase) {
	ways := []bool{false, true}
	switch {
	case status(c.Reply) < 300 && c.Reply.stream():
		ways = []bool{true}
	case status(c.Reply) < 300:
		ways = []bool{false}
	}
	for _, stream := range ways {
		if stream && !r.streams {
			if len(ways) == 1 {
				t.Errorf("providertest: an error in a stream, from a model that does not stream")
			}
			continue
		}
		t.Run(callName(stream), func(t *testing.T) {
			srv, m := r.serve(t, 0)
			srv.add(c.Reply)
			a := ask(context.Background(), m, weatherRequest(), stream)
			report(t, checkError(r.h.Provider, c, a.err, srv, 1))
			if status(c.Reply) < 300 {
				return
			}
			srv, m = r.serve(t, 1)
			if !c.Retried {
				srv.add(c.Reply)
				a := ask(context.Background(), m, weatherRequest(), stream)
				report(t, checkError(r.h.Provider, c, a.err, srv, 1))
				return
			}
			srv.add(c.Reply, c.Reply)
			a = ask(context.Background(), m, weatherRequest(), stream)
			report(t, checkError(r.h.Provider, c, a.err, srv, 2))

			srv, m = r.serve(t, 1)
			success := turnText
			if stream {
				success = turnStreamText
			}
			srv.add(c.Reply, r.first(t, success, weatherRequest()))
			if a := ask(context.Background(), m, weatherRequest(), stream); a.err != nil || a.resp == nil {
				t.Errorf("a retry after %s did not succeed: %v", c.Name, a.err)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d request(s) for an error and a retry, want 2", n)
			}
		})
	}
}

// checkError returns what is wrong with err, the error of a call of a
// model of provider answered by c's reply, and with the requests srv
// received: want of them.
func checkError(provider string, c ErrorCase, err error, srv *Server, want int) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	reqs := srv.Requests()
	if len(reqs) != want {
		bad("%d request(s), want %d", len(reqs), want)
	}
	if err == nil {
		return append(probs, "no error")
	}
	for _, s := range sentinels {
		if is := errors.Is(err, s.err); is != (s.err == c.Kind) {
			bad("errors.Is(err, providers.%s) is %v for %v", s.name, is, err)
		}
	}
	var pe *providers.Error
	if !errors.As(err, &pe) {
		return append(probs, fmt.Sprintf("%v (%T) is no *providers.Error", err, err))
	}
	wantStatus := c.Status
	if wantStatus == 0 {
		wantStatus = status(c.Reply)
	}
	if pe.Provider != provider || provider == "" {
		bad("Error.Provider %q, want %q (Harness.Provider), which must not be empty", pe.Provider, provider)
	}
	if pe.StatusCode != wantStatus {
		bad("Error.StatusCode %d, want %d", pe.StatusCode, wantStatus)
	}
	if pe.Type != c.Type {
		bad("Error.Type %q, want %q", pe.Type, c.Type)
	}
	if c.Message != "" && pe.Message != c.Message || pe.Message == "" {
		bad("Error.Message %q, want %q (or, if that is empty, any message)", pe.Message, c.Message)
	}
	if pe.Wait != c.Wait {
		bad("Error.Wait %v, want %v", pe.Wait, c.Wait)
	}
	if status(c.Reply) < 300 || len(reqs) == 0 {
		if pe.Method != "" || pe.URL != "" {
			bad("an error inside a response names the request: Error.Method %q, URL %q", pe.Method, pe.URL)
		}
		return probs
	}
	last := reqs[len(reqs)-1]
	if url := srv.URL + last.URL.Path; pe.Method != last.Method || pe.URL != url {
		bad("Error.Method and URL are %q and %q, want %q and %q", pe.Method, pe.URL, last.Method, url)
	}
	if pe.Hint != "" && pe.StatusCode != http.StatusNotFound {
		bad("Error.Hint %q: the URL is right", pe.Hint)
	}
	if !strings.Contains(err.Error(), pe.URL) {
		bad("the error %q does not name the URL %q", err.Error(), pe.URL)
	}
	return probs
}
