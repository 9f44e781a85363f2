package gemini

import (
	"flag"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop/providers/internal/replay"
)

var update = flag.Bool("update", false, "rewrite golden request bodies and transcripts in testdata")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts a replay server playing steps from testdata.
func serve(t *testing.T, steps ...replay.Step) *replay.Server {
	t.Helper()
	return replay.New(t, "testdata", *update, steps...)
}

// modelFor returns a model talking to srv with a fake key and retries a
// millisecond apart; cfg sets the rest.
func modelFor(t testing.TB, srv *replay.Server, cfg Config) *Model {
	t.Helper()
	return modelAt(t, srv.URL, srv.Client(), cfg)
}

// modelAt returns a model talking to the server at url through client,
// as modelFor does.
func modelAt(t testing.TB, url string, client *http.Client, cfg Config) *Model {
	t.Helper()
	cfg.BaseURL = url
	cfg.APIKey = "test-key"
	cfg.Backend = genai.BackendGeminiAPI
	cfg.HTTPClient = client
	if cfg.HTTPOptions.RetryOptions == nil {
		cfg.HTTPOptions.RetryOptions = &genai.HTTPRetryOptions{
			InitialDelay: genai.Ptr(0.001), MaxDelay: genai.Ptr(0.001), Jitter: genai.Ptr(0.0),
		}
	}
	if cfg.Model == "" {
		cfg.Model = "gemini-2.5-flash"
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
