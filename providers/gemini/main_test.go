package gemini

import (
	"flag"
	"testing"

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
func modelFor(srv *replay.Server, cfg Config) *Model {
	cfg.BaseURL = srv.URL
	cfg.APIKey = "test-key"
	cfg.Backend = genai.BackendGeminiAPI
	cfg.HTTPClient = srv.Client()
	if cfg.HTTPOptions.RetryOptions == nil {
		cfg.HTTPOptions.RetryOptions = &genai.HTTPRetryOptions{
			InitialDelay: genai.Ptr(0.001), MaxDelay: genai.Ptr(0.001), Jitter: genai.Ptr(0.0),
		}
	}
	if cfg.Model == "" {
		cfg.Model = "gemini-2.5-flash"
	}
	return New(cfg)
}
