package gemini

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// call makes one call, streaming or not, and returns its error.
func call(t *testing.T, stream bool, cfg Config) error {
	t.Helper()
	cfg.MaxRetries = -1
	cfg.Backend = genai.BackendGeminiAPI
	if cfg.Model == "" {
		cfg.Model = "gemini-2.5-flash"
	}
	if !stream {
		_, err := mustNew(t, cfg).Generate(context.Background(), replay.WeatherRequest())
		return err
	}
	return replay.Collect(mustNew(t, cfg), replay.WeatherRequest()).Err
}

// TestHTTPErrorNamesTheRequest checks that an error response names the
// method and URL (which the SDK's error does not carry), and that a 404
// from a base URL ending with an API version, which the SDK adds itself,
// suggests the base URL without it.
func TestHTTPErrorNamesTheRequest(t *testing.T) {
	tests := []struct {
		name     string
		base     string
		hintBase string // "" for no hint
	}{
		{"base URL with /v1beta", "/v1beta", "/"},
		{"under a prefix, with /v1", "/gemini/v1/", "/gemini/"},
		{"under a prefix", "/gemini", ""},
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				err := call(t, stream, Config{BaseURL: srv.URL + tt.base, APIKey: "test-key", HTTPClient: srv.Client()})
				method := "generateContent"
				if stream {
					method = "streamGenerateContent"
				}
				var he *wire.HTTPError
				require.ErrorAs(t, err, &he)
				assert.Equal(t, http.MethodPost, he.Method)
				assert.Equal(t, srv.URL+strings.TrimSuffix(tt.base, "/")+"/v1beta/models/gemini-2.5-flash:"+method, he.URL,
					"no query: the stream's alt=sse is dropped with whatever else a query holds")
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
				assert.Empty(t, pe.Type, "the HTTP status line is no google.rpc status")
				assert.Empty(t, pe.Message, "the body was no error message")
				var ae genai.APIError
				require.ErrorAs(t, err, &ae, "the SDK's error is still reachable")
			})
		}
	}
}

// TestHTTPErrorKeepsSecretsOut has a server echo the request, key
// included, in its error body.
func TestHTTPErrorKeepsSecretsOut(t *testing.T) {
	const key = "AIzaSyTest-0123456789abcdefghij"
	for _, tt := range []struct {
		status int
		kind   error
	}{{http.StatusForbidden, providers.ErrAuth}, {http.StatusBadGateway, nil}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
			for k, v := range r.Header {
				fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ","))
			}
			w.WriteHeader(tt.status)
			_, _ = w.Write([]byte(b.String()))
		}))
		t.Cleanup(srv.Close)
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			err := call(t, false, Config{BaseURL: srv.URL, APIKey: key, HTTPClient: srv.Client()})
			require.Error(t, err)
			assert.NotContains(t, err.Error(), key)
			assert.Contains(t, err.Error(), "[REDACTED]", "the echoed key was there to scrub")
			var pe *providers.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.status, pe.StatusCode)
		})
	}
}

// TestConcurrentCallsNameTheirOwnRequests checks that each call's error
// names its own request when several calls on one HTTP client are in
// flight together: the server answers none until all have arrived.
func TestConcurrentCallsNameTheirOwnRequests(t *testing.T) {
	const n = 8
	var arrived sync.WaitGroup
	arrived.Add(n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		arrived.Wait()
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	hc := srv.Client()
	urls := make([]string, n)
	var wg sync.WaitGroup
	for i := range urls {
		wg.Go(func() {
			m := mustNew(t, Config{BaseURL: srv.URL, APIKey: "test-key", HTTPClient: hc, MaxRetries: -1,
				Backend: genai.BackendGeminiAPI, Model: fmt.Sprintf("model-%d", i)})
			_, err := m.Generate(context.Background(), replay.WeatherRequest())
			var he *wire.HTTPError
			if assert.ErrorAs(t, err, &he) {
				urls[i] = he.URL
			}
		})
	}
	wg.Wait()
	for i, u := range urls {
		assert.Equal(t, fmt.Sprintf("%s/v1beta/models/model-%d:generateContent", srv.URL, i), u)
	}
}

// TestSDKMadeClientRecords checks that without Config.HTTPClient, the
// client the SDK makes records the exchanges too.
func TestSDKMadeClientRecords(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	err := call(t, false, Config{BaseURL: srv.URL + "/v1beta", APIKey: "test-key"})
	var he *wire.HTTPError
	require.ErrorAs(t, err, &he)
	assert.NotEmpty(t, he.Hint)
}

// TestCallerClientIsLeftAlone checks that the caller's HTTP client keeps
// its own transport.
func TestCallerClientIsLeftAlone(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	hc := srv.Client()
	before := hc.Transport
	_ = call(t, false, Config{BaseURL: srv.URL, APIKey: "test-key", HTTPClient: hc})
	assert.Same(t, before, hc.Transport)
}
