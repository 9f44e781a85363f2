package plugin

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// toolFunc is a Tool from a function, for the in-process tests of the
// plugin side.
type toolFunc struct {
	name string
	fn   func(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error)
}

func (t toolFunc) Spec() toolloop.ToolSpec { return toolloop.ToolSpec{Name: t.name} }
func (t toolFunc) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	return t.fn(ctx, call)
}

// TestSession drives the plugin side of the protocol in process.
func TestSession(t *testing.T) {
	var (
		ranMu sync.Mutex
		ran   []string // IDs of the calls the record tool ran
	)
	srv := newServer([]toolloop.Tool{
		toolFunc{"ok", func(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) {
			return toolloop.TextResult("fine"), nil
		}},
		toolFunc{"nil", func(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) { return nil, nil }},
		toolFunc{"panic", func(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) { panic("oops") }},
		toolFunc{"wait", func(ctx context.Context, _ *toolloop.Call) (*toolloop.ToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		toolFunc{"unencodable", func(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) {
			r := toolloop.TextResult("x")
			r.Meta.Extra = map[string]any{"ch": make(chan int)}
			return r, nil
		}},
		toolFunc{"record", func(_ context.Context, c *toolloop.Call) (*toolloop.ToolResult, error) {
			ranMu.Lock()
			defer ranMu.Unlock()
			ran = append(ran, c.ID)
			return toolloop.TextResult("ran"), nil
		}},
		toolFunc{"mixed", func(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) {
			return &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{
				toolloop.TextContent("short"),
				toolloop.TextContent(strings.Repeat("a", 3000) + " END"),
				toolloop.JSONContent(json.RawMessage(`[` + strings.Repeat(`"item",`, 500) + `"last"]`)),
				toolloop.ImageContent("image/png", make([]byte, 5000)),
			}}, nil
		}},
		toolFunc{"call", func(_ context.Context, c *toolloop.Call) (*toolloop.ToolResult, error) {
			b, err := json.Marshal(map[string]any{"id": c.ID, "source": c.Source, "source_name": c.SourceName, "turn": c.Turn, "reporter": c.Reporter != nil})
			return toolloop.TextResult(string(b)), err
		}},
	})
	raw, err := (&rpcPlugin{srv: srv}).Server(nil)
	require.NoError(t, err)
	ss := raw.(*session)

	run := func(r wire.Run) *toolloop.ToolResult {
		var reply wire.RunReply
		require.NoError(t, ss.Run(r, &reply))
		var res toolloop.ToolResult
		require.NoError(t, json.Unmarshal(reply.Result, &res))
		return &res
	}
	tests := []struct {
		name     string
		run      wire.Run
		cancel   bool // cancel the token before the Run arrives
		wantKind toolloop.ErrorKind
		wantText string
		check    func(t *testing.T, res *toolloop.ToolResult)
	}{
		{name: "ok", run: wire.Run{Token: 1, Tool: "ok"}, wantText: "fine"},
		{name: "nil result", run: wire.Run{Token: 2, Tool: "nil"}},
		{name: "panic", run: wire.Run{Token: 3, Tool: "panic"}, wantKind: toolloop.KindPanic},
		{name: "no such tool", run: wire.Run{Token: 4, Tool: "nope"}, wantKind: toolloop.KindNotFound},
		{name: "cancel before run", run: wire.Run{Token: 5, Tool: "wait"}, cancel: true, wantKind: toolloop.KindCanceled},
		{name: "unencodable result", run: wire.Run{Token: 6, Tool: "unencodable"}, wantKind: toolloop.KindExecutionFailed},
		{name: "cancelled before run: the tool never starts", run: wire.Run{Token: 8, Tool: "record", ID: "cancelled"}, cancel: true, wantKind: toolloop.KindCanceled},
		{name: "deadline passed: the tool never starts", run: wire.Run{Token: 9, Tool: "record", ID: "late", Deadline: time.Now().Add(-time.Second)}, wantKind: toolloop.KindTimeout},
		{name: "live call runs", run: wire.Run{Token: 10, Tool: "record", ID: "live", Deadline: time.Now().Add(time.Hour)}, wantText: "ran"},
		{name: "no budget: nothing cut", run: wire.Run{Token: 11, Tool: "mixed"}, check: func(t *testing.T, res *toolloop.ToolResult) {
			assert.False(t, res.Meta.Truncated)
			assert.Len(t, res.Content[1].Text, 3004)
		}},
		{name: "cut to the budget", run: wire.Run{Token: 12, Tool: "mixed", MaxOutputBytes: 2000}, check: func(t *testing.T, res *toolloop.ToolResult) {
			assert.True(t, res.Meta.Truncated)
			require.Len(t, res.Content, 4)
			assert.Equal(t, "short", res.Content[0].Text, "a block under its share is kept whole")
			assert.True(t, strings.HasSuffix(res.Content[1].Text, " END"), "the tail is kept")
			// A JSON block is cut as the loop cuts it: a container keeps
			// its leading items and says how many it left out.
			assert.Contains(t, string(res.Content[2].JSON)+res.Content[2].Text, "cut")
			assert.Len(t, res.Content[3].Data, 5000, "images are not counted nor cut")
			n := 0
			for _, c := range res.Content {
				n += len(c.Text) + len(c.JSON)
			}
			assert.LessOrEqual(t, n, 2000)
		}},
		{name: "over the host's limit", run: wire.Run{Token: 13, Tool: "mixed", MaxReplyBytes: 4000}, wantKind: toolloop.KindExecutionFailed},
		{name: "call fields", run: wire.Run{Token: 7, Tool: "call", ID: "c7", Source: "plugin", SourceName: "p", Turn: 3},
			wantText: `{"id":"c7","reporter":false,"source":"plugin","source_name":"p","turn":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cancel {
				require.NoError(t, ss.Cancel(wire.Cancel{Token: tt.run.Token}, &wire.Empty{}))
			}
			res := run(tt.run)
			if tt.wantKind == "" {
				assert.Nil(t, res.Error)
			} else {
				require.NotNil(t, res.Error)
				assert.Equal(t, tt.wantKind, res.Error.Kind)
			}
			if tt.wantText != "" {
				assert.Equal(t, tt.wantText, res.Text())
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
	assert.Empty(t, ss.running)
	assert.Empty(t, ss.early)
	assert.Equal(t, []string{"live"}, ran, "only the live call ran")
}

func TestServeMisuse(t *testing.T) {
	ok := toolFunc{"a", nil}
	assert.Panics(t, func() { newServer([]toolloop.Tool{ok, nil}) })
	assert.Panics(t, func() { newServer([]toolloop.Tool{ok, ok}) })
}

func TestHCLogAdapter(t *testing.T) {
	var buf syncBuffer
	l := hclogFor(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))).Named("p").With("k", "v")
	assert.Equal(t, hclog.Info, l.GetLevel())
	assert.False(t, l.IsDebug())
	assert.True(t, l.IsWarn())
	assert.Equal(t, "p", l.Name())
	assert.Equal(t, []any{"k", "v"}, l.ImpliedArgs())

	l.Debug("dropped")
	l.Warn("careful", "n", 1)
	l.Log(hclog.Off, "dropped too")
	_, _ = l.StandardWriter(nil).Write([]byte("from std"))

	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		lines = append(lines, m)
	}
	require.Len(t, lines, 2)
	assert.Equal(t, map[string]any{"level": "WARN", "msg": "careful", "logger": "p", "k": "v", "n": 1.0}, without(lines[0], "time"))
	assert.Equal(t, "from std", lines[1]["msg"])

	assert.False(t, hclogFor(nil).IsError(), "no logger: nothing is logged")
}

func without(m map[string]any, key string) map[string]any {
	delete(m, key)
	return m
}
