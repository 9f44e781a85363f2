package eventlog_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// fakeFile is an io.Writer with Sync that counts what it is asked to do
// and can be made to fail.
type fakeFile struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	syncs  int
	err    error
}

func (f *fakeFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	f.writes++
	return f.buf.Write(p)
}

func (f *fakeFile) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	return f.err
}

func (f *fakeFile) state() (lines, syncs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Count(f.buf.String(), "\n"), f.syncs
}

func ev(t toolloop.EventType) toolloop.Event {
	return toolloop.Event{Type: t, RunID: "run_1", Turn: 1}
}

func completion(id, name string) toolloop.Event {
	e := ev(toolloop.EventComplete)
	e.CallID, e.Tool = id, name
	e.Result = toolloop.TextResult("ok")
	e.Result.CallID, e.Result.Name = id, name
	return e
}

func TestWriterSyncPolicy(t *testing.T) {
	tests := []struct {
		name string
		opts eventlog.Options
		// durable events recorded, and syncs expected before Close and
		// after it.
		durable                 int
		syncsBefore, syncsAfter int
	}{
		{name: "default syncs each durable event", durable: 3, syncsBefore: 3, syncsAfter: 4},
		{name: "every 2", opts: eventlog.Options{SyncEvery: 2}, durable: 5, syncsBefore: 2, syncsAfter: 3},
		{name: "never", opts: eventlog.Options{NoSync: true}, durable: 3, syncsBefore: 0, syncsAfter: 0},
		{name: "long interval waits", opts: eventlog.Options{SyncInterval: time.Hour}, durable: 3, syncsBefore: 0, syncsAfter: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := new(fakeFile)
			w := eventlog.NewWriter(f, tt.opts)
			for i := range tt.durable {
				w.Record(ev(toolloop.EventProgress)) // transient: buffered
				w.Record(completion("call_"+string(rune('a'+i)), "echo"))
			}
			lines, syncs := f.state()
			// Durable events are written through whatever the policy, and
			// carry the transient ones before them.
			assert.Equal(t, 2*tt.durable, lines)
			assert.Equal(t, tt.syncsBefore, syncs)
			require.NoError(t, w.Close())
			_, syncs = f.state()
			assert.Equal(t, tt.syncsAfter, syncs)
		})
	}
}

// TestWriterPipe checks that a file that cannot be synced, such as a pipe
// or os.Stdout, is written through without error.
func TestWriterPipe(t *testing.T) {
	r, pw, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	w := eventlog.NewWriter(pw, eventlog.Options{})
	w.Record(completion("call_1", "echo"))
	w.Record(completion("call_2", "echo"))
	require.NoError(t, w.Close())
	require.NoError(t, pw.Close())
	rp, err := eventlog.Read(r)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"call_1": true, "call_2": true}, rp.Completed)
}

func TestWriterSyncInterval(t *testing.T) {
	f := new(fakeFile)
	w := eventlog.NewWriter(f, eventlog.Options{SyncInterval: 5 * time.Millisecond})
	defer w.Close()
	w.Record(completion("call_1", "echo"))
	// A timer syncs the event though no other event comes.
	assert.Eventually(t, func() bool { _, s := f.state(); return s >= 1 }, 5*time.Second, time.Millisecond)
}

func TestWriterBuffersTransientEvents(t *testing.T) {
	f := new(fakeFile)
	w := eventlog.NewWriter(f, eventlog.Options{})
	w.Record(ev(toolloop.EventStart))
	w.Record(ev(toolloop.EventModelDelta))
	lines, _ := f.state()
	assert.Zero(t, lines, "transient events wait for a durable one")
	require.NoError(t, w.Flush())
	lines, _ = f.state()
	assert.Equal(t, 2, lines)
	require.NoError(t, w.Close())
}

func TestWriterDropTransient(t *testing.T) {
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{DropTransient: true})
	for _, typ := range []toolloop.EventType{toolloop.EventRunStart, toolloop.EventModelRequest, toolloop.EventStart,
		toolloop.EventProgress, toolloop.EventPartialResult, toolloop.EventModelDelta, toolloop.EventComplete, toolloop.EventRunEnd} {
		w.Record(ev(typ))
	}
	require.NoError(t, w.Close())
	var got []toolloop.EventType
	for e, err := range eventlog.Events(&buf) {
		require.NoError(t, err)
		got = append(got, e.Type)
	}
	assert.Equal(t, []toolloop.EventType{toolloop.EventRunStart, toolloop.EventComplete, toolloop.EventRunEnd}, got)
}

func TestWriterErrors(t *testing.T) {
	t.Run("write error stops the log", func(t *testing.T) {
		f := &fakeFile{err: errBoom}
		w := eventlog.NewWriter(f, eventlog.Options{})
		assert.NotPanics(t, func() {
			w.Record(completion("call_1", "echo"))
			w.Record(completion("call_2", "echo"))
		})
		require.ErrorIs(t, w.Err(), errBoom)
		assert.ErrorIs(t, w.Close(), errBoom)
		assert.ErrorIs(t, w.Close(), errBoom, "a second Close reports the same")
		assert.NotPanics(t, func() { w.Record(completion("call_3", "echo")) })
	})
	t.Run("sync error", func(t *testing.T) {
		f := new(fakeFile)
		w := eventlog.NewWriter(f, eventlog.Options{})
		w.Record(completion("call_1", "echo"))
		f.mu.Lock()
		f.err = errBoom
		f.mu.Unlock()
		w.Record(completion("call_2", "echo"))
		assert.ErrorIs(t, w.Err(), errBoom)
		assert.ErrorIs(t, w.Close(), errBoom)
	})
	t.Run("an event that cannot be encoded is skipped", func(t *testing.T) {
		var buf bytes.Buffer
		w := eventlog.NewWriter(&buf, eventlog.Options{})
		bad := completion("call_1", "echo")
		bad.Result.Content = []toolloop.Content{{Type: toolloop.ContentJSON, JSON: json.RawMessage("{not json")}}
		w.Record(bad)
		w.Record(completion("call_2", "echo"))
		var me *json.MarshalerError
		assert.ErrorAs(t, w.Err(), &me)
		assert.ErrorAs(t, w.Close(), &me)
		rp, err := eventlog.Read(&buf)
		require.NoError(t, err)
		assert.Equal(t, map[string]bool{"call_2": true}, rp.Completed)
	})
	t.Run("closed", func(t *testing.T) {
		w := eventlog.NewWriter(new(bytes.Buffer), eventlog.Options{})
		require.NoError(t, w.Close())
		require.NoError(t, w.Close())
		assert.ErrorIs(t, w.Flush(), eventlog.ErrClosed)
		assert.ErrorIs(t, w.Sync(), eventlog.ErrClosed)
		assert.NotPanics(t, func() { w.Record(completion("call_1", "echo")) })
		assert.NoError(t, w.Err())
	})
}

func TestCreateAndOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.jsonl")

	w, err := eventlog.Create(path, eventlog.Options{})
	require.NoError(t, err)
	w.Record(completion("call_1", "echo"))
	require.NoError(t, w.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	w, err = eventlog.Open(path, eventlog.Options{})
	require.NoError(t, err)
	w.Record(completion("call_2", "echo"))
	require.NoError(t, w.Close())

	rp, err := eventlog.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"call_1": true, "call_2": true}, rp.Completed)

	w, err = eventlog.Create(path, eventlog.Options{})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	rp, err = eventlog.ReadFile(path)
	require.NoError(t, err)
	assert.Empty(t, rp.Completed, "Create truncates")
}

func TestOpenRepairsTheTail(t *testing.T) {
	line := func(id string) string {
		b, err := json.Marshal(completion(id, "echo"))
		require.NoError(t, err)
		return string(b)
	}
	tests := []struct {
		name string
		// content is the file before Open.
		content string
		want    map[string]bool
	}{
		{name: "torn line is cut", content: line("call_1") + "\n" + line("call_2")[:40], want: map[string]bool{"call_1": true, "call_3": true}},
		{name: "only a torn line", content: line("call_2")[:40], want: map[string]bool{"call_3": true}},
		{name: "whole line without newline is kept", content: line("call_1") + "\n" + line("call_2"),
			want: map[string]bool{"call_1": true, "call_2": true, "call_3": true}},
		{name: "clean", content: line("call_1") + "\n", want: map[string]bool{"call_1": true, "call_3": true}},
		{name: "empty", want: map[string]bool{"call_3": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			w, err := eventlog.Open(path, eventlog.Options{})
			require.NoError(t, err)
			w.Record(completion("call_3", "echo"))
			require.NoError(t, w.Close())
			rp, err := eventlog.ReadFile(path)
			require.NoError(t, err, "no corrupt line in the middle")
			assert.False(t, rp.Torn)
			assert.Equal(t, tt.want, rp.Completed)
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := eventlog.Open(filepath.Join(dir, "missing", "log.jsonl"), eventlog.Options{})
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = eventlog.Create(filepath.Join(dir, "missing", "log.jsonl"), eventlog.Options{})
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = eventlog.ReadFile(filepath.Join(dir, "missing.jsonl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				w.Record(completion("call_"+string(rune('a'+i))+"_"+string(rune('a'+j%26))+string(rune('a'+j/26)), "echo"))
				w.Record(ev(toolloop.EventProgress))
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	rp, err := eventlog.Read(&buf)
	require.NoError(t, err)
	assert.Len(t, rp.Completed, 400)
	assert.Equal(t, 800, rp.Events)
}
