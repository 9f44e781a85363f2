package view

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// TestScreenshots writes what the page looks like for three runs a
// person debugging an agent opens most (issue 39): the quickstart's, run
// as the README's first command runs it; a run whose process died in a
// call and that was resumed from its log; and a run with a sub-agent.
// They land in $TOOLLOOP_ARTIFACTS, which CI keeps.
func TestScreenshots(t *testing.T) {
	bctx := browser(t)
	dir := artifacts(t)
	for _, pg := range []struct {
		name  string
		log   func(t *testing.T) []byte
		open  []string
		check func(t *testing.T, ctx context.Context)
	}{
		{"quickstart", quickstartLog, nil, func(t *testing.T, ctx context.Context) {
			assert.NotZero(t, js[int](t, ctx, `document.querySelectorAll('.call').length`))
		}},
		{"crashed-and-resumed", crashedLog, []string{"c2"}, func(t *testing.T, ctx context.Context) {
			sum := js[string](t, ctx, `document.getElementById('summary').textContent`)
			assert.Contains(t, sum, "stop: stop")
			assert.Contains(t, sum, "resumed 1 time")
			assert.Contains(t, sum, "in 2,700 · out 95", "the part that died counts what its turns spent")
			assert.Equal(t, "canceled", js[string](t, ctx, `document.querySelector('.call[data-id="c2"]').dataset.status`))
		}},
		{"sub-agent", func(t *testing.T) []byte {
			raw, err := os.ReadFile(threeTurnsLog)
			require.NoError(t, err)
			return raw
		}, []string{"c9"}, func(t *testing.T, ctx context.Context) {
			assert.NotZero(t, js[int](t, ctx, `document.querySelectorAll('.call[data-id="c9"] .call').length`), "the sub-agent's calls nest under its call")
		}},
	} {
		t.Run(pg.name, func(t *testing.T) {
			var page bytes.Buffer
			require.NoError(t, Render(&page, eventlog.Events(bytes.NewReader(pg.log(t))), Options{Title: pg.name}))
			file := filepath.Join(t.TempDir(), pg.name+".html")
			require.NoError(t, os.WriteFile(file, page.Bytes(), 0o644))
			ctx, cons := tab(t, bctx)
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitReady(chromedp.CSS(pageDone))))
			require.Empty(t, js[string](t, ctx, `document.body.dataset.error || ""`), "the page failed to render")
			pg.check(t, ctx)
			screenshot(t, ctx, dir, "screenshot-"+pg.name, pg.open)
			assert.Empty(t, cons.errors(), "the page reported errors")
		})
	}
}

// quickstartLog runs the quickstart (examples/quickstart, the README's
// first command) with -log and returns its log.
func quickstartLog(t *testing.T) []byte {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run the quickstart with")
	}
	log := filepath.Join(t.TempDir(), "quickstart.jsonl")
	cmd := exec.CommandContext(t.Context(), goBin, "run", "github.com/toolloop/toolloop/examples/quickstart", "-log", log)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	return raw
}

// crashedLog records a run whose process dies while its second call
// runs (the log ends there: no completion, no run.end), then resumes it
// as toolloop resume does after a crash: a new run, under a new ID, goes
// on with the transcript the log holds, whose unanswered call the loop's
// transcript repair answers.
func crashedLog(t *testing.T) []byte {
	var reg toolloop.ToolRegistry
	type in struct {
		Service string `json:"service"`
	}
	reg.MustRegister(toolloop.NewTool("status", "A service's status.", func(_ context.Context, a in) (any, error) {
		return a.Service + " is up", nil
	}))
	reg.MustRegister(toolloop.NewTool("deploy", "Deploy a service.", func(ctx context.Context, a in) (any, error) {
		<-ctx.Done() // the process dies while this runs
		return nil, ctx.Err()
	}))
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	ctx, die := context.WithCancel(t.Context())
	var dead atomic.Bool
	first := &toolloop.AgentLoop{Tools: &reg, Model: looptest.Script(
		withUsage(looptest.Calls(looptest.Call("c1", "status", `{"service":"api"}`)), 800, 40),
		withUsage(looptest.Calls(looptest.Call("c2", "deploy", `{"service":"api"}`)), 900, 30),
	), OnEvent: func(e toolloop.Event) {
		if dead.Load() {
			return // nothing a dead process does reaches its log
		}
		w.Record(e)
		if e.Type == toolloop.EventStart && e.CallID == "c2" {
			dead.Store(true)
			die()
		}
	}}
	_, err := first.Run(ctx, []toolloop.Message{toolloop.UserMessage("Check the api service and deploy it.")})
	require.Error(t, err)
	require.NoError(t, w.Close())

	rp, err := eventlog.Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	w = eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	second := &toolloop.AgentLoop{Tools: &reg, OnEvent: w.Record, Model: looptest.Script(
		withUsage(looptest.Text("The deploy was interrupted; api is up on the old version."), 1000, 25),
	)}
	res, err := second.Run(t.Context(), rp.Transcript())
	require.NoError(t, err)
	require.Equal(t, toolloop.StopEnd, res.StopReason)
	require.NoError(t, w.Close())
	return buf.Bytes()
}
