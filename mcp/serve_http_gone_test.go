package mcp_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeHTTPClientGoneCancelsCall: a client whose connection closes
// while its call runs over the stateful HTTP handler has its call
// cancelled (the tool sees its context end), as over stdio; nobody could
// get its result, since the stream cannot be resumed without an event
// store. A call whose client stays is not cancelled.
func TestServeHTTPClientGoneCancelsCall(t *testing.T) {
	f := newServeFixture()
	srv := newServe(t, f, nil)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	init := rawDo(t, http.MethodPost, hs.URL, nil, initializeBody)
	require.Equal(t, http.StatusOK, init.status, init.body)
	h := map[string]string{"Mcp-Session-Id": init.header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25",
		"Toolloop-Request": "a client's own value, which the handler drops"}
	r := rawDo(t, http.MethodPost, hs.URL, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, r.status, r.body)

	// The call reports progress (so its stream is open and read), then
	// waits for its context; the client reads the first event and goes.
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":1,"wait":true},"_meta":{"progressToken":"p"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err, "the call's stream opened")
	assert.NotEmpty(t, line)
	require.Equal(t, int64(0), f.canceled.Load(), "the call runs while its client is there")
	cancel()
	_ = resp.Body.Close()
	require.Eventually(t, func() bool { return f.canceled.Load() == 1 }, 10*time.Second, 10*time.Millisecond,
		"the call was cancelled when its client went away")

	// The session is still usable, and a call whose client stays ends
	// normally.
	r = rawDo(t, http.MethodPost, hs.URL, h, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Contains(t, string(r.jsonrpc.Result), "still here")
	assert.Equal(t, int64(1), f.canceled.Load())
}
