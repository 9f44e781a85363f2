package openai

import (
	"flag"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolloop/toolloop/providers/internal/replay"
)

var update = flag.Bool("update", false, "rewrite golden request bodies and transcripts in testdata")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts a replay server playing steps from testdata.
func serve(t *testing.T, steps ...replay.Step) *replay.Server {
	t.Helper()
	return replay.New(t, "testdata", *update, steps...)
}

// modelFor returns a model talking to srv with a fake key; cfg sets the
// rest.
func modelFor(srv *replay.Server, cfg Config) *Model {
	cfg.BaseURL = srv.URL
	cfg.APIKey = "test-key"
	cfg.HTTPClient = srv.Client()
	if cfg.Model == "" {
		cfg.Model = "gpt-4.1"
	}
	return New(cfg)
}

// mustNew returns New(cfg).
func mustNew(t testing.TB, cfg Config) *Model {
	t.Helper()
	return New(cfg)
}
