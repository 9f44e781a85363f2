package mcp_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/mcp"
)

// fakeAuthServer is an OAuth authorization server with one registered
// client, enough for the authorization-code flow with PKCE.
type fakeAuthServer struct {
	*httptest.Server
	token string
	mu    sync.Mutex
	codes map[string]string // code → its PKCE challenge
}

func newFakeAuthServer(t *testing.T, token string) *fakeAuthServer {
	s := &fakeAuthServer{token: token, codes: map[string]string{}}
	mux := http.NewServeMux()
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&oauthex.AuthServerMeta{
			Issuer: s.URL, AuthorizationEndpoint: s.URL + "/authorize", TokenEndpoint: s.URL + "/token",
			ResponseTypesSupported: []string{"code"}, CodeChallengeMethodsSupported: []string{"S256"},
			TokenEndpointAuthMethodsSupported:          []string{"client_secret_post", "client_secret_basic"},
			AuthorizationResponseIssParameterSupported: true,
		})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != "toolloop" || q.Get("code_challenge") == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		code := rand.Text()
		s.mu.Lock()
		s.codes[code] = q.Get("code_challenge")
		s.mu.Unlock()
		http.Redirect(w, r, fmt.Sprintf("%s?code=%s&state=%s&iss=%s", q.Get("redirect_uri"), code,
			url.QueryEscape(q.Get("state")), url.QueryEscape(s.URL)), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		challenge, ok := s.codes[r.Form.Get("code")]
		delete(s.codes, r.Form.Get("code"))
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": s.token, "token_type": "Bearer", "expires_in": 3600})
	})
	return s
}

// TestOAuthAuthorizationCodeFlow runs the SDK's authorization-code
// handler against a protected server: the first request is refused, the
// handler finds the authorization server through the protected resource
// metadata, the "user" authorizes, and the request goes through.
func TestOAuthAuthorizationCodeFlow(t *testing.T) {
	t.Parallel()
	const token = "tok-flow-5d1c7e9a3b2f4e6d8c0a1b3c5d7e9f1a"
	as := newFakeAuthServer(t, token)

	srv := sdk.NewServer(&sdk.Implementation{Name: "guarded", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hi"}}}, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: rs.URL + "/mcp", AuthorizationServers: []string{as.URL},
	}))
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rs.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})

	var authorizations int
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		RedirectURL: "http://localhost:1/callback",
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: "toolloop",
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "s3cret"}},
		// The user's browser: follow the authorization URL and read the
		// code from where the server sends it.
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			authorizations++
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
			if err != nil {
				return nil, err
			}
			resp, err := c.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			loc, err := resp.Location()
			if err != nil {
				return nil, err
			}
			q := loc.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	require.NoError(t, err)

	logs := &logBuffer{}
	src := newSource(t, "guarded", mcp.ServerConfig{URL: rs.URL + "/mcp", OAuth: h}, mcp.Options{}, logs)
	ctx := testContext(t)
	res := callTool(ctx, t, src, "guarded__hello", `{}`)
	require.False(t, res.IsError(), res.Text())
	assert.Equal(t, "hi", res.Text())
	assert.Equal(t, 1, authorizations)
	assert.NotContains(t, logs.String(), token)
}
