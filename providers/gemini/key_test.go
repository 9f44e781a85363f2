package gemini

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestNewWithoutKey checks that New fails at once, before any request,
// without a key for the Gemini API, with an error that matches
// providers.ErrConfig and providers.ErrAuth and names the variables to
// set; that Vertex AI, which takes credentials rather than a key, still
// works; and that the SDK's other set-up errors match ErrConfig.
func TestNewWithoutKey(t *testing.T) {
	vertexEnv := map[string]string{"GOOGLE_CLOUD_PROJECT": "my-project", "GOOGLE_CLOUD_LOCATION": "europe-west4"}
	tests := []struct {
		name    string
		cfg     Config
		env     map[string]string
		wantOK  bool
		wantKey bool // the error is the missing key's
	}{
		{name: "zero config", wantKey: true},
		{name: "Gemini API", cfg: Config{Backend: genai.BackendGeminiAPI}, wantKey: true},
		{name: "a base URL still needs a key", cfg: Config{BaseURL: "http://localhost:8080"}, wantKey: true},
		{name: "Vertex AI off", env: map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "false"}, wantKey: true},
		{name: "key in the config", cfg: Config{APIKey: "AIza-test"}, wantOK: true},
		{name: "GEMINI_API_KEY", env: map[string]string{"GEMINI_API_KEY": "AIza-env"}, wantOK: true},
		{name: "GOOGLE_API_KEY", env: map[string]string{"GOOGLE_API_KEY": "AIza-env"}, wantOK: true},
		{name: "Vertex AI by config", cfg: Config{Backend: genai.BackendVertexAI}, env: vertexEnv, wantOK: true},
		{name: "Vertex AI by environment", env: map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true",
			"GOOGLE_CLOUD_PROJECT": "my-project", "GOOGLE_CLOUD_LOCATION": "us-central1"}, wantOK: true},
		{name: "Vertex AI without a project", cfg: Config{Backend: genai.BackendVertexAI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replay.Unsetenv(t, []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE",
				"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_CLOUD_REGION", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"}, tt.env)
			cfg := tt.cfg
			cfg.MaxRetries = -1
			// A client of one's own also keeps Vertex AI from looking for
			// Application Default Credentials.
			var sent *atomic.Int32
			cfg.HTTPClient, sent = replay.Offline()
			m, err := New(cfg)
			assert.Zero(t, sent.Load(), "no request was made")
			if tt.wantOK {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, providers.ErrConfig)
			if !tt.wantKey {
				assert.NotErrorIs(t, err, providers.ErrAuth)
				return
			}
			replay.MissingKey(t, err, "GEMINI_API_KEY", "GOOGLE_API_KEY")
		})
	}
}

// TestKeyAndPath checks where requests go, streamed or not, and that they
// carry the key.
func TestKeyAndPath(t *testing.T) {
	srv := serve(t, replay.Step{Response: "plain.json"}, replay.Step{Response: "stream_text.sse"})
	m := modelFor(t, srv, Config{Model: "gemini-2.5-pro"})
	_, err := m.Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	require.NoError(t, replay.Collect(m, replay.WeatherRequest()).Err)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "/v1beta/models/gemini-2.5-pro:generateContent", reqs[0].URL.Path)
	assert.Equal(t, "/v1beta/models/gemini-2.5-pro:streamGenerateContent", reqs[1].URL.Path)
	assert.Equal(t, "sse", reqs[1].URL.Query().Get("alt"))
	for _, r := range reqs {
		assert.Equal(t, "test-key", r.Header.Get("X-Goog-Api-Key"))
	}
}
