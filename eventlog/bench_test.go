package eventlog_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sanitize"
)

// benchDirEnv names a directory for the benchmarks' log files. Syncing
// costs what the disk makes it cost: on tmpfs or a disk that ignores
// fsync it costs next to nothing, so set this to a directory on the disk
// the logs will live on when TMPDIR is not one. BenchmarkFsync tells
// whether a directory's disk really syncs.
const benchDirEnv = "TOOLLOOP_BENCH_DIR"

// benchFile creates a log file for a benchmark, in $TOOLLOOP_BENCH_DIR or
// else in the test's temporary directory.
func benchFile(b *testing.B) *os.File {
	b.Helper()
	dir := b.TempDir()
	if d := os.Getenv(benchDirEnv); d != "" {
		var err error
		if dir, err = os.MkdirTemp(d, "eventlog-bench"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	f, err := os.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// countingFile counts a file's syncs.
type countingFile struct {
	*os.File
	syncs atomic.Int64
}

func (f *countingFile) Sync() error {
	f.syncs.Add(1)
	return f.File.Sync()
}

// benchPolicies are the sync policies the benchmarks compare.
var benchPolicies = []struct {
	name string
	opts eventlog.Options
}{
	{name: "default", opts: eventlog.Options{}},
	{name: "every-1", opts: eventlog.Options{SyncEvery: 1}},
	{name: "every-64", opts: eventlog.Options{SyncEvery: 64}},
	{name: "interval-10ms", opts: eventlog.Options{SyncInterval: 10 * time.Millisecond}},
	{name: "nosync", opts: eventlog.Options{NoSync: true}},
}

// BenchmarkFsync is the disk's cost of appending a line of 600 bytes and
// syncing it, without the Writer: the floor of a synced event. If it is a
// few microseconds, the disk does not really sync; see benchDirEnv.
func BenchmarkFsync(b *testing.B) {
	f := benchFile(b)
	line := make([]byte, 600)
	line[len(line)-1] = '\n'
	for b.Loop() {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecord measures Record for one event: a completion (durable), a
// model response with calls (a sync point) and a progress event
// (transient), to a discarding writer and to a file under each policy.
func BenchmarkRecord(b *testing.B) {
	durable := completion("call_1", "echo")
	durable.Result = toolloop.TextResult(string(make([]byte, 512)))
	transient := ev(toolloop.EventProgress)
	transient.Progress = &toolloop.Progress{Message: "working", Done: 1, Total: 2}
	point := syncPoint("call_1")

	b.Run("transient", func(b *testing.B) { benchRecord(b, eventlog.NewWriter(io.Discard, eventlog.Options{}), transient) })
	b.Run("durable/discard", func(b *testing.B) { benchRecord(b, eventlog.NewWriter(io.Discard, eventlog.Options{}), durable) })
	for _, p := range benchPolicies {
		for _, e := range []struct {
			name  string
			event toolloop.Event
		}{{"durable", durable}, {"syncpoint", point}} {
			b.Run(e.name+"/file-"+p.name, func(b *testing.B) {
				f := &countingFile{File: benchFile(b)}
				benchRecord(b, eventlog.NewWriter(f, p.opts), e.event)
				b.ReportMetric(float64(f.syncs.Load())/float64(b.N), "fsyncs/op")
			})
		}
	}
}

func benchRecord(b *testing.B, w *eventlog.Writer, e toolloop.Event) {
	b.ReportAllocs()
	for b.Loop() {
		w.Record(e)
	}
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// turnOf returns the events of one turn as the loop reports them: the
// model request, the model response asking for four calls, and each
// call's start and completion, with a 512-byte result.
func turnOf(run string) []toolloop.Event {
	var calls []toolloop.ToolCall
	for i := range 4 {
		calls = append(calls, toolloop.ToolCall{ID: fmt.Sprintf("%s_call_%d", run, i), Name: "echo", Arguments: []byte(`{"text":"hi"}`)})
	}
	resp := ev(toolloop.EventModelResponse)
	resp.RunID = run
	resp.Response = &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: calls}}
	req := ev(toolloop.EventModelRequest)
	req.RunID = run
	events := []toolloop.Event{req, resp}
	for _, c := range calls {
		start := ev(toolloop.EventStart)
		start.RunID, start.CallID, start.Tool, start.Arguments = run, c.ID, c.Name, c.Arguments
		done := completion(c.ID, c.Name)
		done.RunID = run
		done.Result = toolloop.TextResult(string(make([]byte, 512)))
		events = append(events, start, done)
	}
	return events
}

// BenchmarkTurn records the ten events of a turn with four calls (see
// turnOf), one after another as the loop does, under each policy:
// "serial" is one run, "parallel" is several runs at once sharing the
// Writer (eight goroutines on two cores), whose syncs group commit joins.
func BenchmarkTurn(b *testing.B) {
	for _, p := range benchPolicies {
		b.Run("serial/"+p.name, func(b *testing.B) {
			f := &countingFile{File: benchFile(b)}
			w := eventlog.NewWriter(f, p.opts)
			turn := turnOf("run_1")
			b.ReportAllocs()
			for b.Loop() {
				for _, e := range turn {
					w.Record(e)
				}
			}
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(f.syncs.Load())/float64(b.N), "fsyncs/turn")
		})
		b.Run("parallel/"+p.name, func(b *testing.B) {
			f := &countingFile{File: benchFile(b)}
			w := eventlog.NewWriter(f, p.opts)
			var runs atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				turn := turnOf(fmt.Sprintf("run_%d", runs.Add(1)))
				for pb.Next() {
					for _, e := range turn {
						w.Record(e)
					}
				}
			})
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(f.syncs.Load())/float64(b.N), "fsyncs/turn")
		})
	}
}

// BenchmarkRun runs the loop with the log as its OnEvent: a run of two
// turns, the first asking for four calls of a no-op tool, the second
// answering. The default syncs twice per run: before the calls run, and
// at the run's end.
func BenchmarkRun(b *testing.B) {
	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(toolloop.NewTool("echo", "Echoes its text.", func(_ context.Context, in echoArgs) (any, error) {
		return in.Text, nil
	}))
	var calls []toolloop.ToolCall
	for i := range 4 {
		calls = append(calls, looptest.Call(fmt.Sprintf("call_%d", i), "echo", `{"text":"hi"}`))
	}
	input := []toolloop.Message{toolloop.UserMessage("go")}
	for _, p := range benchPolicies {
		b.Run(p.name, func(b *testing.B) {
			f := &countingFile{File: benchFile(b)}
			w := eventlog.NewWriter(f, p.opts)
			b.ReportAllocs()
			for b.Loop() {
				loop := &toolloop.AgentLoop{Model: looptest.Script(looptest.Calls(calls...), looptest.Text("done")), Tools: reg, OnEvent: w.Record}
				if _, err := loop.Run(context.Background(), input); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(f.syncs.Load())/float64(b.N), "fsyncs/run")
		})
	}
}

// BenchmarkRecordStreamRedacted records a stream of 64 KiB, prose and code
// with a secret every 8 KiB, through a Writer that redacts with a
// sanitize.Redactor, then the event that ends it: as a model's deltas of
// 16 bytes, and as a tool's partial output in chunks of 4 KiB. Per op is
// the whole stream.
func BenchmarkRecordStreamRedacted(b *testing.B) {
	var r sanitize.Redactor
	unit := "The handler checks the path, then reads the body; if n < 2 it returns early.\n" +
		"\tif err := s.store.Put(ctx, key, value); err != nil { return fmt.Errorf(\"put %q: %w\", key, err) }\n"
	var text strings.Builder
	for text.Len() < 64<<10 {
		for text.Len()%(8<<10) < (8<<10)-len(unit) && text.Len() < 64<<10 {
			text.WriteString(unit)
		}
		text.WriteString("export GITHUB_TOKEN=ghp_" + strings.Repeat("a1B2c3", 6) + "\n")
	}
	stream := text.String()
	for _, c := range []struct {
		name  string
		size  int
		piece func(string) toolloop.Event
		end   toolloop.Event
	}{
		{"deltas-16B", 16, func(s string) toolloop.Event {
			return toolloop.Event{Type: toolloop.EventModelDelta, RunID: "run_1", Turn: 1, Text: s}
		}, toolloop.Event{Type: toolloop.EventModelResponse, RunID: "run_1", Turn: 1, Response: &toolloop.Response{}}},
		{"output-4KiB", 4 << 10, func(s string) toolloop.Event {
			return toolloop.Event{Type: toolloop.EventPartialResult, RunID: "run_1", CallID: "call_1", Text: s}
		}, completion("call_1", "sh")},
	} {
		var pieces []toolloop.Event
		for rest := stream; rest != ""; {
			n := min(len(rest), c.size)
			pieces = append(pieces, c.piece(rest[:n]))
			rest = rest[n:]
		}
		c.end.RunID = "run_1"
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				w := eventlog.NewWriter(io.Discard, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
				for _, p := range pieces {
					w.Record(p)
				}
				w.Record(c.end)
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pieces)), "ns/piece")
		})
	}
}
