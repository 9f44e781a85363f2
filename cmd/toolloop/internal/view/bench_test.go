package view

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// BenchmarkRender renders the 500-turn run: from its log (decoding
// included, as toolloop view does), and from decoded events (the model
// and the page alone).
func BenchmarkRender(b *testing.B) {
	raw, err := longRun()
	require.NoError(b, err)
	var evs []toolloop.Event
	for e, err := range eventlog.Events(bytes.NewReader(raw)) {
		require.NoError(b, err)
		evs = append(evs, e)
	}
	var page bytes.Buffer
	require.NoError(b, Render(&page, events(evs...), Options{}))
	b.Logf("500 turns: %d events, %d bytes of log, %d bytes of page", len(evs), len(raw), page.Len())

	b.Run("log", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if err := Render(io.Discard, eventlog.Events(bytes.NewReader(raw)), Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("events", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := Render(io.Discard, events(evs...), Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
