package eventlog_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// fakeFile is an io.Writer with Sync that counts what it is asked to do
// and can be made to fail. It models fsync: a Sync makes durable what was
// written before it began, and after a Sync failed, what it was to make
// durable is lost, whatever later ones say.
type fakeFile struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	syncs  int
	err    error // fails every Write and Sync
	// failSync, if positive, fails that Sync (counting from 1) with
	// errBoom; failed records that one did.
	failSync int
	failed   bool
	// synced is the length of buf that completed syncs made durable.
	synced int
	// syncHook, if set, is called at the start of each Sync with its
	// number, without mu held.
	syncHook func(n int)
	// writing and syncing count the Writes and Syncs under way; concurrent
	// records that two Writes or two Syncs ever were, mixed that a Write
	// and a Sync were.
	writing, syncing  atomic.Int32
	concurrent, mixed atomic.Bool
}

func (f *fakeFile) enter(mine, other *atomic.Int32) {
	if mine.Add(1) > 1 {
		f.concurrent.Store(true)
	}
	if other.Load() > 0 {
		f.mixed.Store(true)
	}
}

// oneAtATime reports whether the Writer never made two calls at once,
// or, if overlap is set, never two of one kind.
func (f *fakeFile) oneAtATime(overlap bool) bool {
	return !f.concurrent.Load() && (overlap || !f.mixed.Load())
}

func (f *fakeFile) Write(p []byte) (int, error) {
	f.enter(&f.writing, &f.syncing)
	defer f.writing.Add(-1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	f.writes++
	return f.buf.Write(p)
}

func (f *fakeFile) Sync() error {
	f.enter(&f.syncing, &f.writing)
	defer f.syncing.Add(-1)
	f.mu.Lock()
	f.syncs++
	n, size, hook := f.syncs, f.buf.Len(), f.syncHook
	f.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.err != nil:
		return f.err
	case n == f.failSync:
		f.failed = true
		return errBoom
	case !f.failed:
		f.synced = size
	}
	return nil
}

func (f *fakeFile) state() (lines, syncs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Count(f.buf.String(), "\n"), f.syncs
}

// durable reports whether the line of the call with this ID was written
// and made durable.
func (f *fakeFile) durable(id string) bool {
	return f.durableText(`"call_id":"` + id + `"`)
}

// durableText reports whether the first line that holds text was written
// and made durable.
func (f *fakeFile) durableText(text string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.buf.Bytes()
	i := bytes.Index(b, []byte(text))
	if i < 0 {
		return false
	}
	end := bytes.IndexByte(b[i:], '\n')
	return end >= 0 && i+end+1 <= f.synced
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

// turnEvents is a run of two turns as the loop reports it: the first asks
// for two calls, the second answers.
func turnEvents() []toolloop.Event {
	calls := &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
		{ID: "call_a", Name: "echo"}, {ID: "call_b", Name: "echo"}}}}
	answer := &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant,
		Content: []toolloop.Content{toolloop.TextContent("done")}}}
	withResponse := func(r *toolloop.Response) toolloop.Event {
		e := ev(toolloop.EventModelResponse)
		e.Response = r
		return e
	}
	return []toolloop.Event{
		ev(toolloop.EventRunStart),
		ev(toolloop.EventModelRequest),
		withResponse(calls), // a sync point
		ev(toolloop.EventStart),
		completion("call_a", "echo"),
		completion("call_b", "echo"),
		withResponse(answer),
		ev(toolloop.EventRunEnd), // a sync point
	}
}

func TestWriterSyncPolicy(t *testing.T) {
	tests := []struct {
		name string
		opts eventlog.Options
		// syncs after each of turnEvents, and after Close.
		syncs      []int
		afterClose int
	}{
		{name: "default syncs at the sync points", syncs: []int{0, 0, 1, 1, 1, 1, 1, 2}, afterClose: 2},
		{name: "every 1", opts: eventlog.Options{SyncEvery: 1}, syncs: []int{1, 1, 2, 2, 3, 4, 5, 6}, afterClose: 6},
		{name: "every 2", opts: eventlog.Options{SyncEvery: 2}, syncs: []int{0, 0, 1, 1, 1, 2, 2, 3}, afterClose: 3},
		{name: "never", opts: eventlog.Options{NoSync: true}, syncs: []int{0, 0, 0, 0, 0, 0, 0, 0}, afterClose: 0},
		{name: "long interval", opts: eventlog.Options{SyncInterval: time.Hour}, syncs: []int{0, 0, 1, 1, 1, 1, 1, 2}, afterClose: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := new(fakeFile)
			w := eventlog.NewWriter(f, tt.opts)
			written := 0
			for i, e := range turnEvents() {
				w.Record(e)
				if !e.Type.Transient() {
					written = i + 1 // with the transient ones before it
				}
				lines, syncs := f.state()
				assert.Equal(t, written, lines, "after event %d: durable events are written through, whatever the policy", i)
				assert.Equal(t, tt.syncs[i], syncs, "syncs after event %d (%s)", i, e.Type)
			}
			require.NoError(t, w.Close())
			_, syncs := f.state()
			assert.Equal(t, tt.afterClose, syncs)
			assert.True(t, f.oneAtATime(false), "one write or sync at a time")
		})
	}
}

// TestWriterCloseSyncs: Close syncs what the policy left unsynced, and
// only that.
func TestWriterCloseSyncs(t *testing.T) {
	f := new(fakeFile)
	w := eventlog.NewWriter(f, eventlog.Options{})
	w.Record(completion("call_1", "echo"))
	_, syncs := f.state()
	assert.Zero(t, syncs, "a completion waits for the next sync point")
	assert.False(t, f.durable("call_1"))
	require.NoError(t, w.Sync())
	assert.True(t, f.durable("call_1"))
	require.NoError(t, w.Sync())
	_, syncs = f.state()
	assert.Equal(t, 1, syncs, "nothing new to sync")
	w.Record(completion("call_2", "echo"))
	require.NoError(t, w.Close())
	assert.True(t, f.durable("call_2"))
	_, syncs = f.state()
	assert.Equal(t, 2, syncs)
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
		f := &fakeFile{failSync: 2}
		w := eventlog.NewWriter(f, eventlog.Options{SyncEvery: 1})
		w.Record(completion("call_1", "echo"))
		require.NoError(t, w.Err())
		assert.True(t, f.durable("call_1"))
		w.Record(completion("call_2", "echo"))
		assert.ErrorIs(t, w.Err(), errBoom)
		assert.False(t, f.durable("call_2"))
		w.Record(completion("call_3", "echo"))
		assert.ErrorIs(t, w.Close(), errBoom)
		lines, syncs := f.state()
		assert.Equal(t, 2, lines, "nothing is written after a failed sync")
		assert.Equal(t, 2, syncs, "nor synced, not even by Close")
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

// panicFile panics when written to or synced.
type panicFile struct{ sync bool }

func (f panicFile) Write(p []byte) (int, error) {
	if !f.sync {
		panic("write")
	}
	return len(p), nil
}

func (f panicFile) Sync() error { panic("sync") }

// TestWriterPanickingFile: a panic of the underlying writer stops the log
// like an error, and Record does not panic.
func TestWriterPanickingFile(t *testing.T) {
	for _, inSync := range []bool{false, true} {
		w := eventlog.NewWriter(panicFile{sync: inSync}, eventlog.Options{SyncEvery: 1})
		assert.NotPanics(t, func() { w.Record(completion("call_1", "echo")) })
		assert.Error(t, w.Err())
		assert.NotPanics(t, func() { w.Record(completion("call_2", "echo")) })
		assert.Error(t, w.Close())
	}
}
