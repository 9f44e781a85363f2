package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A Reply is the fake server's answer to one request, in the provider's
// wire format, and what the request must hold.
type Reply struct {
	// Status is the response status; 0 means 200.
	Status int
	// Header holds response headers, such as Retry-After-Ms.
	Header map[string]string
	// Body is the response body; File names a file holding it instead.
	Body []byte
	File string
	// Stream sends the body as an event stream (text/event-stream), in
	// pieces of Chunk bytes (0 means 7), each flushed, so that the client
	// reads lines and characters split. A File ending in .sse is a
	// stream.
	Stream bool
	Chunk  int
	// Contains holds strings the request body must contain, so that a
	// reply answers only the request it was meant for.
	Contains []string
	// Golden, if set, names a file holding the request body the server
	// must receive, compared as decoded JSON; with Update, the file is
	// written from the request instead. Run sets both from the Harness.
	Golden string
	Update bool
}

// stream reports whether r's body is an event stream.
func (r *Reply) stream() bool { return r.Stream || strings.HasSuffix(r.File, ".sse") }

// name names r in test names and messages.
func (r *Reply) name(i int) string {
	if r.File != "" {
		return filepath.Base(r.File)
	}
	return fmt.Sprintf("reply_%d", i+1)
}

// body returns r's body, reading File if set.
func (r *Reply) body() ([]byte, error) {
	if r.File == "" {
		return r.Body, nil
	}
	return os.ReadFile(r.File)
}

// A Server is an httptest server that answers each request with the next
// of its replies, checking the request as the reply says. It is what Run
// points a model at; a provider's own tests can use it too.
type Server struct {
	*httptest.Server
	t testing.TB

	mu       sync.Mutex
	replies  []Reply
	next     int
	requests []*http.Request
	bodies   [][]byte
}

// NewServer starts a server playing replies in order. It is closed when
// the test ends, which fails the test if some replies were not played; a
// request after the last reply fails the test too.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.next < len(s.replies) && !t.Failed() {
			t.Errorf("providertest: %d of %d replies were played", s.next, len(s.replies))
		}
	})
	return s
}

// add appends replies to those the server plays.
func (s *Server) add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far, in order; their bodies
// are in Bodies.
func (s *Server) Requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

// Bodies returns the bodies of the requests received so far.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.bodies = append(s.bodies, body)
	num := len(s.requests)
	if s.next >= len(s.replies) {
		s.mu.Unlock()
		s.t.Errorf("providertest: request %d to %s, but there are only %d replies", num, r.URL.Path, len(s.replies))
		http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusInternalServerError)
		return
	}
	reply := s.replies[s.next]
	s.next++
	s.mu.Unlock()

	name := reply.name(s.next - 1)
	if reply.Golden != "" {
		if err := golden(reply.Golden, body, reply.Update); err != nil {
			s.t.Errorf("providertest: request %d (for %s): %v", num, name, err)
		}
	}
	for _, c := range reply.Contains {
		if !bytes.Contains(body, []byte(c)) {
			s.t.Errorf("providertest: request %d (for %s) does not contain %q", num, name, c)
		}
	}
	resp, err := reply.body()
	if err != nil {
		s.t.Errorf("providertest: %v", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if !reply.stream() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	n := reply.Chunk
	if n <= 0 {
		n = 7
	}
	fl, _ := w.(http.Flusher)
	for len(resp) > 0 {
		k := min(n, len(resp))
		if _, err := w.Write(resp[:k]); err != nil {
			return
		}
		resp = resp[k:]
		if fl != nil {
			fl.Flush()
		}
	}
}

// golden compares a request body with the golden file at path, or writes
// the file when update is set.
func golden(path string, body []byte, update bool) error {
	if update {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("the request body is not JSON: %v", err)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, b.Bytes(), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%v (run the tests with -update to create it)", err)
	}
	if d := diffJSON(want, body); d != "" {
		return fmt.Errorf("the request body differs from %s:\n%s", path, d)
	}
	return nil
}

// Recorded returns a Harness.Replies that answers each turn with the
// files under dir that names lists for the turn's name: recorded
// responses, a name ending in .sse being an event stream.
func Recorded(dir string, names map[string][]string) func(Turn) []Reply {
	return func(tn Turn) []Reply {
		var rs []Reply
		for _, n := range names[tn.Name] {
			rs = append(rs, Reply{File: filepath.Join(dir, n)})
		}
		return rs
	}
}
