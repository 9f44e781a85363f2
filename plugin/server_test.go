package plugin

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

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
	}{
		{name: "ok", run: wire.Run{Token: 1, Tool: "ok"}, wantText: "fine"},
		{name: "nil result", run: wire.Run{Token: 2, Tool: "nil"}},
		{name: "panic", run: wire.Run{Token: 3, Tool: "panic"}, wantKind: toolloop.KindPanic},
		{name: "no such tool", run: wire.Run{Token: 4, Tool: "nope"}, wantKind: toolloop.KindNotFound},
		{name: "cancel before run", run: wire.Run{Token: 5, Tool: "wait"}, cancel: true, wantKind: toolloop.KindCanceled},
		{name: "unencodable result", run: wire.Run{Token: 6, Tool: "unencodable"}, wantKind: toolloop.KindExecutionFailed},
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
		})
	}
	assert.Empty(t, ss.running)
	assert.Empty(t, ss.early)
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
