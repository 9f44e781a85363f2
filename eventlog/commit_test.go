package eventlog_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// syncPoint is a model response with a call: an event every policy but
// NoSync syncs before Record returns.
func syncPoint(id string) toolloop.Event {
	e := ev(toolloop.EventModelResponse)
	e.CallID = id // for fakeFile.durable
	e.Response = &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant,
		ToolCalls: []toolloop.ToolCall{{ID: id, Name: "echo"}}}}
	return e
}

// blockFirstSync makes f's first Sync wait until the test closes the
// returned channel, and reports on started when it begins.
func blockFirstSync(f *fakeFile) (started chan struct{}, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	f.syncHook = func(n int) {
		if n == 1 {
			close(started)
			<-release
		}
	}
	return started, release
}

// waitFor waits for ch to be closed.
func waitFor(t *testing.T, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the first Record never synced")
	}
}

// waitQueued waits until n events wait in w for the next write.
func waitQueued(t *testing.T, w *eventlog.Writer, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return bytes.Count(eventlog.Queued(w), []byte("\n")) == n },
		10*time.Second, time.Millisecond, "the recorders never queued")
}

// waitWritten waits until f holds n lines.
func waitWritten(t *testing.T, f *fakeFile, n int) {
	t.Helper()
	require.Eventually(t, func() bool { lines, _ := f.state(); return lines == n },
		10*time.Second, time.Millisecond, "the recorders never wrote")
}

// overlapModes are the two ways a Writer uses its underlying writer: one
// call at a time, or, as for an *os.File, writing while a sync is under
// way.
var overlapModes = []struct {
	name    string
	overlap bool
}{{"one call at a time", false}, {"writes during a sync", true}}

// TestGroupCommit: Records that need a sync while another's sync is under
// way share the next one, and each returns only once its event is synced.
func TestGroupCommit(t *testing.T) {
	const n = 8
	for _, mode := range overlapModes {
		t.Run(mode.name, func(t *testing.T) {
			f := new(fakeFile)
			started, release := blockFirstSync(f)
			w := eventlog.NewWriter(f, eventlog.Options{})
			eventlog.SetOverlap(w, mode.overlap)
			var returned atomic.Int32
			var wg sync.WaitGroup
			record := func(id string) {
				w.Record(syncPoint(id))
				assert.True(t, f.durable(id), "%s: Record returned before its event was synced", id)
				returned.Add(1)
			}
			wg.Go(func() { record("call_first") })
			waitFor(t, started)
			for i := range n {
				wg.Go(func() { record(fmt.Sprintf("call_%d", i)) })
			}
			if mode.overlap {
				waitWritten(t, f, n+1) // written, waiting for the sync
			} else {
				waitQueued(t, w, n) // waiting for the write
			}
			assert.Zero(t, returned.Load(), "no Record returns before a sync covers it")
			close(release)
			wg.Wait()
			require.NoError(t, w.Close())
			lines, syncs := f.state()
			assert.Equal(t, n+1, lines)
			assert.Equal(t, 2, syncs, "the first Record's sync, and one for the eight that came during it")
			assert.True(t, f.oneAtATime(mode.overlap))
		})
	}
}

// TestGroupCommitSyncError: a failed sync fails every Record of its batch
// and of the batch queued behind it, stops the log, and is never followed
// by another sync that would report as durable what it lost.
func TestGroupCommitSyncError(t *testing.T) {
	const n = 8
	for _, mode := range overlapModes {
		t.Run(mode.name, func(t *testing.T) {
			f := &fakeFile{failSync: 1}
			started, release := blockFirstSync(f)
			w := eventlog.NewWriter(f, eventlog.Options{})
			eventlog.SetOverlap(w, mode.overlap)
			w.Record(ev(toolloop.EventRunStart)) // written, not synced
			var wg sync.WaitGroup
			record := func(id string) {
				w.Record(syncPoint(id))
				assert.ErrorIs(t, w.Err(), errBoom, "%s: Record returned without its sync and without an error", id)
				assert.False(t, f.durable(id))
			}
			wg.Go(func() { record("call_first") })
			waitFor(t, started)
			for i := range n {
				wg.Go(func() { record(fmt.Sprintf("call_%d", i)) })
			}
			written := 2 // run.start and the first
			if mode.overlap {
				written += n
				waitWritten(t, f, written)
			} else {
				waitQueued(t, w, n)
			}
			close(release)
			wg.Wait()

			w.Record(syncPoint("call_late"))
			assert.ErrorIs(t, w.Close(), errBoom)
			lines, syncs := f.state()
			assert.Equal(t, written, lines, "nothing is written after the failed sync")
			assert.Equal(t, 1, syncs, "no sync after the failed one, not even by Close")
			assert.ErrorIs(t, w.Sync(), eventlog.ErrClosed)
			assert.True(t, f.oneAtATime(mode.overlap))
		})
	}
}

// TestGroupCommitStress: many recorders at once, under every policy, with
// syncs that sometimes fail: whenever a Record of an event the policy syncs
// returns, its event is durable or the log has failed; the underlying
// writer never sees two calls at once (or two of a kind, when writes may
// go on during a sync); and without a failure the log holds every event.
func TestGroupCommitStress(t *testing.T) {
	const recorders, each = 8, 40
	for _, mode := range overlapModes {
		for _, tc := range []struct {
			name     string
			opts     eventlog.Options
			failSync int
		}{
			{name: "default"},
			{name: "every 1", opts: eventlog.Options{SyncEvery: 1}},
			{name: "every 3", opts: eventlog.Options{SyncEvery: 3}},
			{name: "interval", opts: eventlog.Options{SyncInterval: time.Millisecond}},
			{name: "default, a sync fails", failSync: 5},
			{name: "every 1, a sync fails", opts: eventlog.Options{SyncEvery: 1}, failSync: 20},
		} {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				f := &fakeFile{failSync: tc.failSync}
				f.syncHook = func(int) { time.Sleep(50 * time.Microsecond) }
				w := eventlog.NewWriter(f, tc.opts)
				eventlog.SetOverlap(w, mode.overlap)
				var wg sync.WaitGroup
				for r := range recorders {
					wg.Go(func() {
						for i := range each {
							id := fmt.Sprintf("call_%d_%d", r, i)
							e := completion(id, "echo")
							mustSync := tc.opts.SyncEvery == 1
							if i%4 == 0 {
								e, mustSync = syncPoint(id), true
							}
							w.Record(ev(toolloop.EventProgress))
							w.Record(e)
							if mustSync && !f.durable(id) && w.Err() == nil {
								t.Errorf("%s: Record returned, the event is not durable, and the log has not failed", id)
								return
							}
						}
					})
				}
				wg.Wait()
				closeErr := w.Close()
				assert.True(t, f.oneAtATime(mode.overlap))
				rp, err := eventlog.Read(bytes.NewReader(f.buf.Bytes()))
				require.NoError(t, err)
				if tc.failSync == 0 {
					require.NoError(t, closeErr)
					assert.Len(t, rp.Completed, recorders*each*3/4)
					assert.Equal(t, 2*recorders*each, rp.Events)
					assert.Equal(t, f.buf.Len(), f.synced, "Close synced it all")
				} else {
					assert.ErrorIs(t, closeErr, errBoom)
				}
			})
		}
	}
}

// TestSyncsPerTurn runs the loop on turns of four parallel calls: the
// default policy syncs once per turn with calls and once at the run's end,
// and every call runs only once the model response that asked for it is
// durable.
func TestSyncsPerTurn(t *testing.T) {
	const turns, calls = 3, 4
	var replies []*toolloop.Response
	for turn := range turns {
		var tcs []toolloop.ToolCall
		for c := range calls {
			tcs = append(tcs, looptest.Call(fmt.Sprintf("call_%d_%d", turn, c), "check", fmt.Sprintf(`{"id":"call_%d_%d"}`, turn, c)))
		}
		replies = append(replies, looptest.Calls(tcs...))
	}
	replies = append(replies, looptest.Text("done"))

	for _, tc := range []struct {
		name  string
		opts  eventlog.Options
		syncs func(durable int) int
	}{
		{name: "default", syncs: func(int) int { return turns + 1 }},
		{name: "every 1", opts: eventlog.Options{SyncEvery: 1}, syncs: func(durable int) int { return durable }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := new(fakeFile)
			w := eventlog.NewWriter(f, tc.opts)
			var ran atomic.Int32
			check := toolloop.NewTool("check", "Checks that its call is on disk.", func(_ context.Context, in struct {
				ID string `json:"id"`
			}) (any, error) {
				id := in.ID
				ran.Add(1)
				assert.True(t, f.durableText(`"id":"`+id+`"`), "%s runs before the response that asked for it is durable", id)
				return "ok", nil
			})
			reg := new(toolloop.ToolRegistry)
			reg.MustRegister(check)
			loop := &toolloop.AgentLoop{Model: looptest.Script(replies...), Tools: reg, OnEvent: w.Record}
			res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
			require.NoError(t, err)
			assert.Equal(t, "done", res.FinalText)
			assert.EqualValues(t, turns*calls, ran.Load())
			_, syncs := f.state()
			require.NoError(t, w.Close())
			_, afterClose := f.state()
			assert.Equal(t, syncs, afterClose, "the run's end synced it all")

			durable := 0
			for e, err := range eventlog.Events(bytes.NewReader(f.buf.Bytes())) {
				require.NoError(t, err)
				if !e.Type.Transient() {
					durable++
				}
			}
			assert.Equal(t, tc.syncs(durable), syncs, "%d durable events", durable)
		})
	}
}

func TestSyncPoint(t *testing.T) {
	text := ev(toolloop.EventModelResponse)
	text.Response = looptest.Text("done")
	tests := []struct {
		name string
		e    toolloop.Event
		want bool
	}{
		{"a response with calls", syncPoint("call_1"), true},
		{"a response without calls", text, false},
		{"a response without its body", ev(toolloop.EventModelResponse), false},
		{"a resumption", ev(toolloop.EventRunResumed), true},
		{"a run's end", ev(toolloop.EventRunEnd), true},
		{"a run's start", ev(toolloop.EventRunStart), false},
		{"a pause, which run.end follows", ev(toolloop.EventRunPaused), false},
		{"a completion", completion("call_1", "echo"), false},
		{"a transient event", ev(toolloop.EventStart), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, eventlog.SyncPoint(tt.e))
		})
	}
}
