package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/cmd/toolloop/internal/view"
	"github.com/toolloop/toolloop/eventlog"
)

// fakeRender stands in for the viewer: it lists the events' types.
func fakeRender(w io.Writer, events iter.Seq2[toolloop.Event, error], opts view.Options) error {
	fmt.Fprintf(w, "<title>%s</title>\n", opts.Title)
	for e, err := range events {
		if err != nil {
			return err
		}
		fmt.Fprintln(w, e.Type)
	}
	return nil
}

func withRenderer(t *testing.T, r func(io.Writer, iter.Seq2[toolloop.Event, error], view.Options) error) {
	old := renderView
	renderView = r
	t.Cleanup(func() { renderView = old })
}

func TestViewFile(t *testing.T) {
	withRenderer(t, fakeRender)
	_, log := recordRun(t)
	te := newTestEnv(t, "")
	out := filepath.Join(t.TempDir(), "run.html")
	require.Equal(t, exitOK, te.run(t, "view", log, "-o", out), te.errOut.String())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<title>"+log+"</title>")
	assert.Contains(t, string(b), "run.start\n")
	assert.Contains(t, string(b), "run.end\n")

	// By default the page goes next to the log.
	te = newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "view", log))
	assert.FileExists(t, strings.TrimSuffix(log, ".jsonl")+".html")
}

func TestViewErrors(t *testing.T) {
	_, log := recordRun(t)
	withRenderer(t, func(io.Writer, iter.Seq2[toolloop.Event, error], view.Options) error { return errors.New("boom") })
	te := newTestEnv(t, "")
	out := filepath.Join(t.TempDir(), "run.html")
	assert.Equal(t, exitFailed, te.run(t, "view", log, "-o", out))
	assert.Contains(t, te.errOut.String(), "boom")
	assert.NoFileExists(t, out, "no half-written page")

	withRenderer(t, fakeRender)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing log", []string{"view", filepath.Join(t.TempDir(), "none.jsonl")}, "no such log"},
		{"no log", []string{"view"}, "give one log"},
		{"both", []string{"view", log, "-o", "x.html", "-serve", "127.0.0.1:0"}, "do not go together"},
		{"not loopback", []string{"view", log, "-serve", "0.0.0.0:0"}, "only a loopback address"},
		{"not loopback, IPv6", []string{"view", log, "-serve", "[::]:0"}, "only a loopback address"},
		{"not loopback, a name", []string{"view", log, "-serve", "example.com:8080"}, "only a loopback address"},
		{"not loopback, no host", []string{"view", log, "-serve", ":8080"}, "only a loopback address"},
		{"bad address", []string{"view", log, "-serve", "nonsense"}, "-serve nonsense"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t, "")
			assert.Equal(t, exitUsage, te.run(t, tc.args...))
			assert.Contains(t, te.errOut.String(), tc.want)
		})
	}

	withRenderer(t, nil)
	te = newTestEnv(t, "")
	assert.Equal(t, exitFailed, te.run(t, "view", log))
	assert.Contains(t, te.errOut.String(), "no viewer")
}

func TestViewServe(t *testing.T) {
	withRenderer(t, fakeRender)
	_, log := recordRun(t)
	// A free port: listen, note it, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	te := newTestEnv(t, "")
	done := make(chan int)
	go func() { done <- run(context.Background(), te.env, []string{"view", log, "-serve", addr}) }()
	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = http.Get("http://" + addr + "/")
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	assert.Contains(t, string(body), "run.end")

	resp, err = http.Get("http://" + addr + "/other")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	te.ints <- os.Interrupt // Ctrl-C stops the server
	assert.Equal(t, exitOK, <-done)
	http.DefaultClient.CloseIdleConnections()
}

// TestViewRendersTheRealPage runs the subcommand with the viewer it ships
// with: the page is whole, self-contained, and holds the run's calls.
func TestViewRendersTheRealPage(t *testing.T) {
	_, log := recordRun(t)
	te := newTestEnv(t, "")
	out := filepath.Join(t.TempDir(), "run.html")
	require.Equal(t, exitOK, te.run(t, "view", log, "-o", out), te.errOut.String())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	page := string(b)
	assert.True(t, strings.HasPrefix(strings.ToLower(page), "<!doctype html>"), "an HTML page")
	assert.Contains(t, page, "</html>")
	assert.NotContains(t, page, "<script src=", "no external script")
	assert.NotContains(t, page, `<link rel="stylesheet"`, "no external style")
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	calls := 0
	for _, m := range rp.Transcript() {
		for _, c := range m.ToolCalls {
			calls++
			assert.Contains(t, page, c.ID, "the page holds call %s", c.ID)
		}
	}
	require.NotZero(t, calls, "the recorded run makes calls")
}
