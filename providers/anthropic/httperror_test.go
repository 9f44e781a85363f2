package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// call makes one call, streaming or not, and returns its error.
func call(t *testing.T, stream bool, cfg Config) error {
	t.Helper()
	cfg.MaxRetries = -1
	if !stream {
		_, err := mustNew(t, cfg).Generate(context.Background(), replay.WeatherRequest())
		return err
	}
	return replay.Collect(mustNew(t, cfg), replay.WeatherRequest()).Err
}

// TestHTTPErrorNamesTheRequest checks that an error response names the
// method and URL, and that a 404 from a base URL ending with /v1, which
// the SDK adds itself, suggests the base URL without it.
func TestHTTPErrorNamesTheRequest(t *testing.T) {
	tests := []struct {
		name     string
		base     string
		hintBase string // "" for no hint
	}{
		{"base URL with /v1", "/v1", "/"},
		{"under a prefix, with /v1", "/anthropic/v1/", "/anthropic/"},
		{"under a prefix", "/anthropic", ""},
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				err := call(t, stream, Config{BaseURL: srv.URL + tt.base, APIKey: "test-key", HTTPClient: srv.Client()})
				var he *wire.HTTPError
				require.ErrorAs(t, err, &he)
				assert.Equal(t, http.MethodPost, he.Method)
				assert.Equal(t, srv.URL+strings.TrimSuffix(tt.base, "/")+"/v1/messages", he.URL)
				assert.Equal(t, "404 page not found", he.Excerpt)
				if tt.hintBase == "" {
					assert.Empty(t, he.Hint)
				} else {
					assert.Equal(t, fmt.Sprintf("did you mean BaseURL %q?", srv.URL+tt.hintBase), he.Hint)
				}
				assert.Contains(t, err.Error(), fmt.Sprintf("POST %q", he.URL))
				var pe *providers.Error
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, http.StatusNotFound, pe.StatusCode)
				assert.Nil(t, pe.Kind)
				var sdkErr *sdk.Error
				require.ErrorAs(t, err, &sdkErr, "the SDK's error is still reachable")
			})
		}
	}
}

// TestHTTPErrorKeepsSecretsOut has a server echo the request, key
// included, in its error body.
func TestHTTPErrorKeepsSecretsOut(t *testing.T) {
	const key = "sk-ant-api03-test-0123456789abcdef"
	const password = "proxy-password-0123"
	for _, status := range []int{http.StatusUnauthorized, http.StatusBadGateway} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
			for k, v := range r.Header {
				fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ","))
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(b.String()))
		}))
		t.Cleanup(srv.Close)
		base := strings.Replace(srv.URL, "http://", "http://user:"+password+"@", 1)
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			err := call(t, false, Config{BaseURL: base, APIKey: key, HTTPClient: srv.Client()})
			require.Error(t, err)
			assert.NotContains(t, err.Error(), key)
			assert.NotContains(t, err.Error(), password)
			assert.Contains(t, err.Error(), "[REDACTED]", "the echoed key was there to scrub")
			if status == http.StatusUnauthorized {
				assert.ErrorIs(t, err, providers.ErrAuth)
			}
		})
	}
}
