package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/toolloop/toolloop/mcp"
)

const goodToken = "tok-7f3a9c1e5b2d4f60a8e1c3b5d7f9a1c3"

// bearerServer is a streamable HTTP server that wants a bearer token.
func bearerServer(t *testing.T, token string, seen *sync.Map) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "guarded", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hi"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		seen.Store(got, true)
		if got != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestOAuthTokenSent(t *testing.T) {
	t.Parallel()
	var seen sync.Map
	url := bearerServer(t, goodToken, &seen)
	logs := &logBuffer{}
	src := newSource(t, "guarded", mcp.ServerConfig{URL: url,
		OAuth: mcp.TokenAuth(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: goodToken, TokenType: "Bearer"}))},
		mcp.Options{}, logs)
	ctx := testContext(t)
	res := callTool(ctx, t, src, "guarded__hello", `{}`)
	require.False(t, res.IsError(), res.Text())
	assert.Equal(t, "hi", res.Text())
	_, ok := seen.Load("Bearer " + goodToken)
	assert.True(t, ok, "the token was not sent")
	assert.NotContains(t, logs.String(), goodToken)
}

func TestOAuthRefused(t *testing.T) {
	t.Parallel()
	var seen sync.Map
	url := bearerServer(t, goodToken, &seen)
	const wrong = "tok-0000111122223333444455556666777788"
	logs := &logBuffer{}
	src := newSource(t, "guarded", mcp.ServerConfig{URL: url,
		OAuth: mcp.TokenAuth(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: wrong}))},
		mcp.Options{}, logs)
	ctx := testContext(t)
	_, err := src.Tools(ctx)
	require.Error(t, err)
	t.Logf("the error: %v", err)
	assert.ErrorIs(t, err, mcp.ErrUnauthorized)
	assert.Contains(t, err.Error(), "401")
	assert.Contains(t, err.Error(), "invalid_token", "the challenge is quoted")
	assert.NotContains(t, err.Error(), wrong)
	assert.NotContains(t, logs.String(), wrong)
	_, ok := seen.Load("Bearer " + wrong)
	assert.True(t, ok, "the token was not sent")
}

// reauth is an OAuth handler whose first token is refused; Authorize
// gets the good one, as an authorization flow would.
type reauth struct {
	authorized atomic.Int32
}

func (h *reauth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if h.authorized.Load() == 0 {
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "expired"}), nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: goodToken}), nil
}

func (h *reauth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	h.authorized.Add(1)
	return nil
}

var _ auth.OAuthHandler = (*reauth)(nil)

func TestOAuthAuthorizeAndRetry(t *testing.T) {
	t.Parallel()
	var seen sync.Map
	url := bearerServer(t, goodToken, &seen)
	h := &reauth{}
	src := newSource(t, "guarded", mcp.ServerConfig{URL: url, OAuth: h}, mcp.Options{}, nil)
	ctx := testContext(t)
	res := callTool(ctx, t, src, "guarded__hello", `{}`)
	require.False(t, res.IsError(), res.Text())
	assert.Equal(t, int32(1), h.authorized.Load(), "Authorize runs once, on the first refusal")
}
