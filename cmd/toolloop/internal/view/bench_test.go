package view

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// BenchmarkRender renders the 500-turn run: from its log (decoding
// included, as toolloop view does), and from decoded events (the model
// and the page alone). Each reports the page's size (page-bytes).
func BenchmarkRender(b *testing.B) {
	raw, err := longRun()
	require.NoError(b, err)
	benchmarkRender(b, raw, longRunTurns)
}

// BenchmarkRenderLong renders runs of 1,000 and 5,000 turns, as
// BenchmarkRender does, and their data alone (data: what a live page asks
// for at each change of its log, decoding included).
func BenchmarkRenderLong(b *testing.B) {
	for _, run := range []struct {
		turns int
		log   func() ([]byte, error)
	}{{1000, longRun1000}, {5000, longRun5000}} {
		b.Run(fmt.Sprintf("turns=%d", run.turns), func(b *testing.B) {
			raw, err := run.log()
			require.NoError(b, err)
			benchmarkRender(b, raw, run.turns)
			b.Run("data", func(b *testing.B) {
				var data bytes.Buffer
				require.NoError(b, Data(&data, eventlog.Events(bytes.NewReader(raw)), Options{}))
				b.SetBytes(int64(len(raw)))
				b.ReportAllocs()
				for b.Loop() {
					if err := Data(io.Discard, eventlog.Events(bytes.NewReader(raw)), Options{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(data.Len()), "data-bytes")
			})
		})
	}
}

// benchmarkRender renders the log raw of a run of the turns given, from
// the log and from its events.
func benchmarkRender(b *testing.B, raw []byte, turns int) {
	var evs []toolloop.Event
	for e, err := range eventlog.Events(bytes.NewReader(raw)) {
		require.NoError(b, err)
		evs = append(evs, e)
	}
	var page bytes.Buffer
	require.NoError(b, Render(&page, events(evs...), Options{}))
	b.Logf("%d turns: %d events, %d bytes of log, %d bytes of page", turns, len(evs), len(raw), page.Len())

	b.Run("log", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if err := Render(io.Discard, eventlog.Events(bytes.NewReader(raw)), Options{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(page.Len()), "page-bytes")
	})
	b.Run("events", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := Render(io.Discard, events(evs...), Options{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(page.Len()), "page-bytes")
	})
}
