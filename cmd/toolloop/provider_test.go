package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenAICompatible runs against a fake OpenAI-compatible server on
// loopback: the answer streams through, and the OPENAI_API_KEY of the
// environment is never sent to the URL given.
func TestOpenAICompatible(t *testing.T) {
	const key = "sk-proj-Zq9XvW3u5T7r1P0o2N4m6L8k"
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello "},"finish_reason":null}]}`,
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"from the server."},"finish_reason":null}]}`,
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	t.Setenv("OPENAI_API_KEY", key) // where the SDK would look for one
	te := newTestEnv(t, "")
	te.vars["OPENAI_API_KEY"] = key
	code := te.run(t, "run", "-provider", "openai-compatible", "-base-url", srv.URL+"/v1", "-model", "m", "hi")
	require.Equal(t, exitOK, code, te.errOut.String())
	assert.Contains(t, te.out.String(), "Hello from the server.")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, auths)
	for _, a := range auths {
		assert.NotContains(t, a, key)
	}
}
