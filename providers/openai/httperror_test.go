package openai

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// callModel makes one call of the chosen API, streaming or not, and
// returns its error.
func callModel(t *testing.T, api string, stream bool, cfg Config) error {
	t.Helper()
	cfg.MaxRetries = -1
	ctx := context.Background()
	var seq func(yield func(toolloop.Chunk, error) bool)
	switch {
	case api == "chat" && !stream:
		_, err := mustNew(t, cfg).Generate(ctx, replay.WeatherRequest())
		return err
	case api == "chat":
		seq = mustNew(t, cfg).Stream(ctx, replay.WeatherRequest())
	case !stream:
		_, err := mustNewResponses(t, cfg).Generate(ctx, replay.WeatherRequest())
		return err
	default:
		seq = mustNewResponses(t, cfg).Stream(ctx, replay.WeatherRequest())
	}
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	t.Fatal("the call succeeded")
	return nil
}

// TestHTTPErrorNamesTheRequest checks that an error response names the
// method and URL, and that a 404 from a base URL without its version
// suggests the base URL with /v1.
func TestHTTPErrorNamesTheRequest(t *testing.T) {
	notFound := http.NotFoundHandler()
	modelMissing := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"model \"llama3.9\" not found, try pulling it first"}`))
	})
	tests := []struct {
		name     string
		handler  http.Handler
		base     string // appended to the server's URL
		hintBase string // "" for no hint
		excerpt  string
		message  string
	}{
		{"no version", notFound, "", "/v1", "404 page not found", ""},
		{"no version under a prefix", notFound, "/api/", "/api/v1", "404 page not found", ""},
		{"with /v1, the model is missing", modelMissing, "/v1", "", "", `model "llama3.9" not found, try pulling it first`},
		{"another version", notFound, "/v1beta/openai", "", "404 page not found", ""},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(tt.handler)
		t.Cleanup(srv.Close)
		for _, api := range []string{"chat", "responses"} {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", tt.name, api, stream), func(t *testing.T) {
					err := callModel(t, api, stream, Config{BaseURL: srv.URL + tt.base, APIKey: "test-key", HTTPClient: srv.Client()})
					endpoint := "/chat/completions"
					if api == "responses" {
						endpoint = "/responses"
					}
					var he *wire.HTTPError
					require.ErrorAs(t, err, &he)
					assert.Equal(t, http.MethodPost, he.Method)
					assert.Equal(t, srv.URL+strings.TrimSuffix(tt.base, "/")+endpoint, he.URL)
					assert.Equal(t, tt.excerpt, he.Excerpt)
					if tt.hintBase == "" {
						assert.Empty(t, he.Hint)
					} else {
						assert.Equal(t, fmt.Sprintf("did you mean BaseURL %q?", srv.URL+tt.hintBase), he.Hint)
					}
					assert.Contains(t, err.Error(), fmt.Sprintf("POST %q", he.URL))
					var pe *providers.Error
					require.ErrorAs(t, err, &pe)
					assert.Equal(t, http.StatusNotFound, pe.StatusCode)
					assert.Equal(t, tt.message, pe.Message)
					// The public error carries the request too.
					assert.Equal(t, he.Method, pe.Method)
					assert.Equal(t, he.URL, pe.URL)
					assert.Equal(t, he.Hint, pe.Hint)
					assert.Nil(t, pe.Kind)
					var sdkErr *oai.Error
					require.ErrorAs(t, err, &sdkErr, "the SDK's error is still reachable")
					assert.Equal(t, http.StatusNotFound, sdkErr.StatusCode)
				})
			}
		}
	}
}

// echoHandler answers with status, echoing what the request carried
// (its headers, URL and credentials) in the body, as a careless or
// hostile server might.
func echoHandler(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.String())
		for k, v := range r.Header {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ","))
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(b.String()))
	}
}

func TestHTTPErrorKeepsSecretsOut(t *testing.T) {
	const key = "sk-proj-test-0123456789abcdef"
	const queryKey = "query-secret-0123456789"
	const password = "proxy-password-0123"
	for _, status := range []int{http.StatusUnauthorized, http.StatusBadGateway} {
		srv := httptest.NewServer(echoHandler(status))
		t.Cleanup(srv.Close)
		base := strings.Replace(srv.URL, "http://", "http://user:"+password+"@", 1) + "/v1?key=" + queryKey
		for _, api := range []string{"chat", "responses"} {
			t.Run(fmt.Sprintf("%d/%s", status, api), func(t *testing.T) {
				err := callModel(t, api, false, Config{BaseURL: base, APIKey: key, HTTPClient: srv.Client(),
					RequestOptions: nil})
				require.Error(t, err)
				msg := err.Error()
				for _, secret := range []string{key, queryKey, password} {
					assert.NotContains(t, msg, secret)
				}
				assert.Contains(t, msg, "[REDACTED]", "the echoed key was there to scrub")
				var pe *providers.Error
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, status, pe.StatusCode)
				if status == http.StatusUnauthorized {
					assert.ErrorIs(t, err, providers.ErrAuth)
				}
			})
		}
	}
}

func TestHTTPErrorBoundsTheBody(t *testing.T) {
	page := "<html><body>" + strings.Repeat("<p>gateway error</p>\n", 50000) + "</body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	err := callModel(t, "chat", false, Config{BaseURL: srv.URL + "/v1", APIKey: "test-key", HTTPClient: srv.Client()})
	var he *wire.HTTPError
	require.ErrorAs(t, err, &he)
	assert.True(t, strings.HasPrefix(he.Excerpt, "<html><body><p>gateway error</p> <p>gateway error</p>"), he.Excerpt)
	assert.LessOrEqual(t, len(he.Excerpt), wire.MaxExcerpt+len("…"))
	assert.Less(t, len(err.Error()), 2*wire.MaxExcerpt)
	var sdkErr *oai.Error
	require.ErrorAs(t, err, &sdkErr)
	body, rerr := io.ReadAll(sdkErr.Response.Body)
	require.NoError(t, rerr)
	assert.True(t, string(body) == page, "the SDK's error keeps the whole body")
}
