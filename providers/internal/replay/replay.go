package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Step is one exchange: the request the server expects and the response it
// sends.
type Step struct {
	// Golden, if set, names the file under testdata/requests (without
	// .json) holding the request body the server must receive, compared as
	// decoded JSON. With Update, the file is rewritten instead.
	Golden string
	// Want holds strings the request body must contain, such as the
	// loop's wrap-up prompt or a tool choice as the SDK writes it, so
	// that a step answers only the request it was meant for; a body
	// without one fails the test.
	Want []string
	// Status is the response status; 0 means 200.
	Status int
	// Header holds extra response headers, such as Retry-After-Ms.
	Header map[string]string
	// Response names the file under testdata/responses holding the body.
	// A .sse file is sent as an event stream, in pieces of Chunk bytes,
	// flushed one by one, so that reads split lines and characters.
	Response string
	// Chunk is the size of the pieces of an event stream; 0 means 7.
	Chunk int
}

// Server is an httptest server that plays its steps in order.
type Server struct {
	*httptest.Server
	t      testing.TB
	dir    string
	update bool

	mu       sync.Mutex
	steps    []Step
	next     int
	requests []*http.Request
	bodies   [][]byte
}

// New starts a server playing steps from the files under dir (a package's
// testdata). When update is set, golden request bodies are rewritten from
// what the server receives. The server is closed when the test ends, which
// fails the test if some steps were not played.
func New(t testing.TB, dir string, update bool, steps ...Step) *Server {
	t.Helper()
	s := &Server{t: t, dir: dir, update: update, steps: steps}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.next < len(s.steps) && !t.Failed() {
			t.Errorf("replay: %d of %d steps were played", s.next, len(s.steps))
		}
	})
	return s
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
	if s.next >= len(s.steps) {
		s.mu.Unlock()
		s.t.Errorf("replay: request %d to %s, but there are only %d steps", len(s.requests), r.URL.Path, len(s.steps))
		http.Error(w, `{"error":{"message":"no more steps"}}`, http.StatusInternalServerError)
		return
	}
	step := s.steps[s.next]
	s.next++
	num := len(s.requests)
	s.mu.Unlock()

	if step.Golden != "" {
		s.checkGolden(step.Golden, body)
	}
	for _, w := range step.Want {
		if !bytes.Contains(body, []byte(w)) {
			s.t.Errorf("replay: request %d (for %s) does not contain %q", num, step.Response, w)
		}
	}
	resp, err := os.ReadFile(filepath.Join(s.dir, "responses", step.Response))
	if err != nil {
		s.t.Errorf("replay: %v", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for k, v := range step.Header {
		w.Header().Set(k, v)
	}
	status := step.Status
	if status == 0 {
		status = http.StatusOK
	}
	if !strings.HasSuffix(step.Response, ".sse") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	n := step.Chunk
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

// checkGolden compares a request body with its golden file, or rewrites
// the file.
func (s *Server) checkGolden(name string, body []byte) {
	path := filepath.Join(s.dir, "requests", name+".json")
	if s.update {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			s.t.Errorf("replay: request body for %s is not JSON: %v", name, err)
			return
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			s.t.Errorf("replay: %v", err)
			return
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			s.t.Errorf("replay: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		s.t.Errorf("replay: %v (run the tests with -update to create it)", err)
		return
	}
	if d := DiffJSON(want, body); d != "" {
		s.t.Errorf("replay: request body differs from %s (-want +got):\n%s", path, d)
	}
}

// DiffJSON compares two JSON documents as decoded values and returns a
// readable diff (-want +got), or "" if they match.
func DiffJSON(want, got []byte) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "want is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "got is not JSON: " + err.Error()
	}
	return cmp.Diff(w, g)
}
