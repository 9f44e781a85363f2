package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headless starts headless Chromium ($CHROME_PATH, else /usr/bin/chromium)
// for the test, and stops it and waits for it when the test ends. Without
// one the test skips, unless TOOLLOOP_BROWSER_REQUIRED=1 (as CI sets it).
// The view package's browser tests have the fuller kit; this one is for
// the page and the command's server together.
func headless(t *testing.T) context.Context {
	t.Helper()
	p := os.Getenv("CHROME_PATH")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("TOOLLOOP_BROWSER_REQUIRED") == "1" {
			t.Fatalf("no browser at %s (set CHROME_PATH): %v", p, err)
		}
		t.Skipf("no browser at %s", p)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(p), chromedp.Headless, chromedp.Flag("disable-gpu", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bctx, 20*time.Second)
		defer cancel()
		_ = chromedp.Cancel(ctx)
		cancelBrowser()
		cancelAlloc()
	})
	require.NoError(t, chromedp.Do(bctx))
	return bctx
}

// evalJS evaluates a JavaScript expression in the tab.
func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluating %s", expr)
	return v
}

// untilJS waits for cond to hold in the tab, or fails after a deadline.
func untilJS(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !evalJS[bool](t, ctx, cond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", cond)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestViewServeInBrowser: the page toolloop view -serve serves follows its
// log in a browser: the command's server and the page's live script speak
// the same protocol, under the page's policy, and Ctrl-C ends following.
func TestViewServeInBrowser(t *testing.T) {
	bctx := headless(t)
	_, whole := recordRun(t)
	raw, err := os.ReadFile(whole)
	require.NoError(t, err)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	// Cut before the last model request: the rest is the last turn.
	cut := -1
	for i, l := range lines {
		var e struct{ Type string }
		if json.Unmarshal(l, &e) == nil && e.Type == "model.request" {
			cut = i
		}
	}
	require.Positive(t, cut)
	log := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(log, bytes.Join(lines[:cut], nil), 0o600))

	addr, stop := serving(t, log)
	tctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	var mu sync.Mutex
	var errs []string
	require.NoError(t, chromedp.Listen(tctx, func(ev any) {
		if ev, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			errs = append(errs, ev.ExceptionDetails.Text)
			mu.Unlock()
		}
	}))
	ctx, cancelTimeout := context.WithTimeout(tctx, 60*time.Second)
	defer cancelTimeout()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/"),
		chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"], body[data-error]`))))
	require.Empty(t, evalJS[string](t, ctx, `document.body.dataset.error || ""`))
	assert.Equal(t, "following", evalJS[string](t, ctx, `document.getElementById('live').dataset.state`))
	// See each update the page is given, and still let the page have it.
	require.True(t, evalJS[bool](t, ctx, `(v => { window.updates = []; const own = v.update;
		v.update = function (d) { window.updates.push(d.turns); if (own) return own.apply(this, arguments) }; return true })(window.toolloopView)`))

	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(bytes.Join(lines[cut:], nil))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	untilJS(t, ctx, `window.updates.includes(2)`)

	st := time.Now()
	assert.Equal(t, exitOK, stop())
	// A browser keeps connections open, used or not: stopping does not
	// wait for them (http.Server.Shutdown waits 5 s for an unused one).
	assert.Less(t, time.Since(st), 3*time.Second, "stopping waited for the browser")
	untilJS(t, ctx, `document.getElementById('live').dataset.state === "ended"`)
	assert.Empty(t, evalJS[string](t, ctx, `document.body.dataset.liveError || ""`))
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, errs, "the page threw")
}
