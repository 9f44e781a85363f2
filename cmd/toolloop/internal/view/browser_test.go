package view

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// chromePath finds Chromium: $CHROME_PATH, else /usr/bin/chromium. Without
// one the browser tests skip, unless TOOLLOOP_BROWSER_REQUIRED=1 (as CI
// sets it), which makes them fail.
func chromePath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CHROME_PATH")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("TOOLLOOP_BROWSER_REQUIRED") == "1" {
			t.Fatalf("no browser at %s (set CHROME_PATH): %v", p, err)
		}
		t.Skipf("no browser at %s (set CHROME_PATH, or TOOLLOOP_BROWSER_REQUIRED=1 to fail instead)", p)
	}
	return p
}

// artifacts is where the tests write screenshots: $TOOLLOOP_ARTIFACTS,
// else the test's temporary directory.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TOOLLOOP_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// browser starts headless Chromium for the test and stops it, and waits
// for it to exit, when the test ends. As root, Chromium's sandbox cannot
// start, so it runs with --no-sandbox then, and only then.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromePath(t)),
		chromedp.Headless,
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("allow-file-access-from-files", false),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bctx, 20*time.Second)
		defer cancel()
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it
		cancelBrowser()
		cancelAlloc()
	})
	// Start the browser with a context that has no deadline (see chromedp.Run).
	require.NoError(t, chromedp.Do(bctx))
	return bctx
}

// console collects what a tab reports as an error: uncaught exceptions,
// console.error and console.warn calls, and error entries of the browser
// log (a refused script or a failed load).
type console struct {
	mu   sync.Mutex
	errs []string
}

func (c *console) listen(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "exception: " + ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			msg += " " + ev.ExceptionDetails.Exception.Description
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			msg = "console." + string(ev.Type) + ": " + strings.Join(parts, " ")
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			msg = "log " + string(ev.Entry.Level) + ": " + ev.Entry.Text + " " + ev.Entry.URL
		}
	}
	if msg != "" {
		c.mu.Lock()
		c.errs = append(c.errs, msg)
		c.mu.Unlock()
	}
}

func (c *console) errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errs...)
}

// tab opens a new tab of the browser, listening to its console.
func tab(t *testing.T, bctx context.Context) (context.Context, *console) {
	t.Helper()
	tctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	c := &console{}
	require.NoError(t, chromedp.Listen(tctx, c.listen))
	ctx, cancelTimeout := context.WithTimeout(tctx, 90*time.Second)
	t.Cleanup(cancelTimeout)
	return ctx, c
}

// run evaluates a JavaScript expression in the tab.
func js[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, "evaluating %s", js)
	return v
}

// pageDone matches the page's body once its script has built the page,
// or failed to.
const pageDone = `body[data-ready="1"], body[data-error]`

// visibleCalls lists the tools and statuses of the call rows a person
// sees: rows with a layout box, so neither hidden by a filter nor inside
// a collapsed turn.
const visibleCalls = `[...document.querySelectorAll('.call > .row')].filter(r => r.offsetParent !== null).map(r => ({tool: r.parentElement.dataset.tool, status: r.parentElement.dataset.status, id: r.parentElement.dataset.id}))`

type shownCall struct {
	Tool   string `json:"tool"`
	Status string `json:"status"`
	ID     string `json:"id"`
}

// timing is what the page measured of its own rendering.
type timing struct {
	DCL   float64 `json:"dcl"`   // DOMContentLoaded, ms since navigation
	Ready float64 `json:"ready"` // the page built, ms since navigation
}

const timingJS = `({dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventStart, ready: window.toolloopView.ready})`

func TestBrowser(t *testing.T) {
	bctx := browser(t)
	three, err := os.ReadFile(threeTurnsLog)
	require.NoError(t, err)
	long, err := longRun()
	require.NoError(t, err)
	dir := artifacts(t)
	var paused bytes.Buffer
	for _, e := range pausedEvents() {
		line, err := json.Marshal(e)
		require.NoError(t, err)
		paused.Write(append(line, '\n'))
	}

	pages := []struct {
		name   string
		log    []byte
		tool   string   // filtered by in the test
		search string   // searched for in the test
		open   []string // calls opened for the screenshot
	}{
		{"three-turns", three, "search_docs", "tokyo", []string{"c7", "c8", "c10"}},
		{"five-hundred-turns", long, "run_tests", "testparse/1", nil},
		{"paused", paused.Bytes(), "deploy", "text", []string{"c2", "c3"}},
		{"steered", recordSteered(t), "deploy", "deployed", nil},
		{"jobs", jobLog(t), "exec_shell", "sleep", []string{"c1"}},
		{"job-recorded", recordJob(t), "echo", "other work", nil},
		{"code-mode", codeModeEvents(t, nil), "read_file", "gone.go", []string{"c1/6", "c3"}},
		{"code-mode-paused", codeModeEvents(t, untilResumed()), "stat", "view.go", []string{"c1/9"}},
		{"edited", recordEdited(t), "rm", "b.txt", []string{"c1"}},
	}
	t.Run("resumed", func(t *testing.T) {
		// A run resumed under a new ID is one story: the header has
		// the last part's end, and the repaired call is not unfinished.
		var log bytes.Buffer
		for _, e := range resumedEvents() {
			line, err := json.Marshal(e)
			require.NoError(t, err)
			log.Write(append(line, '\n'))
		}
		var page bytes.Buffer
		require.NoError(t, Render(&page, eventlog.Events(&log), Options{}))
		file := filepath.Join(t.TempDir(), "resumed.html")
		require.NoError(t, os.WriteFile(file, page.Bytes(), 0o644))
		ctx, cons := tab(t, bctx)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitReady(chromedp.CSS(pageDone))))
		sum := js[string](t, ctx, `document.getElementById('summary').textContent`)
		assert.Contains(t, sum, "stop: stop")
		assert.NotContains(t, sum, "aborted")
		assert.Contains(t, sum, "resumed 1 time")
		assert.Equal(t, []string{"Run r1", "Resumed as run r2", "Run r3"},
			js[[]string](t, ctx, `[...document.querySelectorAll('.run-head')].map(h => h.firstChild.textContent)`))
		assert.Equal(t, "canceled", js[string](t, ctx, `document.querySelector('.call[data-id="c1"]').dataset.status`))
		assert.Contains(t, js[string](t, ctx, `document.querySelector('.call[data-id="c1"] > .row .flags').textContent`), "answered by a repair")
		assert.Empty(t, cons.errors(), "the page reported errors")
	})
	t.Run("csp", func(t *testing.T) {
		// A script that got into the page some other way than the page's
		// own does not run: the policy allows the page's script by hash.
		var page bytes.Buffer
		require.NoError(t, Render(&page, eventlog.Events(bytes.NewReader(three)), Options{}))
		injected := bytes.Replace(page.Bytes(), []byte("<main"), []byte("<script>window.injected=1</script><main"), 1)
		file := filepath.Join(t.TempDir(), "injected.html")
		require.NoError(t, os.WriteFile(file, injected, 0o644))
		ctx, cons := tab(t, bctx)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitReady(chromedp.CSS(pageDone))))
		assert.Equal(t, "undefined", js[string](t, ctx, `typeof window.injected`))
		assert.NotEmpty(t, cons.errors(), "the browser reports the refused script")
		t.Logf("reported: %q", cons.errors())
	})
	for _, pg := range pages {
		var html bytes.Buffer
		require.NoError(t, Render(&html, eventlog.Events(bytes.NewReader(pg.log)), Options{Title: pg.name}))
		file := filepath.Join(t.TempDir(), pg.name+".html")
		require.NoError(t, os.WriteFile(file, html.Bytes(), 0o644))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(html.Bytes())
		}))
		t.Cleanup(srv.Close)
		want := countCalls(t, pg.log)
		for _, src := range []struct{ name, url string }{{"file", "file://" + file}, {"http", srv.URL + "/" + pg.name + ".html"}} {
			t.Run(pg.name+"/"+src.name, func(t *testing.T) {
				ctx, cons := tab(t, bctx)
				require.NoError(t, chromedp.Do(ctx,
					chromedp.Navigate(src.url),
					chromedp.WaitReady(chromedp.CSS(pageDone)),
				))
				require.Empty(t, js[string](t, ctx, `document.body.dataset.error || ""`), "the page failed to render")
				tm := js[timing](t, ctx, timingJS)
				t.Logf("%s over %s: DOMContentLoaded at %.0f ms, ready at %.0f ms: rendered in %.0f ms",
					pg.name, src.name, tm.DCL, tm.Ready, tm.Ready-tm.DCL)
				assert.Less(t, tm.Ready-tm.DCL, 10_000.0, "the page took too long to render")

				// Every call of the log has its row.
				assert.Equal(t, want.total, js[int](t, ctx, `document.querySelectorAll('.call').length`))
				assert.Equal(t, want.total, js[int](t, ctx, `document.querySelectorAll('.call > .row').length`))
				// Nothing from the log ran as script or became markup.
				assert.Equal(t, "undefined", js[string](t, ctx, `typeof window.pwned`))
				assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('#timeline img, #timeline script').length`))

				// Turns beyond the first and last three start collapsed.
				turns := js[int](t, ctx, `document.querySelectorAll('details.turn').length`)
				assert.Equal(t, min(turns, 6), js[int](t, ctx, `document.querySelectorAll('details.turn[open]').length`))

				if src.name == "file" {
					screenshot(t, ctx, dir, pg.name, pg.open)
				}
				if pg.name == "three-turns" {
					// The hostile output shows as the text it is.
					shown := js[[]string](t, ctx, `(r => { if (!r.parentElement.querySelector('.detail')) r.click(); return [...r.parentElement.querySelectorAll('.detail pre')].map(p => p.textContent) })(document.querySelector('.call[data-id="c8"] > .row'))`)
					assert.Contains(t, shown, hostile)
				}
				if pg.name == "steered" {
					// The message and the interrupts show in place, and
					// so does the turn an interrupt cut short.
					assert.Equal(t, []string{"message delivered: use staging, not prod"},
						js[[]string](t, ctx, `[...document.querySelectorAll('.note.message')].map(n => n.querySelector('.t').textContent + ": " + n.querySelector('pre').textContent)`))
					assert.Equal(t, 2, js[int](t, ctx, `document.querySelectorAll('.note.interrupt').length`))
					assert.Equal(t, 1, js[int](t, ctx, `document.querySelectorAll('.cut-short').length`))
				}
				if pg.name == "edited" {
					editedRow(t, ctx)
				}
				if strings.HasPrefix(pg.name, "code-mode") {
					programRows(t, ctx, pg.name == "code-mode-paused")
				}
				if pg.name == "jobs" {
					jobBars(t, ctx)
					if src.name == "file" {
						screenshot(t, ctx, dir, "jobs-open", nil)
					}
				}
				filters(t, ctx, pg.log, want, pg.tool, pg.search)
				assert.Empty(t, cons.errors(), "the page reported errors")
			})
		}
	}
}

// screenshot writes what the page looks like: the whole of a short page
// with a few calls opened, the top of a long one.
func screenshot(t *testing.T, ctx context.Context, dir, name string, open []string) {
	t.Helper()
	var shot []byte
	var err error
	if js[int](t, ctx, `document.querySelectorAll('details.turn').length`) < 10 {
		// Open the calls that show a diff, hostile output, an approval, a
		// cancellation.
		for _, id := range open {
			require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.call[data-id="`+id+`"] > .row`))))
		}
		js[bool](t, ctx, `(window.scrollTo(0, 0), true)`)
		shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		shot, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	require.NoError(t, err)
	path := filepath.Join(dir, name+".png")
	if !bytes.HasPrefix(shot, []byte("\x89PNG")) {
		path = filepath.Join(dir, name+".jpg")
	}
	require.NoError(t, os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot: %s", path)
}

// filters checks the page's tool and status filters and its search
// against counts made from the log.
func filters(t *testing.T, ctx context.Context, logBytes []byte, want logCalls, tool, query string) {
	t.Helper()
	setTool := func(name string) {
		js[bool](t, ctx, fmt.Sprintf(`(s => { s.value = %s; s.dispatchEvent(new Event('change')); return true })(document.getElementById('tool'))`, jsString(name)))
	}

	// By tool: exactly that tool's calls are visible.
	setTool(tool)
	shown := js[[]shownCall](t, ctx, visibleCalls)
	assert.Len(t, shown, want.byTool[tool], "calls of %s shown", tool)
	for _, c := range shown {
		assert.Equal(t, tool, c.Tool, "call %s shown by the %s filter", c.ID, tool)
	}
	setTool("")

	// By status: each status chip alone shows exactly the calls of that
	// status.
	for _, status := range []string{"error", "denied", "canceled", "ok"} {
		if want.byStatus[status] == 0 {
			continue
		}
		chip := chromedp.CSS(`#statuses button[data-status="` + status + `"]`)
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chip)))
		shown := js[[]shownCall](t, ctx, visibleCalls)
		assert.Len(t, shown, want.byStatus[status], "calls with status %s shown", status)
		for _, c := range shown {
			assert.Equal(t, status, c.Status, "call %s shown by the %s filter", c.ID, status)
		}
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chip)))
	}
	assert.Equal(t, want.total, len(js[[]shownCall](t, ctx, `(document.getElementById('expand').click(), `+visibleCalls+`)`)),
		"every call shows once the filters are off and the turns expanded")

	// Search, typed: the calls whose arguments, result or error hold the
	// text, whatever its case.
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#search"), query)))
	matched := searchLog(t, logBytes, query)
	require.NotEmpty(t, matched)
	shown = js[[]shownCall](t, ctx, visibleCalls)
	var ids []string
	for _, c := range shown {
		ids = append(ids, c.ID)
	}
	assert.ElementsMatch(t, matched, ids, "calls found by searching %q", query)
	js[bool](t, ctx, `(q => { q.value = ''; q.dispatchEvent(new Event('input')); return true })(document.getElementById('search'))`)
}

// searchLog lists the calls of a log whose arguments (as the model or a
// program sent them), result text or error message contain query,
// ignoring case.
func searchLog(t *testing.T, logBytes []byte, query string) []string {
	t.Helper()
	text := map[string]*strings.Builder{}
	var order []string
	note := func(id, s string) {
		b := text[id]
		if b == nil {
			b = &strings.Builder{}
			text[id] = b
			order = append(order, id)
		}
		b.WriteString(strings.ToLower(s))
		b.WriteByte('\n')
	}
	for e, err := range eventlog.Events(bytes.NewReader(logBytes)) {
		require.NoError(t, err)
		if e.Response != nil {
			for _, tc := range e.Response.Message.ToolCalls {
				note(tc.ID, string(tc.Arguments))
			}
		}
		if e.Type == toolloop.EventStart {
			note(e.CallID, string(e.Arguments)) // an inner call's are only here
		}
		if e.Result != nil {
			note(e.CallID, e.Result.Text())
			if e.Result.Error != nil {
				note(e.CallID, e.Result.Error.Message)
			}
		}
	}
	var ids []string
	for _, id := range order {
		if strings.Contains(text[id].String(), strings.ToLower(query)) {
			ids = append(ids, id)
		}
	}
	return ids
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// box is where an element is drawn, horizontally.
type box struct {
	L float64 `json:"l"`
	R float64 `json:"r"`
}

// jobBars checks the page of jobLog: each job is a bar on the run's axis
// that starts in its starting call's turn and outlives it, and a bar in
// each turn it ran through; the message that told the model opens the
// job's row, which lists its output.
func jobBars(t *testing.T, ctx context.Context) {
	t.Helper()
	assert.Equal(t, []string{"job_1 exec_shell · ok · turns 1–3 · 53 ms", "job_2 exec_shell · unfinished · turns 2–4 · 30 ms"},
		js[[]string](t, ctx, `[...document.querySelectorAll('.jobs .lane .lbl')].map(l => l.textContent)`))
	turnsWith := func(id string) []int {
		return js[[]int](t, ctx, `[...document.querySelectorAll('details.turn')].filter(d => d.querySelector('.axis .bar.job[data-job="`+id+`"]')).map(d => +d.dataset.turn)`)
	}
	assert.Equal(t, []int{1, 2, 3}, turnsWith("job_1"))
	assert.Equal(t, []int{2, 3, 4}, turnsWith("job_2"))
	assert.Equal(t, 2, js[int](t, ctx, `document.querySelectorAll('details.turn[data-turn="2"] .axis .bar.job.on').length`),
		"in turn 2 both jobs run on")

	geo := js[map[string]box](t, ctx, `(() => {
		const at = e => { const b = e.getBoundingClientRect(); return {l: b.left, r: b.right} };
		const o = {};
		document.querySelectorAll('.jobs .seg').forEach(s => o['turn' + s.dataset.turn] = at(s));
		document.querySelectorAll('.jobs .bar.job').forEach(b => o[b.dataset.job] = at(b));
		o.axis = at(document.querySelector('.jobs .axis'));
		return o })()`)
	j1, j2 := geo["job_1"], geo["job_2"]
	require.Positive(t, j1.R-j1.L, "job_1's bar is drawn")
	const px = 1.5 // rounding of the percentages into pixels
	assert.True(t, j1.L >= geo["turn1"].L-px && j1.L <= geo["turn1"].R+px, "job_1 starts in turn 1: %v in %v", j1, geo["turn1"])
	assert.Greater(t, j1.R, geo["turn2"].R, "job_1 outlives turn 2")
	assert.True(t, j1.R >= geo["turn3"].L-px && j1.R <= geo["turn3"].R+px, "job_1 ends in turn 3: %v in %v", j1, geo["turn3"])
	assert.True(t, j2.L >= geo["turn2"].L-px && j2.L <= geo["turn2"].R+px, "job_2 starts in turn 2: %v in %v", j2, geo["turn2"])
	assert.InDelta(t, geo["axis"].R, j2.R, px+1, "job_2 has no end: it runs to the run's end")

	// The starting call says it started the job.
	assert.Contains(t, js[string](t, ctx, `document.querySelector('.call[data-id="c1"] .flags').textContent`), "started job job_1")
	// The message that told the model is the job's end, linked to its row.
	assert.Equal(t, "job ended: job_1", js[string](t, ctx, `document.querySelector('.note.job .t').textContent`))
	assert.False(t, js[bool](t, ctx, `document.getElementById('job-r-job_1').classList.contains('open')`))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.note.job .joblink`))))
	assert.True(t, js[bool](t, ctx, `document.getElementById('job-r-job_1').classList.contains('open')`), "the link opens the job")
	assert.Equal(t, []string{"=== RUN   TestA\n", "--- PASS: TestA (0.00s)\n"},
		js[[]string](t, ctx, `[...document.querySelectorAll('#job-r-job_1 .out pre')].map(p => p.textContent)`))
	assert.Contains(t, js[string](t, ctx, `document.querySelector('#job-r-job_1 .detail').textContent`), "2 more reports not listed")
	assert.Contains(t, js[string](t, ctx, `document.querySelector('#job-r-job_1 .detail').textContent`), "exit code0")
}

// programRows checks the page of the code-mode log: each program's call
// shows its source as numbered lines of text, its inner calls nested
// under it in order, once each, the number of them and its output; a
// paused program's waiting inner call shows as waiting.
func programRows(t *testing.T, ctx context.Context, paused bool) {
	t.Helper()
	inner := js[[]shownCall](t, ctx, `[...document.querySelectorAll('.call[data-id="c1"] > .inner-calls > .call')].map(c => ({tool: c.dataset.tool, status: c.dataset.status, id: c.dataset.id}))`)
	want := []shownCall{{"list_files", "ok", "c1/1"}, {"stat", "ok", "c1/2"}, {"stat", "ok", "c1/3"}, {"stat", "ok", "c1/4"},
		{"stat", "ok", "c1/5"}, {"read_file", "error", "c1/6"}, {"read_file", "ok", "c1/7"}, {"read_file", "ok", "c1/8"}, {"write_file", "ok", "c1/9"}}
	if paused {
		want[8].Status = "pending"
	}
	assert.Equal(t, want, inner, "the inner calls, in order, once each, under their program")
	assert.Equal(t, []string{"c1", "c2"}, js[[]string](t, ctx, `[...document.querySelectorAll('details.turn[data-turn="1"] .turn-body > .call')].map(c => c.dataset.id)`),
		"the turn's own calls are the model's")
	assert.Contains(t, js[string](t, ctx, `document.querySelector('.call[data-id="c1"] > .row .flags').textContent`), "program · 9 inner calls")
	badges := js[[]string](t, ctx, `[...document.querySelectorAll('details.turn[data-turn="1"] > summary .badge')].map(b => b.textContent)`)
	if paused {
		assert.Equal(t, []string{"1 error", "2 pending"}, badges, "the turn counts its inner calls")
	} else {
		assert.Equal(t, []string{"×2 parallel", "1 error"}, badges, "the turn counts its inner calls")
	}
	assert.Contains(t, js[string](t, ctx, `document.querySelector('details.turn[data-turn="1"] > summary').textContent`), "2 calls (+9 inner)")

	// The source: one numbered line per line of the program, in a
	// monospace font, as text; it folds away.
	src := `document.querySelector('.call[data-id="c1"] > details.src')`
	assert.True(t, js[bool](t, ctx, src+`.open`))
	assert.Equal(t, strings.Split(largestProgram, "\n"), js[[]string](t, ctx, `[...`+src+`.querySelectorAll('pre.code .ln')].map(l => l.textContent)`))
	assert.Equal(t, "ln", js[string](t, ctx, `getComputedStyle(`+src+`.querySelector('.ln')).counterIncrement.split(' ')[0]`), "the lines are numbered")
	assert.Contains(t, js[string](t, ctx, `getComputedStyle(`+src+`.querySelector('pre.code')).fontFamily`), "monospace")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.call[data-id="c1"] > details.src > summary`))))
	assert.False(t, js[bool](t, ctx, src+`.open`), "the source folds")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.call[data-id="c1"] > details.src > summary`))))

	head := js[string](t, ctx, `document.querySelector('.call[data-id="c1"] > .inner-calls > .inner-head').textContent`)
	out := js[string](t, ctx, `document.querySelector('.call[data-id="c1"] > .prog.out').textContent`)
	if paused {
		assert.Equal(t, "9 inner calls · paused for approval of c1/9", head)
		assert.Contains(t, js[string](t, ctx, `document.querySelector('.call[data-id="c1/9"] > .row .flags').textContent`), "waiting for approval")
		assert.Equal(t, "pending", js[string](t, ctx, `document.querySelector('.call[data-id="c1"]').dataset.status`))
		assert.Contains(t, out, "waits for approval")
		return
	}
	assert.Equal(t, "9 inner calls · paused for approval of c1/9; ran again on resume, 8 inner calls answered from its journal", head)
	assert.Equal(t, "Outputgone.go, loop.go, view.go\n\nconsole:\nskipped gone.go: not_found\nwrote REPORT.md", out)

	// An inner call opens to its own details, as any call.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.call[data-id="c1/6"] > .row`))))
	detail := js[string](t, ctx, `document.querySelector('.call[data-id="c1/6"] > .detail').textContent`)
	assert.Contains(t, detail, "#6 of the program of call c1")
	assert.Contains(t, detail, "Error (not_found)")
	assert.Contains(t, detail, `"path": "gone.go"`)

	// The hostile program is text: its source, and its error.
	assert.Equal(t, strings.Split(hostileProgram, "\n"),
		js[[]string](t, ctx, `[...document.querySelectorAll('.call[data-id="c3"] > details.src pre.code .ln')].map(l => l.textContent)`))
	assert.Contains(t, js[string](t, ctx, `document.querySelector('.call[data-id="c3"] > .prog.out pre.err').textContent`),
		"</script><script>window.pwned=3</script>")
	assert.Equal(t, []string{"c3/1", "c3/2"}, js[[]string](t, ctx, `[...document.querySelectorAll('.call[data-id="c3"] > .inner-calls > .call')].map(c => c.dataset.id)`))
}

// editedRow checks the row of a call whose arguments the guard rewrote
// and a person then edited: the row shows what it ran with and names
// both, the details show the original beside it, and the result and the
// guard's note are apart.
func editedRow(t *testing.T, ctx context.Context) {
	t.Helper()
	row := `document.querySelector('.call[data-id="c1"] > .row')`
	assert.Contains(t, js[string](t, ctx, row+`.querySelector('.sum').textContent`), "b.txt", "the arguments it ran with")
	assert.Contains(t, js[string](t, ctx, row+`.querySelector('.flags').textContent`), "arguments changed by guard, person")
	if !js[bool](t, ctx, `!!document.querySelector('.call[data-id="c1"] > .detail')`) {
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.call[data-id="c1"] > .row`))))
	}
	heads := js[[]string](t, ctx, `[...document.querySelectorAll('.call[data-id="c1"] > .detail h4')].map(h => h.textContent)`)
	assert.Contains(t, heads, "Arguments it ran with")
	assert.Contains(t, heads, "Original arguments (the model's)")
	assert.Contains(t, heads, "by guard (rule destructive): removes files")
	assert.Contains(t, heads, "by person, when approving the call (edited): b, not a")
	detail := js[string](t, ctx, `document.querySelector('.call[data-id="c1"] > .detail').textContent`)
	assert.NotContains(t, detail, "rewritten by guard")
	pres := js[[]string](t, ctx, `[...document.querySelectorAll('.call[data-id="c1"] > .detail pre')].map(p => p.textContent)`)
	assert.Contains(t, pres, "1 line", "the result alone")
	for _, p := range pres {
		assert.False(t, strings.HasPrefix(p, "1 lineNote"), "the result runs into the note: %q", p)
	}
}
