package view

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/eventlog"
)

// liveServer serves a live page of a log the test writes, by the
// protocol of Options.Live (a long poll), as toolloop view -serve does;
// its version is the log's length.
type liveServer struct {
	*httptest.Server
	mu      sync.Mutex
	log     []byte
	changed chan struct{} // closed and replaced at each change
	ended   bool
	// quit ends the requests that wait, as if the server went away.
	quit     chan struct{}
	quitOnce sync.Once
}

func newLiveServer(t *testing.T, log []byte) *liveServer {
	t.Helper()
	s := &liveServer{log: bytes.Clone(log), changed: make(chan struct{}), quit: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		log := bytes.Clone(s.log)
		s.mu.Unlock()
		opts := Options{Title: "live", Live: "/data?after=" + strconv.Itoa(len(log))}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", Policy(opts))
		if err := Render(w, eventlog.Events(bytes.NewReader(log)), opts); err != nil {
			t.Errorf("rendering: %v", err)
		}
	})
	mux.HandleFunc("GET /data", func(w http.ResponseWriter, r *http.Request) {
		after := r.URL.Query().Get("after")
		for {
			s.mu.Lock()
			log, changed, ended := bytes.Clone(s.log), s.changed, s.ended
			s.mu.Unlock()
			v := strconv.Itoa(len(log))
			if !ended {
				w.Header().Set("Toolloop-Next", "/data?after="+v)
			}
			if v != after {
				w.Header().Set("Content-Type", "application/json")
				if err := Data(w, eventlog.Events(bytes.NewReader(log)), Options{Title: "live"}); err != nil {
					t.Errorf("data: %v", err)
				}
				return
			}
			if ended {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			select {
			case <-changed:
			case <-r.Context().Done():
				return
			case <-s.quit:
				panic(http.ErrAbortHandler) // the connection drops
			}
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.stop)
	return s
}

// stop stops the server, dropping the requests that wait.
func (s *liveServer) stop() {
	s.quitOnce.Do(func() { close(s.quit) })
	s.Close()
}

// append adds to the log, as a run writing it does.
func (s *liveServer) append(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, b...)
	close(s.changed)
	s.changed = make(chan struct{})
}

// end stops following the log.
func (s *liveServer) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	close(s.changed)
	s.changed = make(chan struct{})
}

// recordUpdates wraps the page's update so that the test sees each data
// it is given, and still calls the page's own, if it has one.
const recordUpdates = `(v => {
	window.updates = [];
	window.hadUpdate = typeof v.update === "function";
	const own = v.update;
	v.update = function (d) {
		window.updates.push({turns: d.turns, events: d.events});
		if (own) return own.apply(this, arguments);
	};
	return true })(window.toolloopView)`

// badge is the live indicator's state and text.
type badge struct {
	State string `json:"state"`
	Text  string `json:"text"`
}

const badgeJS = `(b => b ? {state: b.dataset.state, text: b.textContent} : {})(document.getElementById('live'))`

// waitJS evaluates cond in the tab until it is true, or fails the test
// after a deadline.
func waitJS(t *testing.T, ctx context.Context, cond, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !js[bool](t, ctx, cond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s (%s)", what, cond)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBrowserLive: a live page follows its log: a turn added to the log
// reaches the page's update, the indicator says it is following, then
// that it ended, or that the connection was lost; the policy refuses
// nothing the page does.
func TestBrowserLive(t *testing.T) {
	bctx := browser(t)
	raw, err := os.ReadFile(threeTurnsLog)
	require.NoError(t, err)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	// The log up to its third turn's model request; the rest is the turn.
	cut := 51
	var ev struct{ Type string }
	require.NoError(t, json.Unmarshal(lines[cut], &ev))
	require.Equal(t, "model.request", ev.Type, "line %d starts the third turn", cut+1)
	head, turn := bytes.Join(lines[:cut], nil), bytes.Join(lines[cut:], nil)
	turnsOf := func(log []byte) int {
		var d struct{ Turns int }
		var b bytes.Buffer
		require.NoError(t, Data(&b, eventlog.Events(bytes.NewReader(log)), Options{}))
		require.NoError(t, json.Unmarshal(b.Bytes(), &d))
		return d.Turns
	}
	before, after := turnsOf(head), turnsOf(raw)
	require.Greater(t, after, before)

	t.Run("follows", func(t *testing.T) {
		srv := newLiveServer(t, head)
		ctx, cons := tab(t, bctx)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitReady(chromedp.CSS(pageDone))))
		require.Empty(t, js[string](t, ctx, `document.body.dataset.error || ""`), "the page failed to render")
		assert.Equal(t, badge{"following", "live: following the log"}, js[badge](t, ctx, badgeJS))
		require.True(t, js[bool](t, ctx, recordUpdates))
		hadUpdate := js[bool](t, ctx, `window.hadUpdate`)

		srv.append(turn)
		waitJS(t, ctx, `window.updates.length > 0`, "the page's update")
		type update struct{ Turns, Events int }
		got := js[[]update](t, ctx, `window.updates`)
		assert.Equal(t, after, got[len(got)-1].Turns, "the update has the new turn")
		assert.Equal(t, bytes.Count(raw, []byte("\n")), got[len(got)-1].Events)
		if hadUpdate {
			// page.js rebuilds the page: it shows the turn.
			waitJS(t, ctx, `document.querySelectorAll('details.turn[data-turn="3"]').length > 0`, "the new turn on the page")
		} else {
			t.Log("page.js has no update yet: only the call to it is checked")
		}
		assert.Equal(t, "following", js[badge](t, ctx, badgeJS).State)

		srv.end()
		waitJS(t, ctx, `document.getElementById('live').dataset.state === "ended"`, "the ended state")
		assert.Equal(t, "live: ended, the server follows the log no more", js[badge](t, ctx, badgeJS).Text)
		assert.Empty(t, js[string](t, ctx, `document.body.dataset.liveError || ""`))
		assert.Empty(t, cons.errors(), "the page reported errors (a request the policy refused, say)")
	})

	t.Run("connection lost", func(t *testing.T) {
		srv := newLiveServer(t, head)
		ctx, _ := tab(t, bctx)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitReady(chromedp.CSS(pageDone))))
		assert.Equal(t, "following", js[badge](t, ctx, badgeJS).State)
		srv.stop()
		waitJS(t, ctx, `document.getElementById('live').dataset.state === "lost"`, "the lost state")
		assert.Equal(t, "live: connection lost, retrying", js[badge](t, ctx, badgeJS).Text)
	})

	t.Run("static", func(t *testing.T) {
		// A page without Live has no indicator and asks for nothing.
		var page bytes.Buffer
		require.NoError(t, Render(&page, eventlog.Events(bytes.NewReader(raw)), Options{}))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(page.Bytes()) }))
		t.Cleanup(srv.Close)
		ctx, cons := tab(t, bctx)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitReady(chromedp.CSS(pageDone))))
		assert.Equal(t, badge{}, js[badge](t, ctx, badgeJS))
		assert.Empty(t, cons.errors())
	})
}
