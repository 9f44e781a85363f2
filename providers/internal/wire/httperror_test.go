package wire

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/providers"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

func TestRedactURL(t *testing.T) {
	tests := map[string]string{
		"https://api.example.com/v1/chat/completions":                               "https://api.example.com/v1/chat/completions",
		"https://user:hunter2hunter2@proxy.example.com/v1/chat/completions":         "https://proxy.example.com/v1/chat/completions",
		"https://example.com/v1beta/models/m:generateContent?key=AIzaSyDsecret123":  "https://example.com/v1beta/models/m:generateContent",
		"https://example.com/openai/deployments/d/chat/completions?api-version=1#x": "https://example.com/openai/deployments/d/chat/completions",
		"http://localhost:11434/chat/completions?":                                  "http://localhost:11434/chat/completions",
	}
	for in, want := range tests {
		assert.Equal(t, want, RedactURL(mustURL(t, in)), in)
	}
}

func TestSecrets(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "https://me:urlpassword1@example.com/v1/x?key=querysecret1&alt=sse", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-bearer-secret")
	req.Header.Set("X-Api-Key", "anthropic-secret")
	req.Header.Set("X-Goog-Api-Key", "gemini-secret1")
	req.Header.Set("Cf-Aig-Authorization", "Bearer gateway-token")
	req.Header.Set("Api-Key", "short") // too short to scrub
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "toolloop-test-agent")
	got := Secrets(req)
	for _, want := range []string{"Bearer sk-bearer-secret", "sk-bearer-secret", "anthropic-secret", "gemini-secret1",
		"gateway-token", "urlpassword1", "querysecret1"} {
		assert.Contains(t, got, want)
	}
	for _, not := range []string{"short", "application/json", "toolloop-test-agent", "sse"} {
		assert.NotContains(t, got, not)
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 4*MaxExcerpt)
	tests := []struct {
		name    string
		body    string
		secrets []string
		want    string
	}{
		{"empty", "", nil, ""},
		{"plain", "404 page not found\n", nil, "404 page not found"},
		{"whitespace collapsed", "<html>\n  <body>\n\t<h1>Not Found</h1>\r\n</body></html>", nil, "<html> <body> <h1>Not Found</h1> </body></html>"},
		{"terminal escapes and invalid UTF-8 dropped", "bad\x1b[31m red\x1b[0m\xff\xfe gateway\x07", nil, "bad[31m red[0m gateway"},
		{"secrets scrubbed", `{"error":"invalid key sk-bearer-secret"}`, []string{"sk-bearer-secret"}, `{"error":"invalid key [REDACTED]"}`},
		{"cut on a character boundary", long, nil, strings.Repeat("é", MaxExcerpt/2) + "…"},
		{"window cut, excerpt short", strings.Repeat(" ", excerptWindow) + "tail", nil, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Excerpt([]byte(tt.body), tt.secrets)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

// TestExcerptNeverShowsPartOfASecret puts a secret across the end of the
// window Excerpt reads, after enough whitespace for the window to fit the
// excerpt once collapsed.
func TestExcerptNeverShowsPartOfASecret(t *testing.T) {
	secret := "sk-proj-0123456789abcdefghij"
	for cut := 4; cut < len(secret); cut++ {
		body := strings.Repeat(" ", excerptWindow-cut) + secret + " and more"
		got := Excerpt([]byte(body), []string{secret})
		assert.NotContains(t, got, secret[:4], "cut %d: %q", cut, got)
		assert.LessOrEqual(t, len(got), MaxExcerpt+len(" …"))
	}
}

func TestMissingVersion(t *testing.T) {
	eps := []string{"/chat/completions", "/responses"}
	tests := map[string]string{
		"http://localhost:11434/chat/completions":            `did you mean BaseURL "http://localhost:11434/v1"?`,
		"https://openrouter.ai/api/chat/completions":         `did you mean BaseURL "https://openrouter.ai/api/v1"?`,
		"https://u:p@example.com/responses?key=secret12345":  `did you mean BaseURL "https://example.com/v1"?`,
		"http://localhost:11434/v1/chat/completions":         "",
		"https://example.com/v1beta/openai/chat/completions": "",
		"https://example.com/api/paas/v4/chat/completions":   "",
		"https://example.com/some/other/path":                "",
	}
	for in, want := range tests {
		assert.Equal(t, want, MissingVersion(mustURL(t, in), eps...), in)
	}
}

func TestExtraVersion(t *testing.T) {
	anthropic := regexp.MustCompile(`^(.*)/v1/messages(?:/count_tokens)?$`)
	gemini := regexp.MustCompile(`^(.*?)/v\d+[a-z0-9]*/(?:models|tunedModels|projects|publishers)/`)
	tests := []struct {
		re   *regexp.Regexp
		url  string
		want string
	}{
		{anthropic, "https://api.anthropic.com/v1/messages", ""},
		{anthropic, "https://proxy.example.com/v1/v1/messages", `did you mean BaseURL "https://proxy.example.com/"?`},
		{anthropic, "https://proxy.example.com/anthropic/v1/v1/messages", `did you mean BaseURL "https://proxy.example.com/anthropic/"?`},
		{anthropic, "https://proxy.example.com/anthropic/v1/messages", ""},
		{gemini, "https://example.com/v1beta/models/gemini-2.5-flash:generateContent", ""},
		{gemini, "https://example.com/v1beta/v1beta/models/gemini-2.5-flash:generateContent", `did you mean BaseURL "https://example.com/"?`},
		{gemini, "https://example.com/gw/v1/v1beta/models/m:streamGenerateContent?alt=sse", `did you mean BaseURL "https://example.com/gw/"?`},
		{gemini, "https://example.com/v1/v1beta1/projects/p/locations/l/publishers/google/models/m:generateContent", `did you mean BaseURL "https://example.com/"?`},
		{gemini, "https://example.com/other", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ExtraVersion(mustURL(t, tt.url), tt.re), tt.url)
	}
}

func TestDescribe(t *testing.T) {
	cause := errors.New("sdk error")
	req, err := http.NewRequest(http.MethodPost, "http://localhost:11434/chat/completions?key=querysecret1", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-bearer-secret")

	pe := &providers.Error{Provider: "openai", StatusCode: http.StatusNotFound, Message: "no key sk-bearer-secret here", Err: cause}
	err = fmt.Errorf("toolloop: model: %w", Describe(pe, req, []byte("404 page not found"), MissingVersion(req.URL, "/chat/completions")))
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.MethodPost, he.Method)
	assert.Equal(t, "http://localhost:11434/chat/completions", he.URL)
	assert.Empty(t, he.Excerpt, "the message says what the body said")
	assert.Equal(t, `did you mean BaseURL "http://localhost:11434/v1"?`, he.Hint)
	var got *providers.Error
	require.ErrorAs(t, err, &got)
	assert.Same(t, pe, got)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "no key [REDACTED] here", pe.Message)
	assert.NotContains(t, err.Error(), "sk-bearer-secret")
	assert.NotContains(t, err.Error(), "querysecret1")
	assert.Equal(t, `toolloop: model: openai: POST "http://localhost:11434/chat/completions": 404 Not Found: no key [REDACTED] here; did you mean BaseURL "http://localhost:11434/v1"?`, err.Error())

	// The kind still matches through the wrapper.
	limited := &providers.Error{Provider: "anthropic", StatusCode: http.StatusTooManyRequests, Type: "rate_limit_error", Kind: providers.ErrRateLimit}
	err = Describe(limited, req, []byte(`{"type":"error"}`), "")
	assert.ErrorIs(t, err, providers.ErrRateLimit)
	assert.NotErrorIs(t, err, providers.ErrContextLength)
	assert.Equal(t, `anthropic: POST "http://localhost:11434/chat/completions": 429 Too Many Requests (rate_limit_error): {"type":"error"}`, err.Error())

	// An error event inside a stream (status 200) and an error without
	// its request stay as they are.
	inStream := &providers.Error{Provider: "openai", StatusCode: http.StatusOK, Message: "boom"}
	assert.Same(t, inStream, Describe(inStream, req, nil, "").(*providers.Error))
	assert.Same(t, pe, Describe(pe, nil, nil, "").(*providers.Error))
}

func TestHTTPErrorBoundsTheMessage(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "https://example.com/v1/chat/completions", nil)
	require.NoError(t, err)
	pe := &providers.Error{Provider: "openai", StatusCode: http.StatusBadRequest, Message: strings.Repeat("x", 10*MaxExcerpt)}
	msg := Describe(pe, req, nil, "").Error()
	assert.Less(t, len(msg), 2*MaxExcerpt)
	assert.True(t, strings.HasSuffix(msg, "…"))
}

func TestResponseBodyPutsTheBodyBack(t *testing.T) {
	body := strings.Repeat("0123456789", excerptWindow)
	res := &http.Response{Body: io.NopCloser(strings.NewReader(body))}
	head := ResponseBody(res)
	assert.Len(t, head, excerptWindow)
	rest, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, body, string(rest))
	require.NoError(t, res.Body.Close())
	assert.Nil(t, ResponseBody(nil))
	assert.Nil(t, ResponseBody(&http.Response{}))
}
