package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineReaderSkipsBanners(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"result":{}}`
	in := strings.Join([]string{
		"Secure MCP Filesystem Server running on stdio",
		"200 OK", // a number first: not a message either
		"null",
		"",
		msg,
		"[INFO] ready", // after the first message: skipped too
		"done",
		msg,
	}, "\n")
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			r := newLineReader(wrap(strings.NewReader(in)), fixed(roomy), log)
			out, err := io.ReadAll(r)
			require.NoError(t, err)
			assert.Equal(t, msg+"\n"+msg+"\n", string(out))
			assert.Equal(t, 5, strings.Count(logs.String(), `"level":"WARN"`), logs.String())
			assert.Contains(t, logs.String(), `"line":"Secure MCP Filesystem Server running on stdio"`)
		})
	}
	t.Run("bounded before the first message", func(t *testing.T) {
		banner := strings.Repeat(strings.Repeat("x", 1000)+"\n", maxBanner/1000+1)
		r := newLineReader(strings.NewReader(banner+msg+"\n"), fixed(roomy), quiet)
		_, err := io.ReadAll(r)
		require.Error(t, err)
		assert.NotErrorIs(t, err, io.EOF)
	})
	t.Run("not bounded after it", func(t *testing.T) {
		noise := strings.Repeat(strings.Repeat("x", 1000)+"\n", 2*maxBanner/1000)
		r := newLineReader(strings.NewReader(msg+"\n"+noise+msg), fixed(roomy), quiet)
		out, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Equal(t, msg+"\n"+msg+"\n", string(out))
	})
}

func TestStderrTail(t *testing.T) {
	w := &lineLog{log: quiet}
	for i := range 30 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	fmt.Fprint(w, "unfinished")
	w.flush()
	got := w.last()
	require.Len(t, got, stderrLines)
	assert.Equal(t, "line 11", got[0])
	assert.Equal(t, "unfinished", got[len(got)-1])

	w = &lineLog{log: quiet}
	long := strings.Repeat("y", 3000)
	for range 3 {
		fmt.Fprintln(w, long)
	}
	assert.Len(t, w.last(), 1, "the tail keeps at most %d bytes", stderrBytes)
	fmt.Fprintln(w, strings.Repeat("z", 10000))
	got = w.last()
	require.Len(t, got, 1)
	assert.Len(t, got[0], stderrBytes)
}

func TestSerialQueue(t *testing.T) {
	var q serial
	require.NoError(t, q.acquire(context.Background()))

	// Waiters are let through in the order they came; one whose context
	// ends gives up its place.
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	gone, leave := context.WithCancel(context.Background())
	queued := func(n int) bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.queue) == n
	}
	for i := range 4 {
		ctx := context.Background()
		if i == 1 {
			ctx = gone
		}
		wg.Go(func() {
			if err := q.acquire(ctx); err != nil {
				assert.ErrorIs(t, err, context.Canceled)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			q.release()
		})
		require.Eventually(t, func() bool { return queued(i + 1) }, 5*time.Second, time.Millisecond)
	}
	leave()
	require.Eventually(t, func() bool { return queued(3) }, 5*time.Second, time.Millisecond)
	q.release()
	wg.Wait()
	assert.Equal(t, []int{0, 2, 3}, order)
	assert.False(t, q.busy)
}

func TestSessionMissing(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   bool
	}{
		{http.StatusNotFound, "session not found", true},
		{http.StatusNotFound, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":1}`, true},
		{http.StatusBadRequest, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":1}`, true},
		{http.StatusBadRequest, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"invalid params"},"id":1}`, false},
		{http.StatusBadRequest, "Bad Request", false},
		{http.StatusInternalServerError, "oops", false},
		{http.StatusOK, "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.status, tt.body), func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Body: io.NopCloser(strings.NewReader(tt.body))}
			assert.Equal(t, tt.want, sessionMissing(resp))
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.body, string(body), "the body is still there to read")
		})
	}
}

// TestObserveOnlyTheCallsOwnRequest: only the call's own request (the
// first POST made for it) can say the call was not processed; a refused
// resumption of its event stream, or its cancellation, cannot.
func TestObserveOnlyTheCallsOwnRequest(t *testing.T) {
	src := &Source{name: "x", logger: quiet}
	tr := &clipTransport{src: src}
	refusedErr := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	request := func(st *callState, method string) *http.Request {
		r, err := http.NewRequestWithContext(withCallState(context.Background(), st), method, "http://127.0.0.1:1/mcp", nil)
		require.NoError(t, err)
		r.Header.Set(sessionIDHeader, "s1")
		return r
	}

	var sent callState
	tr.observe(request(&sent, http.MethodPost), &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil)
	tr.observe(request(&sent, http.MethodGet), nil, refusedErr)
	tr.observe(request(&sent, http.MethodPost), nil, refusedErr)
	assert.False(t, sent.unsent.Load(), "the call's request went through; later ones say nothing of it")

	var refused callState
	tr.observe(request(&refused, http.MethodPost), nil, refusedErr)
	assert.True(t, refused.unsent.Load())

	var forgotten callState
	tr.observe(request(&forgotten, http.MethodPost), &http.Response{StatusCode: http.StatusNotFound, Body: http.NoBody}, nil)
	assert.True(t, forgotten.unsent.Load())
}
