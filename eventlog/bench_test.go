package eventlog_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// BenchmarkRecord measures Record for a completion event (durable) and a
// progress event (transient), to a discarding writer and to a file under
// several sync policies.
func BenchmarkRecord(b *testing.B) {
	durable := completion("call_1", "echo")
	durable.Result = toolloop.TextResult(string(make([]byte, 512)))
	transient := ev(toolloop.EventProgress)
	transient.Progress = &toolloop.Progress{Message: "working", Done: 1, Total: 2}
	for _, bc := range []struct {
		name  string
		file  bool
		opts  eventlog.Options
		event toolloop.Event
	}{
		{name: "transient", event: transient},
		{name: "durable/discard", event: durable},
		{name: "durable/file-nosync", file: true, opts: eventlog.Options{NoSync: true}, event: durable},
		{name: "durable/file-sync-every-64", file: true, opts: eventlog.Options{SyncEvery: 64}, event: durable},
		{name: "durable/file-sync-each", file: true, event: durable},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var w *eventlog.Writer
			if bc.file {
				var err error
				w, err = eventlog.Create(filepath.Join(b.TempDir(), "log.jsonl"), bc.opts)
				if err != nil {
					b.Fatal(err)
				}
			} else {
				w = eventlog.NewWriter(io.Discard, bc.opts)
			}
			b.ReportAllocs()
			for b.Loop() {
				w.Record(bc.event)
			}
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
