package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolloop/toolloop/cmd/toolloop/internal/view"
	"github.com/toolloop/toolloop/eventlog"
)

// The live page of a log that is still being written (toolloop view
// -serve, toolloop run -view): / is the page, rendered afresh, and /data
// its data, which the page's script (the view package's live.js) asks for
// again and again to update itself in place.
//
// /data is a long poll rather than server-sent events. The client asks
// for the data newer than the version it has; the server answers as soon
// as the log changed (or with 204 after longPoll), and the client asks
// again only once it has taken that answer in. So a browser that is slow
// to rebuild a long run's page is never sent data it has no time for:
// changes that come meanwhile are folded into its next answer, and each
// answer is the data itself, so the page never needs a second request to
// catch up. The last answer still reaches a page when the server stops
// (see liveLog.stop), which an event stream could only announce. And it
// is a plain GET that scripts and tests can use.
//
// The log is followed cheaply: a waiting request looks at the file's size
// and modification time every followEvery, and the data is rendered again
// only when they changed, once for every request that waits on them; one
// rendering is kept. A torn last line (an event being written) is not
// read yet, as the view package skips it.

const (
	// longPoll is how long /data waits for a change before answering
	// 204, well inside the timeouts of browsers and proxies.
	longPoll = 25 * time.Second
	// followEvery is how often a waiting request looks at the log.
	followEvery = 100 * time.Millisecond
	// shutdownWait bounds how long stopping waits for the requests
	// under way.
	shutdownWait = 5 * time.Second
)

// dataWaiting counts the requests for data waiting for a change, in
// every server: tests wait on it.
var dataWaiting atomic.Int64

// liveLog serves the live page of one log.
type liveLog struct {
	e *env
	// path returns the log's file, or "" until it is known (a run's log
	// is named after the run's ID at its first event).
	path func() string

	// mu serializes renderings of the data and guards the one kept.
	mu   sync.Mutex
	ver  string
	data []byte

	// ended is closed when the server stops following the log: the
	// requests that wait answer at once, naming no next URL.
	ended     chan struct{}
	endedOnce sync.Once
	// polled: a page asked for data, so stopping lets it have its last
	// answer (see stop).
	polled atomic.Bool
	// pageWaiting counts the requests for the page waiting for events.
	pageWaiting atomic.Int64

	ln   net.Listener
	srv  *http.Server
	errc chan error
	// active counts the requests under way.
	active atomic.Int64
	// cancel ends the requests' base context.
	cancel context.CancelFunc
}

// version names the state of the log's file by its size and modification
// time; "" when there is no file yet.
func version(path string) string {
	if path == "" {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d-%d", fi.Size(), fi.ModTime().UnixNano())
}

// dataURL is the URL of the data newer than version v.
func dataURL(v string) string { return "/data?after=" + url.QueryEscape(v) }

// startLive serves the live page of the log on ln, until stop.
func startLive(e *env, ln net.Listener, path func() string) *liveLog {
	base, cancel := context.WithCancel(context.Background())
	l := &liveLog{e: e, path: path, ended: make(chan struct{}), ln: ln, errc: make(chan error, 1), cancel: cancel}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", l.page)
	mux.HandleFunc("GET /data", l.serveData)
	l.srv = &http.Server{
		Handler: loopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l.active.Add(1)
			defer l.active.Add(-1)
			mux.ServeHTTP(w, r)
		})),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	go func() { l.errc <- l.srv.Serve(ln) }()
	return l
}

// loopbackOnly refuses requests whose Host is not a loopback address or
// localhost: a web page the browser has open elsewhere could otherwise
// point a name of its own at 127.0.0.1 (DNS rebinding) and read the run.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "only served to loopback addresses", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// page serves the page, following the log. Before the log has events (a
// run's, just started) it waits for them.
func (l *liveLog) page(w http.ResponseWriter, r *http.Request) {
	tick := time.NewTicker(followEvery)
	defer tick.Stop()
	var buf bytes.Buffer
	for {
		path := l.path()
		if v := version(path); v != "" {
			opts := view.Options{Title: path, Live: dataURL(v)}
			buf.Reset()
			err := renderFileOpts(&buf, path, opts)
			if err == nil {
				h := w.Header()
				h.Set("Content-Type", "text/html; charset=utf-8")
				h.Set("Content-Security-Policy", view.Policy(opts))
				h.Set("Cache-Control", "no-store")
				h.Set("X-Content-Type-Options", "nosniff")
				_, _ = w.Write(buf.Bytes())
				return
			}
			if !errors.Is(err, view.ErrNoEvents) {
				fmt.Fprintf(l.e.stderr, "toolloop: rendering %s: %v\n", path, err)
				http.Error(w, "the log cannot be shown: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		if !l.waitPage(r.Context(), tick.C) {
			http.Error(w, "the server stopped before the log had events", http.StatusServiceUnavailable)
			return
		}
	}
}

// serveData answers the long poll: GET /data?after=V waits until the
// log's version differs from V, then answers 200 with the data; after
// longPoll without a change it answers 204. Both name the URL to ask
// next in Toolloop-Next, unless the server stops following the log. With
// no after, it answers at once.
func (l *liveLog) serveData(w http.ResponseWriter, r *http.Request) {
	l.polled.Store(true)
	after, waiting := r.URL.Query().Get("after"), r.URL.Query().Has("after")
	timeout := time.NewTimer(longPoll)
	defer timeout.Stop()
	tick := time.NewTicker(followEvery)
	defer tick.Stop()
	for {
		ended := false
		select {
		case <-l.ended:
			ended = true
		default:
		}
		if v := version(l.path()); v != "" && (!waiting || v != after) {
			data, err := l.dataAt(v)
			switch {
			case err == nil:
				l.answer(w, http.StatusOK, v, data, ended)
				return
			case !errors.Is(err, view.ErrNoEvents):
				fmt.Fprintf(l.e.stderr, "toolloop: rendering %s: %v\n", l.path(), err)
				http.Error(w, "the log cannot be shown: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		if ended || !waiting {
			l.answer(w, http.StatusNoContent, after, nil, ended)
			return
		}
		dataWaiting.Add(1)
		select {
		case <-r.Context().Done():
			dataWaiting.Add(-1)
			return
		case <-timeout.C:
			dataWaiting.Add(-1)
			l.answer(w, http.StatusNoContent, after, nil, false)
			return
		case <-l.ended:
		case <-tick.C:
		}
		dataWaiting.Add(-1)
	}
}

// waitPage waits for the next look at the log, and reports false if the
// request ended first.
func (l *liveLog) waitPage(ctx context.Context, tick <-chan time.Time) bool {
	l.pageWaiting.Add(1)
	defer l.pageWaiting.Add(-1)
	select {
	case <-ctx.Done():
		return false
	case <-tick:
		return true
	}
}

func (l *liveLog) answer(w http.ResponseWriter, code int, v string, data []byte, ended bool) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if !ended {
		h.Set("Toolloop-Next", dataURL(v))
	}
	if code == http.StatusOK {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// dataAt returns the data of the log at version v, rendering it unless
// the one kept is v's. The log is read after v was taken, so the data
// holds at least what v does; what came since, a later version brings
// again.
func (l *liveLog) dataAt(v string) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v == l.ver {
		return l.data, nil
	}
	path := l.path()
	var buf bytes.Buffer
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := view.Data(&buf, eventlog.Events(f), view.Options{Title: path}); err != nil {
		return nil, err
	}
	l.ver, l.data = v, buf.Bytes()
	return l.data, nil
}

// stop stops following the log: the pages waiting for data get their
// last answer, saying so, and, if a page asked for data and linger is
// positive, the server goes on answering for linger, so that a page that
// was busy with its previous answer can ask once more. Then the server
// shuts down, ending any request still waiting (a page's, for a log with
// no events), and stop returns when every handler has.
func (l *liveLog) stop(linger time.Duration) error {
	l.endedOnce.Do(func() { close(l.ended) })
	if linger > 0 && l.polled.Load() {
		select {
		case <-time.After(linger):
		case err := <-l.errc:
			l.cancel()
			return err
		}
	}
	l.cancel()
	// Stop accepting, let the requests under way answer (they end at
	// once now), then drop every connection. Shutdown would do the same,
	// but wait 5 s for a connection a browser opened ahead and never
	// used.
	err := l.ln.Close()
	deadline := time.Now().Add(shutdownWait)
	for l.active.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if cerr := l.srv.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
		err = errors.Join(err, cerr)
	}
	if serr := <-l.errc; !errors.Is(serr, http.ErrServerClosed) && !errors.Is(serr, net.ErrClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// afterRun is how long toolloop run -view goes on serving once the run
// ended, for a page that was busy with its previous answer (see stop).
const afterRun = time.Second

// watchSession serves the live page of the session's log on 127.0.0.1,
// at a free port, while the session runs (toolloop run -view), prints
// its URL and opens it in $BROWSER if set. The function it returns stops
// the server: call it once the session has closed its log, so that the
// page gets the log's last events.
func watchSession(e *env, s *session) (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serving the run's page: %w", err)
	}
	l := startLive(e, ln, s.log.Path)
	u := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(e.stderr, "toolloop: watching at %s\n", u)
	openBrowser(e, u)
	return func() {
		if err := l.stop(afterRun); err != nil {
			fmt.Fprintf(e.stderr, "toolloop: stopping the run's page: %v\n", err)
		}
	}, nil
}

// openBrowser opens u with the first command of $BROWSER (a list
// separated by colons, as xdg-open and Python's webbrowser read it), with
// u in place of %s or after its arguments. Without $BROWSER it does
// nothing: the URL is printed. A browser that does not start is reported,
// never fatal; one that starts is left to run.
func openBrowser(e *env, u string) {
	first, _, _ := strings.Cut(e.getenv("BROWSER"), ":")
	args := strings.Fields(first)
	if len(args) == 0 {
		return
	}
	put := false
	for i, a := range args[1:] {
		if strings.Contains(a, "%s") {
			args[i+1], put = strings.ReplaceAll(a, "%s", u), true
		}
	}
	if !put {
		args = append(args, u)
	}
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(e.stderr, "toolloop: could not open a browser ($BROWSER): %v\n", err)
		return
	}
	// Not waited for: a browser may outlive the run.
	_ = cmd.Process.Release()
}

// registerView adds -view, of run and resume.
func (f *runFlags) registerView(fs *flag.FlagSet) {
	fs.BoolVar(&f.view, "view", false, "serve the run's page on 127.0.0.1 while it runs, following its log, and print its URL (opened in $BROWSER if set)")
}
