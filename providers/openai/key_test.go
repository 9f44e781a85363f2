package openai

import (
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestNewWithoutKey checks that both constructors fail at once, before any
// request, when requests would go to OpenAI's API without a key, with an
// error that matches providers.ErrConfig and providers.ErrAuth and names
// the variable to set; and that other servers need no key.
func TestNewWithoutKey(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		env    map[string]string
		wantOK bool
	}{
		{name: "zero config", cfg: Config{}},
		{name: "OpenAI's URL", cfg: Config{BaseURL: "https://API.openai.com/v1/"}},
		{name: "OpenAI's URL from the environment", env: map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1"}},
		{name: "key in the config", cfg: Config{APIKey: "sk-test"}, wantOK: true},
		{name: "key in the environment", env: map[string]string{"OPENAI_API_KEY": "sk-env"}, wantOK: true},
		{name: "a local server", cfg: Config{BaseURL: "http://localhost:11434/v1"}, wantOK: true},
		{name: "a server from the environment", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:8000/v1"}, wantOK: true},
		{name: "request options may carry the key", cfg: Config{RequestOptions: []option.RequestOption{option.WithHeader("api-key", "azure-key")}}, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replay.Unsetenv(t, []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"}, tt.env)
			cfg := tt.cfg
			var sent *atomic.Int32
			cfg.HTTPClient, sent = replay.Offline()
			cfg.MaxRetries = -1
			chat, err := New(cfg)
			responses, rerr := NewResponses(cfg)
			if tt.wantOK {
				assert.NoError(t, err)
				assert.NoError(t, rerr)
				return
			}
			replay.MissingKey(t, err, "OPENAI_API_KEY")
			replay.MissingKey(t, rerr, "OPENAI_API_KEY")
			assert.Nil(t, chat)
			assert.Nil(t, responses)
			assert.Zero(t, sent.Load(), "no request was made")
		})
	}
}
