package view

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// logOf writes events as a log.
func logOf(t *testing.T, evs []toolloop.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range evs {
		line, err := json.Marshal(e)
		require.NoError(t, err)
		buf.Write(append(line, '\n'))
	}
	return buf.Bytes()
}

// openLog renders a log into a file and opens it in a new tab of the
// browser, once the page is built.
func openLog(t *testing.T, bctx context.Context, log []byte) (context.Context, *console) {
	t.Helper()
	var page bytes.Buffer
	require.NoError(t, Render(&page, eventlog.Events(bytes.NewReader(log)), Options{}))
	file := filepath.Join(t.TempDir(), "page.html")
	require.NoError(t, os.WriteFile(file, page.Bytes(), 0o644))
	ctx, cons := tab(t, bctx)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitReady(chromedp.CSS(pageDone))))
	require.Empty(t, js[string](t, ctx, `document.body.dataset.error || ""`), "the page failed to render")
	return ctx, cons
}

// pageJSON is the page's data for events, as the page embeds it.
func pageJSON(t *testing.T, evs []toolloop.Event) string {
	t.Helper()
	p, err := build(events(evs...), &Options{})
	require.NoError(t, err)
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	return string(raw)
}

// sawHostile is text from a log that would run if it became markup.
const sawHostile = `</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">`

func TestBrowserSaw(t *testing.T) {
	bctx := browser(t)
	saw := recordSaw(t)

	t.Run("requests", func(t *testing.T) {
		ctx, cons := openLog(t, bctx, saw)
		// The first request is open: the system and user prompts.
		first := `document.querySelector('details.turn[data-turn="1"] details.req')`
		assert.True(t, js[bool](t, ctx, first+`.open`), "the run's first request shows open")
		assert.Equal(t, []string{"system", "user"}, js[[]string](t, ctx, `[...`+first+`.querySelectorAll('.msg')].map(m => m.dataset.role)`))
		assert.Equal(t, []string{"You are careful with files.", "Copy a.txt to y.txt."},
			js[[]string](t, ctx, `[...`+first+`.querySelectorAll('.msg pre')].map(p => p.textContent)`))
		assert.Contains(t, js[string](t, ctx, first+`.querySelector('summary').textContent`), "2 tools ·")
		assert.ElementsMatch(t, []string{"read", "write"}, js[[]string](t, ctx, `[...`+first+`.querySelectorAll('.toolname')].map(e => e.dataset.tool)`))

		// The second: what was new, built when opened.
		second := `document.querySelector('details.turn[data-turn="2"] details.req')`
		sum := js[string](t, ctx, second+`.querySelector('summary').textContent`)
		assert.Contains(t, sum, "3 new messages (5 in all)")
		assert.Contains(t, sum, "2 tools (same as previous turn)")
		assert.Regexp(t, `tokens ~[0-9,]+ of window [0-9,]+ \([0-9.]+%\)`, sum)
		assert.Zero(t, js[int](t, ctx, second+`.querySelectorAll('.msg').length`), "built lazily")
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`details.turn[data-turn="2"] details.req > summary`))))
		assert.Equal(t, []string{"assistant", "tool", "tool"}, js[[]string](t, ctx, `[...`+second+`.querySelectorAll('.msg')].map(m => m.dataset.role)`))
		labels := js[[]string](t, ctx, `[...`+second+`.querySelectorAll('.msg .role')].map(m => m.textContent)`)
		assert.Equal(t, "#3 tool result of read (c1), as the model saw it", labels[1])
		assert.Zero(t, js[int](t, ctx, second+`.querySelectorAll('.toolname').length`), "the same tools are not named again")
		results := js[[]string](t, ctx, `[...`+second+`.querySelectorAll('.msg[data-role="tool"] pre')].map(p => p.textContent)`)
		require.Len(t, results, 2)
		assert.Contains(t, results[1], approvalNote, "the result as the model saw it")

		// The search finds a turn by what the model was sent.
		require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#search"), "careful with files")))
		assert.Equal(t, []int{1}, js[[]int](t, ctx, `[...document.querySelectorAll('details.turn')].filter(d => !d.classList.contains('gone')).map(d => +d.dataset.turn)`))
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("prompt-without-requests", func(t *testing.T) {
		// A log written without transient events has no requests: the
		// run's start shows the messages it started with.
		var dropped []toolloop.Event
		for _, e := range crafted() {
			if !e.Type.Transient() {
				dropped = append(dropped, e)
			}
		}
		ctx, cons := openLog(t, bctx, logOf(t, dropped))
		assert.Equal(t, []string{"#0 system: sys", "#1 user: report, please"},
			js[[]string](t, ctx, `[...document.querySelectorAll('.note.start details.prompt .msg')].map(m => m.querySelector('.role').textContent + ": " + m.querySelector('pre').textContent)`))
		assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('details.turn details.req').length`), "no requests to show")

		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("edited", func(t *testing.T) {
		ctx, cons := openLog(t, bctx, saw)
		row := `document.querySelector('.call[data-id="c2"] > .row')`
		assert.Contains(t, js[string](t, ctx, row+`.querySelector('.sum').textContent`), "y.txt", "the arguments it ran with")
		assert.Contains(t, js[string](t, ctx, row+`.querySelector('.flags').textContent`), "arguments changed by person")
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.call[data-id="c2"] > .row`))))
		detail := `document.querySelector('.call[data-id="c2"] > .detail')`
		heads := js[[]string](t, ctx, `[...`+detail+`.querySelectorAll('h4')].map(h => h.textContent)`)
		assert.Contains(t, heads, "Arguments it ran with")
		assert.Contains(t, heads, "Original arguments (the model's)")
		assert.Contains(t, heads, "by person, when approving the call (edited): y, not x")
		pres := js[[]string](t, ctx, `[...`+detail+`.querySelectorAll('pre')].map(p => p.textContent)`)
		require.GreaterOrEqual(t, len(pres), 2)
		assert.JSONEq(t, `{"path":"y.txt","text":"hi"}`, pres[0], "ran with")
		assert.JSONEq(t, `{"path":"x.txt","text":"hi"}`, pres[1], "the model's, beside it")
		assert.Contains(t, js[string](t, ctx, detail+`.textContent`), "with arguments the person edited")
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("timeline", func(t *testing.T) {
		ctx, cons := openLog(t, bctx, saw)
		turn := `document.querySelector('details.turn[data-turn="1"]')`
		spent := js[string](t, ctx, turn+`.querySelector('summary .spent').textContent`)
		assert.Regexp(t, `^model [^·]+ · tools [^·]+ · approval [0-9.]+ (ms|s) · other .+$`, spent)
		stages := func(id string) []string {
			return js[[]string](t, ctx, `[...`+turn+`.querySelector('.axis .bar[data-call="`+id+`"]').parentElement.querySelectorAll('.stage')].map(s => s.dataset.stage)`)
		}
		assert.Subset(t, stages("c2"), []string{"checks", "approval", "tool"})
		assert.NotContains(t, stages("c1"), "approval")
		assert.Contains(t, stages("c1"), "tool")
		// The approval's segment is the widest of c2's: the person thought
		// 30 ms, the tool ran in microseconds.
		widest := js[string](t, ctx, `[...`+turn+`.querySelector('.axis .bar[data-call="c2"]').parentElement.querySelectorAll('.stage')].sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width)[0].dataset.stage`)
		assert.Equal(t, "approval", widest)
		assert.Equal(t, []string{"queue", "wait", "checks", "approval", "preHooks", "tool", "after"},
			js[[]string](t, ctx, `[...`+turn+`.querySelectorAll('.legend .item')].map(i => i.dataset.stage)`))
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.call[data-id="c2"] > .row`))))
		tm := js[string](t, ctx, `[...document.querySelectorAll('.call[data-id="c2"] > .detail table.kv tr')].find(r => r.firstChild.textContent === 'time').lastChild.textContent`)
		assert.Regexp(t, `^ran [0-9.]+ ms, waited [0-9.]+ ms for approval, checks`, tm)

		// The header's chart: a column a turn, drawn by the page.
		assert.Equal(t, 2, js[int](t, ctx, `document.querySelectorAll('#chart svg g.col').length`))
		assert.Equal(t, 4, js[int](t, ctx, `document.querySelectorAll('#chart svg rect').length`))
		assert.Contains(t, js[string](t, ctx, `document.querySelector('#chart svg g.col title').textContent`), "turn 1: in 1,200 · out 40")
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("expand-all", func(t *testing.T) {
		ctx, cons := openLog(t, bctx, saw)
		assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('.call.open').length`))
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#expand`))))
		assert.Equal(t, 2, js[int](t, ctx, `document.querySelectorAll('.call.open > .detail:not(.gone)').length`), "Expand all opens the calls")
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#collapse`))))
		assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('.call.open').length`))
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("answers", func(t *testing.T) {
		ctx, cons := openLog(t, bctx, logOf(t, crafted()))
		sum := js[string](t, ctx, `document.querySelector('details.turn[data-turn="1"] details.req > summary').textContent`)
		assert.Contains(t, sum, "tokens ~900 of window 3,000 (30%)")
		assert.Contains(t, sum, "tool choice required echo")
		assert.Contains(t, sum, "1 loaded by search")
		assert.Equal(t, []string{"echo", "deploy (loaded by search)"},
			js[[]string](t, ctx, `[...document.querySelectorAll('details.turn[data-turn="1"] .toolname')].map(e => e.textContent)`))
		t2 := `document.querySelector('details.turn[data-turn="2"]')`
		assert.Contains(t, js[string](t, ctx, t2+`.querySelector('details.req > summary').textContent`), "output report")
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`details.turn[data-turn="2"] details.req > summary`))))
		assert.Contains(t, js[string](t, ctx, t2+`.querySelector('.msg pre').textContent`), "Summary of the conversation", "the compaction's summary")
		assert.Equal(t, "{\n  \"status\": \"green\",\n  \"n\": 3\n}", js[string](t, ctx, t2+`.querySelector('.answer pre').textContent`))
		assert.Contains(t, js[string](t, ctx, t2+`.querySelector('summary').textContent`), "answer")
		assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('#chart svg').length`), "no chart of turns that used no tokens")
		// A log without timings draws plain bars and no legend.
		assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('.stage, .legend, summary .spent').length`))
		assert.Equal(t, 1, js[int](t, ctx, `document.querySelectorAll('details.turn[data-turn="1"] .axis .bar.s-ok').length`))

		// The output tool's call is an output row with its answer shown.
		var buf syncBuffer
		w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
		model := looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", toolloop.DefaultOutputName, `{"answer":"42"}`))})
		loop := &toolloop.AgentLoop{Model: model, OnEvent: w.Record, Output: &toolloop.OutputFormat{
			Schema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}}}`)}}
		_, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("?")})
		require.NoError(t, err)
		require.NoError(t, w.Close())
		ctx, cons2 := openLog(t, bctx, buf.Bytes())
		out := `document.querySelector('.call.output[data-id="c1"]')`
		assert.Equal(t, "output", js[string](t, ctx, out+`.querySelector('.row .badge.out').textContent`))
		assert.JSONEq(t, `{"answer":"42"}`, js[string](t, ctx, out+`.querySelector('.answer pre').textContent`), "shown without opening")
		assert.Empty(t, cons.errors(), "the page reported errors")
		assert.Empty(t, cons2.errors(), "the page reported errors")
	})

	t.Run("hostile", func(t *testing.T) {
		evs := crafted()
		evs[1].Messages = []toolloop.Message{toolloop.SystemMessage(sawHostile), toolloop.UserMessage(sawHostile)}
		evs[1].Request.Tools = []string{sawHostile, "echo"}
		evs[6].Messages = []toolloop.Message{toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c1", Name: "echo",
			Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent(sawHostile)}})}
		var answer bytes.Buffer
		enc := json.NewEncoder(&answer)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(map[string]string{"html": sawHostile}))
		evs[7].Response.Message.Content = []toolloop.Content{toolloop.TextContent(answer.String())}
		ctx, cons := openLog(t, bctx, logOf(t, evs))
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`details.turn[data-turn="2"] details.req > summary`))))
		assert.Equal(t, []string{sawHostile, sawHostile}, js[[]string](t, ctx, `[...document.querySelectorAll('details.turn[data-turn="1"] .msg pre')].map(p => p.textContent)`))
		assert.Equal(t, sawHostile, js[string](t, ctx, `document.querySelector('details.turn[data-turn="2"] .msg[data-role="tool"] pre').textContent`))
		assert.Equal(t, sawHostile, js[string](t, ctx, `document.querySelector('.toolname').dataset.tool`))
		assert.Equal(t, sawHostile, js[string](t, ctx, `JSON.parse(document.querySelector('.answer pre').textContent).html`), "the answer is the JSON, as text")
		assert.Equal(t, "undefined", js[string](t, ctx, `typeof window.pwned`))
		assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('#timeline img, #timeline script, #chart img').length`))
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("update", func(t *testing.T) {
		all := manyTurns(9)
		cut := 0 // page A: the events up to the end of turn 8
		for i, e := range all {
			if e.Turn == 9 {
				cut = i
				break
			}
		}
		require.Positive(t, cut)
		ctx, cons := openLog(t, bctx, logOf(t, all[:cut]))
		require.Equal(t, 8, js[int](t, ctx, `document.querySelectorAll('details.turn').length`))

		// A person opens a call of turn 2 and a collapsed turn, the
		// second request, and scrolls.
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.call[data-id="c2_1"] > .row`))))
		require.False(t, js[bool](t, ctx, `document.querySelector('details.turn[data-turn="4"]').open`))
		js[bool](t, ctx, `(document.querySelector('details.turn[data-turn="4"]').open = true, true)`)
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`details.turn[data-turn="2"] details.req > summary`))))
		y := js[float64](t, ctx, `(window.scrollTo(0, 300), window.scrollY)`)
		require.Positive(t, y, "the page scrolls")

		js[bool](t, ctx, `(window.toolloopView.update(`+pageJSON(t, all)+`), true)`)
		assert.Equal(t, 9, js[int](t, ctx, `document.querySelectorAll('details.turn').length`), "the new turn shows")
		assert.True(t, js[bool](t, ctx, `document.querySelector('details.turn[data-turn="9"]').open`), "a last turn shows open")
		assert.Equal(t, 2, js[int](t, ctx, `document.querySelectorAll('details.turn[data-turn="9"] .call').length`))
		assert.True(t, js[bool](t, ctx, `document.querySelector('.call[data-id="c2_1"]').classList.contains('open')`), "the opened call stays open")
		assert.True(t, js[bool](t, ctx, `!document.querySelector('.call[data-id="c2_1"] > .detail').classList.contains('gone')`))
		assert.True(t, js[bool](t, ctx, `document.querySelector('details.turn[data-turn="4"]').open`), "the opened turn stays open")
		assert.False(t, js[bool](t, ctx, `document.querySelector('details.turn[data-turn="5"]').open`), "a collapsed one stays collapsed")
		assert.True(t, js[bool](t, ctx, `document.querySelector('details.turn[data-turn="2"] details.req').open`), "the opened request stays open")
		assert.Positive(t, js[int](t, ctx, `document.querySelectorAll('details.turn[data-turn="2"] details.req .msg').length`))
		assert.Equal(t, y, js[float64](t, ctx, `window.scrollY`), "the scroll position is kept")
		assert.Equal(t, 18, js[int](t, ctx, `window.toolloopView.calls`))
		assert.Contains(t, js[string](t, ctx, `document.getElementById('summary').textContent`), "9 turns")
		assert.Equal(t, 9, js[int](t, ctx, `document.querySelectorAll('#chart svg g.col').length`))

		// With a search and a tool filter on, an update keeps them.
		js[bool](t, ctx, `(s => { s.value = 'run_tests'; s.dispatchEvent(new Event('change')); return true })(document.getElementById('tool'))`)
		require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#search"), "turn 4")))
		before := js[[]shownCall](t, ctx, visibleCalls)
		require.NotEmpty(t, before)
		js[bool](t, ctx, `(window.toolloopView.update(`+pageJSON(t, all)+`), true)`)
		assert.Equal(t, "run_tests", js[string](t, ctx, `document.getElementById('tool').value`))
		assert.Equal(t, "turn 4", js[string](t, ctx, `document.getElementById('search').value`))
		assert.Equal(t, before, js[[]shownCall](t, ctx, visibleCalls), "the same calls show")
		assert.Equal(t, 1, js[int](t, ctx, `document.querySelectorAll('#tool option[value="run_tests"]').length`), "the tool is listed once")
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("update-jobs", func(t *testing.T) {
		// An opened job's row stays open through an update.
		log := jobLog(t)
		ctx, cons := openLog(t, bctx, log)
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#job-r-job_1 > .row`))))
		require.True(t, js[bool](t, ctx, `document.getElementById('job-r-job_1').classList.contains('open')`))
		var evs []toolloop.Event
		for e, err := range eventlog.Events(bytes.NewReader(log)) {
			require.NoError(t, err)
			evs = append(evs, e)
		}
		js[bool](t, ctx, `(window.toolloopView.update(`+pageJSON(t, evs)+`), true)`)
		assert.True(t, js[bool](t, ctx, `document.getElementById('job-r-job_1').classList.contains('open')`), "the job stays open")
		assert.False(t, js[bool](t, ctx, `document.getElementById('job-r-job_2').classList.contains('open')`))
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("update-decided", func(t *testing.T) {
		// Filtered to pending calls, then the pending call is decided:
		// the filter, which has no chip any more, lets every call show.
		paused := pausedEvents()
		ctx, cons := openLog(t, bctx, logOf(t, paused))
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#statuses button[data-status="pending"]`))))
		require.Equal(t, []shownCall{{"deploy", "pending", "c2"}}, js[[]shownCall](t, ctx, visibleCalls))
		at := paused[len(paused)-1].Time
		decided := append(paused,
			toolloop.Event{Type: toolloop.EventRunResumed, Time: at.Add(time.Second), RunID: "r", Turn: 2,
				Approvals: map[string]toolloop.Approval{"c2": {Approved: true}}},
			toolloop.Event{Type: toolloop.EventComplete, Time: at.Add(time.Second + time.Millisecond), RunID: "r", Turn: 2, CallID: "c2", Tool: "deploy",
				Result: &toolloop.ToolResult{CallID: "c2", Name: "deploy", Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("deployed")}}})
		js[bool](t, ctx, `(window.toolloopView.update(`+pageJSON(t, decided)+`), true)`)
		assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('#statuses button[data-status="pending"]').length`))
		assert.Equal(t, "ok", js[string](t, ctx, `document.querySelector('.call[data-id="c2"]').dataset.status`))
		assert.Len(t, js[[]shownCall](t, ctx, `(document.getElementById('expand').click(), `+visibleCalls+`)`), 4, "no stale filter hides the calls")
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("sub-agent-request", func(t *testing.T) {
		// A sub-agent's turns show their requests too, under the call
		// that started it.
		evs := crafted()[:5]
		t0 := evs[4].Time
		child := []toolloop.Message{toolloop.UserMessage("look it up: " + sawHostile)}
		evs = append(evs[:4], // before c1 completes
			toolloop.Event{Type: toolloop.EventRunStart, Time: t0, RunID: "k", ParentRunID: "r", ParentCallID: "c1", Messages: child},
			toolloop.Event{Type: toolloop.EventModelRequest, Time: t0, RunID: "k", ParentRunID: "r", ParentCallID: "c1", Turn: 1, Messages: child,
				Request: &toolloop.RequestInfo{From: 0, Messages: 1, Tokens: 12}},
			toolloop.Event{Type: toolloop.EventModelResponse, Time: t0, RunID: "k", ParentRunID: "r", ParentCallID: "c1", Turn: 1,
				Response: &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("found")}}}},
			toolloop.Event{Type: toolloop.EventRunEnd, Time: t0, RunID: "k", ParentRunID: "r", ParentCallID: "c1", StopReason: toolloop.StopEnd},
			evs[4])
		ctx, cons := openLog(t, bctx, logOf(t, evs))
		sub := `.call[data-id="c1"] .children details.req`
		assert.Equal(t, "request: 1 new message (1 in all) · 0 tools · ~12 tokens", js[string](t, ctx, `document.querySelector('`+sub+` > summary').textContent`))
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sub+` > summary`))))
		assert.Equal(t, "look it up: "+sawHostile, js[string](t, ctx, `document.querySelector('`+sub+` .msg pre').textContent`))
		assert.Equal(t, "undefined", js[string](t, ctx, `typeof window.pwned`))
		assert.Empty(t, cons.errors(), "the page reported errors")
	})

	t.Run("thousand-turns", func(t *testing.T) {
		// The page's own time to build, the fastest of up to three loads:
		// what varies between them is the machine's load, not the page.
		log := logOf(t, manyTurns(1000))
		var ctx context.Context
		var cons *console
		best := -1.0
		for range 3 {
			ctx, cons = openLog(t, bctx, log)
			tm := js[timing](t, ctx, timingJS)
			t.Logf("1,000 turns: DOMContentLoaded at %.0f ms, ready at %.0f ms: rendered in %.0f ms", tm.DCL, tm.Ready, tm.Ready-tm.DCL)
			if best < 0 || tm.Ready-tm.DCL < best {
				best = tm.Ready - tm.DCL
			}
			if best < 1000 {
				break
			}
		}
		assert.Less(t, best, 1000.0, "a 1,000-turn page is ready in under a second")
		assert.Equal(t, 1000, js[int](t, ctx, `document.querySelectorAll('details.turn').length`))
		assert.LessOrEqual(t, js[int](t, ctx, `document.querySelectorAll('#chart svg g.col').length`), 300)
		assert.Zero(t, js[int](t, ctx, `document.querySelectorAll('details.req:not([open]) .msg').length`), "closed requests are not built")
		start := time.Now()
		js[bool](t, ctx, `(window.toolloopView.update(JSON.parse(document.getElementById('data').textContent)), true)`)
		t.Logf("1,000 turns: update in %v", time.Since(start))
		assert.Equal(t, 1000, js[int](t, ctx, `document.querySelectorAll('details.turn').length`))
		assert.Empty(t, cons.errors(), "the page reported errors")
	})
}
