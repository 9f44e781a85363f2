package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// liveAnswer is one answer of /data.
type liveAnswer struct {
	code   int
	next   string
	events int // the data's count of events, for a 200
	turns  int
}

// getData asks the server for url (a path) and reads the answer.
func getData(t *testing.T, client *http.Client, addr, url string) liveAnswer {
	t.Helper()
	a, err := fetchData(client, addr, url)
	require.NoError(t, err)
	return a
}

// fetchData is getData for another goroutine than the test's.
func fetchData(client *http.Client, addr, url string) (liveAnswer, error) {
	resp, err := client.Get("http://" + addr + url)
	if err != nil {
		return liveAnswer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return liveAnswer{}, err
	}
	a := liveAnswer{code: resp.StatusCode, next: resp.Header.Get("Toolloop-Next")}
	if a.code == http.StatusOK {
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			return a, fmt.Errorf("data of type %q", ct)
		}
		var d struct{ Events, Turns int }
		if err := json.Unmarshal(body, &d); err != nil {
			return a, fmt.Errorf("the data: %w: %s", err, body)
		}
		a.events, a.turns = d.Events, d.Turns
	}
	return a, nil
}

// asked is the answer of a request made in another goroutine.
type asked struct {
	a   liveAnswer
	err error
}

// ask makes a request in another goroutine and waits until it waits
// in the server for a change.
func ask(t *testing.T, client *http.Client, addr, url string) <-chan asked {
	t.Helper()
	n := dataWaiting.Load()
	got := make(chan asked, 1)
	go func() {
		a, err := fetchData(client, addr, url)
		got <- asked{a, err}
	}()
	require.Eventually(t, func() bool { return dataWaiting.Load() > n }, 10*time.Second, time.Millisecond,
		"the request never waited for a change")
	return got
}

// answered waits for the answer of ask.
func answered(t *testing.T, got <-chan asked) liveAnswer {
	t.Helper()
	select {
	case r := <-got:
		require.NoError(t, r.err)
		return r.a
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting request was not answered")
		return liveAnswer{}
	}
}

// serving runs toolloop view LOG -serve on a free port, and waits until
// it answers. stop sends Ctrl-C and returns the exit code.
func serving(t *testing.T, log string) (addr string, stop func() int) {
	t.Helper()
	addr = freeAddr(t)
	te := newTestEnv(t, "")
	te.stderr = &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), te.env, []string{"view", log, "-serve", addr}) }()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the server never answered")
	stopped := false
	stop = func() int {
		stopped = true
		te.ints <- os.Interrupt
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not stop on Ctrl-C")
			return -1
		}
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return addr, stop
}

// TestViewServeFollows: the data the live page asks for follows a log
// written line by line: each new line is in the next answer, a torn last
// line (an event half written) is not, and breaks nothing, and a request
// that waits for a change is answered when the line comes.
func TestViewServeFollows(t *testing.T) {
	_, whole := recordRun(t)
	raw, err := os.ReadFile(whole)
	require.NoError(t, err)
	lines := bytes.SplitAfter(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	require.Greater(t, len(lines), 4, "the recorded run has events to add")
	log := filepath.Join(t.TempDir(), "growing.jsonl")
	require.NoError(t, os.WriteFile(log, lines[0], 0o600))
	appendLog := func(b []byte) {
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.Write(b)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}

	addr, stop := serving(t, log)
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()

	// The page is live: it names the data to ask for, by the log's version.
	resp, err := client.Get("http://" + addr + "/")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(page), `data-live="/data?after=`)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "connect-src 'self'")

	a := getData(t, client, addr, "/data")
	require.Equal(t, http.StatusOK, a.code)
	require.Equal(t, 1, a.events)
	require.NotEmpty(t, a.next)

	for i, line := range lines[1:] {
		want := i + 2
		// Half the line first, as a writer caught mid-event leaves it.
		half := len(line) / 2
		appendLog(line[:half])
		a = getData(t, client, addr, a.next)
		require.Equal(t, http.StatusOK, a.code, "line %d torn: the file changed", want)
		assert.Equal(t, want-1, a.events, "line %d torn: not an event yet", want)
		require.NotEmpty(t, a.next)

		// The rest of it while a request waits for it.
		got := ask(t, client, addr, a.next)
		appendLog(line[half:])
		a = answered(t, got)
		require.Equal(t, http.StatusOK, a.code)
		assert.Equal(t, want, a.events, "line %d whole", want)
	}
	assert.Equal(t, 2, a.turns, "the whole run's turns")

	// A request for another host's name is refused, whatever the address
	// it reached (DNS rebinding).
	req, err := http.NewRequest("GET", "http://"+addr+"/data", nil)
	require.NoError(t, err)
	req.Host = "attacker.example:" + strings.Split(addr, ":")[1]
	resp, err = client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	// Stopping answers the waiting request at once, saying it is the last.
	got := ask(t, client, addr, a.next)
	assert.Equal(t, exitOK, stop())
	last := answered(t, got)
	assert.Equal(t, http.StatusNoContent, last.code, "nothing changed")
	assert.Empty(t, last.next, "no next URL once the server stops")
}

// TestViewServeStops: Ctrl-C stops the server while a page's request
// waits for a change, and leaves no goroutine behind.
func TestViewServeStops(t *testing.T) {
	_, log := recordRun(t)
	client := &http.Client{Timeout: 30 * time.Second}
	before := goleak.IgnoreCurrent()
	addr, stop := serving(t, log)
	a := getData(t, client, addr, "/data")
	require.Equal(t, http.StatusOK, a.code)
	got := ask(t, client, addr, a.next)
	require.Equal(t, exitOK, stop())
	last := answered(t, got)
	assert.Equal(t, http.StatusNoContent, last.code, "nothing changed")
	assert.Empty(t, last.next, "the server follows the log no more")
	client.CloseIdleConnections()
	goleak.VerifyNone(t, before)
}

// TestLivePageWaitsForEvents: the page of a log that has no events yet
// (a run's, just started) is served once it has, and a request for it
// still waiting when the server stops ends then.
func TestLivePageWaitsForEvents(t *testing.T) {
	before := goleak.IgnoreCurrent()
	_, whole := recordRun(t)
	raw, err := os.ReadFile(whole)
	require.NoError(t, err)
	var path atomic.Value
	path.Store("")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	te := newTestEnv(t, "")
	l := startLive(te.env, ln, func() string { return path.Load().(string) })
	addr := ln.Addr().String()
	client := &http.Client{Timeout: 30 * time.Second}

	type page struct {
		code int
		body string
		err  error
	}
	get := func() <-chan page {
		got := make(chan page, 1)
		go func() {
			resp, err := client.Get("http://" + addr + "/")
			if err != nil {
				got <- page{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			got <- page{resp.StatusCode, string(b), err}
		}()
		return got
	}
	wait := func(got <-chan page) page {
		t.Helper()
		select {
		case p := <-got:
			require.NoError(t, p.err)
			return p
		case <-time.After(20 * time.Second):
			t.Fatal("no page")
			return page{}
		}
	}

	// No file yet, then an empty one, then one with events.
	first := get()
	log := filepath.Join(t.TempDir(), "run.jsonl")
	path.Store(log)
	require.NoError(t, os.WriteFile(log, nil, 0o600))
	select {
	case p := <-first:
		t.Fatalf("a page of no events: %+v", p)
	case <-time.After(3 * followEvery):
	}
	require.NoError(t, os.WriteFile(log, raw, 0o600))
	p := wait(first)
	assert.Equal(t, http.StatusOK, p.code)
	assert.Contains(t, p.body, "data-live=")

	// A page still waiting when the server stops ends with it.
	path.Store(filepath.Join(t.TempDir(), "none.jsonl"))
	second := get()
	require.Eventually(t, func() bool { return l.pageWaiting.Load() > 0 }, 10*time.Second, time.Millisecond)
	require.NoError(t, l.stop(time.Second))
	p = wait(second)
	assert.Equal(t, http.StatusServiceUnavailable, p.code)
	client.CloseIdleConnections()
	goleak.VerifyNone(t, before)
}

// TestRunView: toolloop run -view serves the run's live page while the
// run goes on, prints its URL, opens it in $BROWSER, and stops serving
// when the run ends.
func TestRunView(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the script runs a POSIX shell command")
	}
	te := newTestEnv(t, "")
	errOut := &syncBuffer{}
	te.stderr = errOut
	opened := filepath.Join(t.TempDir(), "opened")
	browser := writeFile(t, t.TempDir(), "browser", "#!/bin/sh\necho \"$2\" > "+opened+"\n")
	require.NoError(t, os.Chmod(browser, 0o755))
	te.vars["BROWSER"] = browser + " --new-window %s:firefox"
	script := writeFile(t, t.TempDir(), "s.json", `[
 {"role":"assistant","tool_calls":[{"id":"c1","name":"exec_shell","arguments":{"command":"touch started; while [ ! -e go ]; do sleep 0.05; done"}}]},
 {"role":"assistant","content":[{"type":"text","text":"Done."}]}]`)
	code := make(chan int, 1)
	go func() { code <- te.run(t, "run", "-yes", "-view", "-script", script, "wait for go") }()

	url := regexp.MustCompile(`toolloop: watching at (http://127\.0\.0\.1:\d+/)\n`)
	eventually(t, errOut, "toolloop: watching at ")
	m := url.FindStringSubmatch(errOut.String())
	require.NotNil(t, m, "the URL, on loopback: %s", errOut)
	require.Eventually(t, func() bool { b, err := os.ReadFile(opened); return err == nil && string(b) == m[1]+"\n" },
		10*time.Second, 5*time.Millisecond, "$BROWSER was not run with the URL")

	// While the call runs: the page, and data that has the call.
	waitFile(t, filepath.Join(te.dir, "started"))
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(m[1])
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
	assert.Contains(t, string(page), `data-live="/data?after=`)
	addr := strings.TrimSuffix(strings.TrimPrefix(m[1], "http://"), "/")
	var a liveAnswer
	require.Eventually(t, func() bool {
		a = getData(t, client, addr, "/data")
		return a.code == http.StatusOK && a.turns == 1
	}, 10*time.Second, 10*time.Millisecond, "the data has the run's first turn")
	select {
	case c := <-code:
		t.Fatalf("the run ended (%d) before it was let go", c)
	default:
	}

	// A page following the data, as live.js does, gets the run's end as
	// its last answer.
	got := ask(t, client, addr, a.next)
	writeFile(t, te.dir, "go", "")
	turns := 0
	for a = answered(t, got); ; a = getData(t, client, addr, a.next) {
		if a.code == http.StatusOK {
			turns = a.turns
		}
		if a.next == "" {
			break
		}
	}
	require.Equal(t, exitOK, <-code, errOut.String())
	assert.Equal(t, 2, turns, "the data of the run's end")
	_, err = client.Get(m[1])
	assert.Error(t, err, "the server stopped with the run")
}
