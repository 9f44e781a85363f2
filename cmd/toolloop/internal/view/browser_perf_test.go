package view

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/eventlog"
)

// pageOpenBound is what the timing test asserts of a 1,000-turn page:
// far above what it takes (the issue asks for under a second, logged by
// the test), so that only a page gone slow by an order of magnitude
// fails on a loaded machine.
const pageOpenBound = 5000.0 // ms

// TestBrowserOpenTime opens the page of the 1,000-turn run from a file
// three times, and that of the 5,000-turn run once, and logs when the
// page's DOMContentLoaded came and when its script had built it, in
// milliseconds since navigation; of the 1,000-turn page's best it asserts
// pageOpenBound, of the 5,000-turn page's nothing.
func TestBrowserOpenTime(t *testing.T) {
	bctx := browser(t)
	for _, run := range []struct {
		turns, tries int
		log          func() ([]byte, error)
		bound        float64 // 0: none
	}{{1000, 3, longRun1000, pageOpenBound}, {5000, 1, longRun5000, 0}} {
		raw, err := run.log()
		require.NoError(t, err)
		var page bytes.Buffer
		require.NoError(t, Render(&page, eventlog.Events(bytes.NewReader(raw)), Options{}))
		file := filepath.Join(t.TempDir(), "long.html")
		require.NoError(t, os.WriteFile(file, page.Bytes(), 0o644))
		want := countCalls(t, raw).total
		var best timing
		for i := range run.tries {
			ctx, cons := tab(t, bctx)
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitReady(chromedp.CSS(pageDone))))
			require.Empty(t, js[string](t, ctx, `document.body.dataset.error || ""`), "the page failed to render")
			require.Equal(t, want, js[int](t, ctx, `document.querySelectorAll('.call').length`), "every call has its row")
			tm := js[timing](t, ctx, timingJS)
			t.Logf("%d turns, %d bytes of page, try %d: DOMContentLoaded at %.0f ms, ready at %.0f ms", run.turns, page.Len(), i+1, tm.DCL, tm.Ready)
			if i == 0 || tm.Ready < best.Ready {
				best = tm
			}
			assert.Empty(t, cons.errors())
		}
		t.Logf("%d turns: best of %d: DOMContentLoaded at %.0f ms, ready at %.0f ms", run.turns, run.tries, best.DCL, best.Ready)
		if run.bound > 0 {
			assert.Less(t, best.Ready, run.bound, "the %d-turn page took too long to open", run.turns)
		}
	}
}
