package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// call runs one tool of src directly, as the loop's execute stage would.
func call(t *testing.T, src *Source, name, args string) (*toolloop.ToolResult, error) {
	t.Helper()
	tools, err := src.Tools(context.Background())
	require.NoError(t, err)
	for _, tool := range tools {
		if tool.Spec().Name == name {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return tool.Run(ctx, &toolloop.Call{ID: "c-" + name, Name: name, Arguments: json.RawMessage(args),
				Source: toolloop.SourcePlugin, SourceName: src.Name()})
		}
	}
	t.Fatalf("plugin has no tool %q", name)
	return nil, nil
}

// kindOf returns the error kind of a call's outcome, "" for success.
func kindOf(res *toolloop.ToolResult, err error) toolloop.ErrorKind {
	if err != nil {
		return toolloop.ErrorResult(err).Error.Kind
	}
	if res.Error != nil {
		return res.Error.Kind
	}
	return ""
}

func TestToolsListed(t *testing.T) {
	src := newSample(t, Config{})
	assert.Equal(t, "sample", src.Name())
	assert.Equal(t, toolloop.SourcePlugin, src.Kind())

	tools, err := src.Tools(context.Background())
	require.NoError(t, err)
	specs := map[string]toolloop.ToolSpec{}
	for _, tool := range tools {
		specs[tool.Spec().Name] = tool.Spec()
	}
	for _, name := range []string{"echo", "add", "slow", "boom", "exit", "hang", "stuck", "fail", "pid", "big", "print"} {
		assert.Contains(t, specs, name)
	}
	// A typed tool's inferred schema crosses intact, and so do annotations.
	want, err := toolloop.SchemaFor[struct {
		Text string `json:"text" jsonschema:"description=Text to echo back"`
	}]()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(specs["echo"].InputSchema))
	assert.True(t, specs["slow"].Annotations.ReadOnly)
}

func TestCall(t *testing.T) {
	src := newSample(t, Config{})
	tests := []struct {
		name, tool, args string
		wantKind         toolloop.ErrorKind
		wantText         string
	}{
		{name: "typed tool", tool: "echo", args: `{"text":"hi"}`, wantText: "plugin: hi"},
		{name: "typed tool with ints", tool: "add", args: `{"a":2,"b":40}`, wantText: "42"},
		{name: "hand-written tool", tool: "slow", args: `{"steps":2}`, wantText: "2 steps done"},
		{name: "panic", tool: "boom", args: `{}`, wantKind: toolloop.KindPanic},
		{name: "tool error kind denied", tool: "fail", args: `{"kind":"denied","message":"no"}`, wantKind: toolloop.KindDenied},
		{name: "tool error kind invalid_args", tool: "fail", args: `{"kind":"invalid_args","message":"bad"}`, wantKind: toolloop.KindInvalidArgs},
		{name: "tool error kind execution_failed", tool: "fail", args: `{"kind":"execution_failed","message":"bad"}`, wantKind: toolloop.KindExecutionFailed},
		{name: "bad arguments reach a typed tool", tool: "echo", args: `{"text":5}`, wantKind: toolloop.KindInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, src, tt.tool, tt.args)
			require.Equal(t, tt.wantKind, kindOf(res, err), "result %+v, error %v", res, err)
			if tt.wantText != "" {
				assert.Equal(t, tt.wantText, res.Text())
			}
		})
	}
}

func TestPanicLeavesPluginRunning(t *testing.T) {
	var logs syncBuffer
	src := newSample(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	before := src.pid()

	res, err := call(t, src, "boom", `{}`)
	require.Equal(t, toolloop.KindPanic, kindOf(res, err))
	assert.Contains(t, toolloop.ErrorResult(err).Text(), "kaboom")
	var ps interface{ PanicStack() string }
	require.ErrorAs(t, err, &ps, "the error carries the plugin's stack for the loop's events")
	assert.Contains(t, ps.PanicStack(), "main.main")

	res, err = call(t, src, "pid", `{}`)
	require.NoError(t, err)
	assert.Equal(t, before, atoi(t, res.Text()), "the plugin was restarted after a panic")
	// The stack goes to the host's logger, not to the model.
	require.Eventually(t, func() bool {
		s := logs.String()
		return strings.Contains(s, "tool panicked") && strings.Contains(s, "kaboom") && strings.Contains(s, "main.main")
	}, 10*time.Second, 10*time.Millisecond, "logs: %s", &logs)
}

func TestCrashFailsCallAndRestarts(t *testing.T) {
	src := newSample(t, Config{})
	before := src.pid()

	// The call fails with the crash, not with a timeout: call gives it
	// 30 seconds, the loop's default two minutes.
	res, err := call(t, src, "exit", `{"code":3}`)
	require.Equal(t, toolloop.KindExecutionFailed, kindOf(res, err), "result %+v, error %v", res, err)
	assert.Contains(t, err.Error(), "exit status 3")
	assert.True(t, processGone(before), "the crashed process was not reaped")

	res, err = call(t, src, "pid", `{}`)
	require.NoError(t, err)
	after := atoi(t, res.Text())
	assert.NotEqual(t, before, after)
	assert.Equal(t, after, src.pid())
}

func TestCrashUnnoticedBeforeCall(t *testing.T) {
	src := newSample(t, Config{})
	before := src.pid()
	p, err := os.FindProcess(before)
	require.NoError(t, err)
	require.NoError(t, p.Kill())
	// The host notices the exit on its own (go-plugin reaps the process);
	// a crash that races with a call fails that call instead.
	require.Eventually(t, func() bool { return src.cur.gone() }, 10*time.Second, 10*time.Millisecond)

	// The next call runs on a new process.
	res, err := call(t, src, "echo", `{"text":"again"}`)
	require.NoError(t, err)
	assert.Equal(t, "plugin: again", res.Text())
	assert.NotEqual(t, before, src.pid())
}

func TestHangIsCancelled(t *testing.T) {
	src := newSample(t, Config{})
	marker := filepath.Join(t.TempDir(), "cancelled")
	tools, err := src.Tools(context.Background())
	require.NoError(t, err)
	hang := find(t, tools, "hang")

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = hang.Run(ctx, &toolloop.Call{ID: "h", Name: "hang", Arguments: mustJSON(t, map[string]string{"marker": marker})})
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// Cancellation reached the plugin: the tool saw its context end.
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(marker)
		return err == nil && string(b) == context.Canceled.Error()
	}, 10*time.Second, 10*time.Millisecond)
	before := src.pid()
	res, err := call(t, src, "pid", `{}`)
	require.NoError(t, err)
	assert.Equal(t, before, atoi(t, res.Text()), "a cancelled call that returned must not restart the plugin")
}

func TestStuckPluginIsStopped(t *testing.T) {
	src := newSample(t, Config{HangTimeout: 100 * time.Millisecond})
	before := src.pid()
	tools, err := src.Tools(context.Background())
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = find(t, tools, "stuck").Run(ctx, &toolloop.Call{ID: "s", Name: "stuck", Arguments: json.RawMessage(`{}`)})
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.Eventually(t, func() bool { return processGone(before) }, 10*time.Second, 10*time.Millisecond)
	res, err := call(t, src, "pid", `{}`)
	require.NoError(t, err)
	assert.NotEqual(t, before, atoi(t, res.Text()))
}

func TestOutput(t *testing.T) {
	var out syncBuffer
	src := newSample(t, Config{Output: &out})
	_, err := call(t, src, "print", `{"text":"hello"}`)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s := out.String()
		return strings.Contains(s, "stdout: hello\n") && strings.Contains(s, "stderr: hello\n")
	}, 10*time.Second, 10*time.Millisecond, "output: %q", &out)
}

func TestConformance(t *testing.T) {
	src := newSample(t, Config{})
	tools, err := src.Tools(context.Background())
	require.NoError(t, err)
	looptest.TestTool(t, find(t, tools, "echo"), json.RawMessage(`{"text":"x"}`))
	looptest.TestTool(t, find(t, tools, "slow"), json.RawMessage(`{"steps":2,"delay_ms":1}`))
}

func TestRestartPicksUpNewTools(t *testing.T) {
	extra := filepath.Join(t.TempDir(), "extra")
	src := newSample(t, Config{Env: []string{"SAMPLE_EXTRA_FILE=" + extra}})
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	_, ok := reg.Lookup(context.Background(), "extra")
	require.False(t, ok)

	require.NoError(t, os.WriteFile(extra, nil, 0o600))
	_, err := call(t, src, "exit", `{"code":0}`)
	require.Error(t, err)
	_, err = call(t, src, "pid", `{}`) // starts it again
	require.NoError(t, err)

	tool, ok := reg.Lookup(context.Background(), "extra")
	require.True(t, ok, "the registry did not pick up the restarted plugin's tools")
	res, err := tool.Run(context.Background(), &toolloop.Call{ID: "e", Name: "extra", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, "extra", res.Text())
}

func find(t testing.TB, tools []toolloop.Tool, name string) toolloop.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Spec().Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	require.NoError(t, json.Unmarshal([]byte(s), &n), "not a number: %q", s)
	return n
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
