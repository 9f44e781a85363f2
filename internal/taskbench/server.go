package taskbench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/toolloop/toolloop"
)

// An Exchange is one request a server received, and what it cost.
type Exchange struct {
	// Bytes is the size of the request body.
	Bytes int
	// Prompt is the size of the request in prompt order (see
	// promptOrder), without Anthropic's cache_control markers; Stable
	// is how many of its first bytes are the previous request's.
	Prompt, Stable int
	// Edited says a context manager edited the transcript before this
	// request.
	Edited bool
	// Usage is what the server answered: input tokens (Bytes/4), the
	// cache's simulated reads and writes, output tokens.
	Usage toolloop.Usage
	// Body is the request body, if the server keeps them.
	Body []byte
}

// A server plays one provider's API for one run: it answers each
// request with the reply set before it, in the provider's wire format,
// with the usage the provider would report, and records the request.
type server struct {
	*httptest.Server
	p    *Provider
	keep bool

	mu         sync.Mutex
	next       *toolloop.Response
	edited     bool
	prevPrompt []byte
	prevBPs    []int
	log        []Exchange
	err        error
}

func newServer(p *Provider, keep bool) *server {
	s := &server{p: p, keep: keep}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// reply sets the answer to the next request.
func (s *server) reply(resp *toolloop.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = resp
}

// markEdit notes that the next request follows a transcript edit.
func (s *server) markEdit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.edited = true
}

// exchanges returns the requests received so far, and the first error
// in serving them.
func (s *server) exchanges() ([]Exchange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log, s.err
}

func (s *server) fail(w http.ResponseWriter, err error) {
	if s.err == nil {
		s.err = err
	}
	http.Error(w, `{"error":{"message":"taskbench: `+err.Error()+`"}}`, http.StatusBadRequest)
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.fail(w, err)
		return
	}
	ordered, err := promptOrder(body, s.p.order)
	if err != nil {
		s.fail(w, err)
		return
	}
	prompt, bps := s.p.cache.prompt(ordered)
	x := Exchange{Bytes: len(body), Prompt: len(prompt), Edited: s.edited}
	if s.prevPrompt != nil {
		x.Stable = commonPrefix(s.prevPrompt, prompt)
	}
	read, write := s.p.cache.cached(x.Stable, s.prevBPs, bps)
	resp := s.next
	if resp == nil {
		resp = &toolloop.Response{Message: assistant("(no reply was set)"), StopReason: toolloop.StopEnd}
	}
	x.Usage = toolloop.Usage{InputTokens: estTokens(len(body)), CacheReadTokens: read, CacheWriteTokens: write, OutputTokens: outputTokens(resp)}
	if s.keep {
		x.Body = body
	}
	s.prevPrompt, s.prevBPs = prompt, bps
	s.edited, s.next = false, nil
	s.log = append(s.log, x)
	out, err := s.p.encode(resp, x.Usage, s.p.Model, len(s.log))
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}
