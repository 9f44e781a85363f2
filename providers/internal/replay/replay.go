package replay

import (
	"path/filepath"
	"testing"

	"github.com/toolloop/toolloop/providers/providertest"
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

// Server is the conformance kit's fake server.
type Server = providertest.Server

// New starts a server playing steps from the files under dir (a package's
// testdata). When update is set, golden request bodies are rewritten from
// what the server receives. The server is closed when the test ends, which
// fails the test if some steps were not played.
func New(t testing.TB, dir string, update bool, steps ...Step) *Server {
	t.Helper()
	replies := make([]providertest.Reply, len(steps))
	for i, s := range steps {
		replies[i] = providertest.Reply{Status: s.Status, Header: s.Header, File: filepath.Join(dir, "responses", s.Response),
			Chunk: s.Chunk, Contains: s.Want, Update: update}
		if s.Golden != "" {
			replies[i].Golden = filepath.Join(dir, "requests", s.Golden+".json")
		}
	}
	return providertest.NewServer(t, replies...)
}
