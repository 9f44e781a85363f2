package anthropic

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestNewWithoutKey checks that New fails at once, before any request,
// without credentials, with an error that matches providers.ErrConfig and
// providers.ErrAuth and names the variables to set; and that every source
// of credentials the SDK reads lets it through.
func TestNewWithoutKey(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		env     map[string]string
		profile bool // a profile config file, as `ant auth login` writes
		wantOK  bool
	}{
		{name: "zero config"},
		{name: "a base URL still needs a key", cfg: Config{BaseURL: "http://localhost:4000"}},
		{name: "key in the config", cfg: Config{APIKey: "sk-ant-test"}, wantOK: true},
		{name: "ANTHROPIC_API_KEY", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-env"}, wantOK: true},
		{name: "ANTHROPIC_AUTH_TOKEN", env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "bearer"}, wantOK: true},
		{name: "ANTHROPIC_PROFILE", env: map[string]string{"ANTHROPIC_PROFILE": "work"}, wantOK: true},
		{name: "workload identity federation", env: map[string]string{"ANTHROPIC_FEDERATION_RULE_ID": "fdrl_1",
			"ANTHROPIC_ORGANIZATION_ID": "org_1", "ANTHROPIC_IDENTITY_TOKEN_FILE": "/var/run/token"}, wantOK: true},
		{name: "a profile config file", profile: true, wantOK: true},
		{name: "request options may carry credentials", cfg: Config{RequestOptions: []option.RequestOption{option.WithAuthToken("bearer")}}, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("ANTHROPIC_CONFIG_DIR", dir)
			replay.Unsetenv(t, credentialVars, tt.env)
			if tt.profile {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, "configs"), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "configs", "default.json"),
					[]byte(`{"version":"1.0","authentication":{"type":"user_oauth"}}`), 0o600))
			}
			cfg := tt.cfg
			cfg.MaxRetries = -1
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
			replay.MissingKey(t, err, "ANTHROPIC_API_KEY")
			assert.NotErrorIs(t, err, ErrConfig, "the config itself is fine")
		})
	}
}

// TestKeyAndPath checks where requests go, and that they carry the key
// and the API version.
func TestKeyAndPath(t *testing.T) {
	srv := serve(t, replay.Step{Response: "plain.json"})
	_, err := modelFor(t, srv, Config{}).Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1/messages", reqs[0].URL.Path)
	assert.Equal(t, "test-key", reqs[0].Header.Get("X-Api-Key"))
	assert.NotEmpty(t, reqs[0].Header.Get("Anthropic-Version"))
}
