package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/rpc"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// runCall runs tool name of src with a call as the loop makes it, with
// the output budget maxOut and the reporter rep (which may be nil).
func runCall(t *testing.T, src *Source, name string, args any, maxOut int, rep toolloop.Reporter) (*toolloop.ToolResult, error) {
	t.Helper()
	tools, err := src.Tools(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return find(t, tools, name).Run(ctx, &toolloop.Call{
		ID: "c-" + name, Name: name, Arguments: mustJSON(t, args),
		Source: toolloop.SourcePlugin, SourceName: src.Name(), MaxOutputBytes: maxOut, Reporter: rep,
	})
}

// TestPluginCutsToBudget: a plugin built with Serve cuts its result's
// text to the call's output budget before it sends it, keeping a head and
// a tail around a marker; and refuses itself a result over the host's
// limit when no budget was given.
func TestPluginCutsToBudget(t *testing.T) {
	const big = 5 << 20
	tests := []struct {
		name     string
		cfg      Config
		maxOut   int
		wantKind toolloop.ErrorKind
	}{
		{name: "cut to the budget", maxOut: 64 << 10},
		{name: "budget larger than the output", maxOut: 8 << 20},
		{name: "no budget, over the host's limit", cfg: Config{MaxMessageBytes: 1 << 20}, wantKind: toolloop.KindExecutionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newSample(t, tt.cfg)
			res, err := runCall(t, src, "big", map[string]int{"bytes": big}, tt.maxOut, nil)
			require.Equal(t, tt.wantKind, kindOf(res, err), "result %+v, error %v", res, err)
			if tt.wantKind != "" {
				return
			}
			text := res.Text()
			assert.True(t, strings.HasSuffix(text, " END"), "the tail is kept")
			if tt.maxOut >= big {
				assert.Len(t, text, big)
				assert.False(t, res.Meta.Truncated)
				return
			}
			assert.LessOrEqual(t, len(text), tt.maxOut)
			assert.Greater(t, len(text), tt.maxOut*9/10)
			assert.True(t, res.Meta.Truncated)
			assert.Contains(t, text, fmt.Sprintf(" of %d bytes cut", big), "the marker says how much was cut")
		})
	}
}

// TestOldPluginIgnoringTheBudget: a plugin that does not know the budget
// (built against an earlier version, or hostile) still works, and what it
// sends over the host's limit is skipped unread: the call fails with
// execution_failed and the plugin goes on serving, except for a response
// header over the limit, which ends the connection and restarts it.
func TestOldPluginIgnoringTheBudget(t *testing.T) {
	var logs syncBuffer
	src := newSample(t, Config{
		Env:             []string{"SAMPLE_OLD=1"},
		MaxMessageBytes: 1 << 20,
		Logger:          slog.New(slog.NewTextHandler(&logs, nil)),
	})
	pid := src.pid()
	require.NotZero(t, pid)

	// Under the limit, the old plugin's whole result arrives, and the
	// host cuts it to the budget.
	res, err := runCall(t, src, "big", map[string]int{"bytes": 100 << 10}, 1<<10, nil)
	require.NoError(t, err)
	assert.True(t, res.Meta.Truncated)
	assert.LessOrEqual(t, len(res.Text()), 1<<10)
	assert.Contains(t, res.Text(), fmt.Sprintf(" of %d bytes cut", 100<<10))

	// Over it, the call fails, naming both sizes.
	res, err = runCall(t, src, "big", map[string]int{"bytes": 8 << 20}, 1<<10, nil)
	require.Equal(t, toolloop.KindExecutionFailed, kindOf(res, err), "result %+v, error %v", res, err)
	assert.Contains(t, err.Error(), fmt.Sprint(1<<20))
	assert.Contains(t, err.Error(), "byte result")
	assertSamePID(t, src, pid)

	// A report over the limit is dropped; the next one arrives.
	var rep recordingReporter
	res, err = runCall(t, src, "big_report", map[string]int{"bytes": 4 << 20}, 1<<10, &rep)
	require.NoError(t, err)
	assert.Equal(t, "reported", res.Text())
	assert.Equal(t, []string{"small"}, rep.partials())
	assert.Contains(t, logs.String(), "a report over the size limit was dropped")
	assertSamePID(t, src, pid)

	// An RPC error message over the limit breaks the connection.
	res, err = runCall(t, src, "huge_error", map[string]int{"bytes": 4 << 20}, 1<<10, nil)
	require.Equal(t, toolloop.KindExecutionFailed, kindOf(res, err), "result %+v, error %v", res, err)
	assert.Contains(t, err.Error(), fmt.Sprint(1<<20))
	require.Eventually(t, func() bool { return processGone(pid) }, 10*time.Second, 10*time.Millisecond)
	res, err = runCall(t, src, "pid", map[string]int{}, 0, nil)
	require.NoError(t, err)
	assert.NotEqual(t, fmt.Sprint(pid), res.Text())
}

func assertSamePID(t *testing.T, src *Source, pid int) {
	t.Helper()
	res, err := runCall(t, src, "pid", map[string]int{}, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(pid), res.Text(), "the plugin was restarted")
}

// recordingReporter records the reports it receives.
type recordingReporter struct {
	mu       sync.Mutex
	partial  []string
	progress []toolloop.Progress
}

func (r *recordingReporter) ReportProgress(_ *toolloop.Call, p toolloop.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, p)
}

func (r *recordingReporter) ReportPartial(_ *toolloop.Call, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial = append(r.partial, text)
}

func (r *recordingReporter) partials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.partial...)
}

// TestCancelledCallIsNotSent: a call whose context is done before it is
// dispatched returns the context's error at once and starts nothing: not
// the plugin's process, not the call.
func TestCancelledCallIsNotSent(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	tests := []struct {
		name    string
		ctx     context.Context
		wantErr error
	}{
		{name: "cancelled", ctx: cancelled, wantErr: context.Canceled},
		{name: "deadline passed", ctx: expired, wantErr: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Run("plugin not started", func(t *testing.T) {
				src := New(Config{Command: samplePath(t)})
				defer src.Close()
				tool := &remoteTool{src: src, spec: toolloop.ToolSpec{Name: "pid"}}
				_, err := tool.Run(tt.ctx, &toolloop.Call{ID: "x", Name: "pid", Arguments: json.RawMessage(`{}`)})
				require.ErrorIs(t, err, tt.wantErr)
				src.mu.Lock()
				defer src.mu.Unlock()
				assert.Nil(t, src.cur, "a process was started for a call whose context was done")
			})
			t.Run("plugin running", func(t *testing.T) {
				src, codec := fakeSource(t)
				tool := &remoteTool{src: src, spec: toolloop.ToolSpec{Name: "echo"}}
				_, err := tool.Run(tt.ctx, &toolloop.Call{ID: "x", Name: "echo", Arguments: json.RawMessage(`{}`)})
				require.ErrorIs(t, err, tt.wantErr)
				// A call with a live context is sent; before it, nothing was.
				res, err := tool.Run(context.Background(), &toolloop.Call{ID: "y", Name: "echo", Arguments: json.RawMessage(`{}`)})
				require.NoError(t, err)
				assert.Equal(t, "ran y", res.Text())
				assert.Equal(t, []string{"y"}, codec.sentIDs())
			})
		})
	}
}

// fakeSource returns a Source whose running process is fakeCodec: the
// client side of a plugin that answers every Run with "ran" and the call's
// ID, recording the calls sent to it.
func fakeSource(t *testing.T) (*Source, *fakeCodec) {
	codec := &fakeCodec{resps: make(chan fakeResp, 16), closed: make(chan struct{})}
	p := &process{ready: make(chan struct{}), dead: make(chan struct{}), rpc: rpc.NewClientWithCodec(codec)}
	close(p.ready)
	src := New(Config{Name: "fake", Command: "fake"})
	src.cur = p
	t.Cleanup(func() {
		_ = p.rpc.Close()
		_ = src.Close()
	})
	return src, codec
}

type fakeResp struct {
	seq uint64
	id  string
}

type fakeCodec struct {
	mu     sync.Mutex
	sent   []string
	resps  chan fakeResp
	cur    fakeResp // read by the client's one reading goroutine only
	closed chan struct{}
	once   sync.Once
}

func (c *fakeCodec) WriteRequest(r *rpc.Request, body any) error {
	run, ok := body.(wire.Run)
	if !ok {
		return fmt.Errorf("fake plugin: unexpected %s", r.ServiceMethod)
	}
	c.mu.Lock()
	c.sent = append(c.sent, run.ID)
	c.mu.Unlock()
	c.resps <- fakeResp{seq: r.Seq, id: run.ID}
	return nil
}

func (c *fakeCodec) ReadResponseHeader(r *rpc.Response) error {
	select {
	case c.cur = <-c.resps:
		r.Seq, r.ServiceMethod = c.cur.seq, wire.MethodRun
		return nil
	case <-c.closed:
		return io.EOF
	}
}

func (c *fakeCodec) ReadResponseBody(body any) error {
	if rr, ok := body.(*wire.RunReply); ok {
		b, err := json.Marshal(toolloop.TextResult("ran " + c.cur.id))
		rr.Result = b
		return err
	}
	return nil
}

func (c *fakeCodec) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *fakeCodec) sentIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...)
}
