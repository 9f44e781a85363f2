package openai

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
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
func modelFor(t testing.TB, srv *replay.Server, cfg Config) *Model {
	t.Helper()
	cfg.BaseURL = srv.URL
	cfg.APIKey = "test-key"
	cfg.HTTPClient = srv.Client()
	if cfg.Model == "" {
		cfg.Model = "gpt-4.1"
	}
	return mustNew(t, cfg)
}

// mustNew returns mustNew(t, cfg), failing the test if it fails.
func mustNew(t testing.TB, cfg Config) *Model {
	t.Helper()
	m, err := New(cfg)
	require.NoError(t, err)
	return m
}

// mustNewResponses returns mustNewResponses(t, cfg), failing the test if it
// fails.
func mustNewResponses(t testing.TB, cfg Config) *ResponsesModel {
	t.Helper()
	m, err := NewResponses(cfg)
	require.NoError(t, err)
	return m
}
