package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// newSource returns a source closed when the test ends, logging to logs.
func newSource(t *testing.T, name string, cfg mcp.ServerConfig, opts mcp.Options, logs *logBuffer) *mcp.Source {
	t.Helper()
	if logs == nil {
		logs = &logBuffer{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	src, err := mcp.New(name, cfg, &opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	return src
}

// callTool calls the source's tool of the given model-facing name.
func callTool(ctx context.Context, t *testing.T, src *mcp.Source, name, args string) *toolloop.ToolResult {
	t.Helper()
	tools, err := src.Tools(ctx)
	require.NoError(t, err)
	for _, tl := range tools {
		if tl.Spec().Name == name {
			res, err := tl.Run(ctx, &toolloop.Call{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
			if err != nil {
				return toolloop.ErrorResult(err)
			}
			return res
		}
	}
	t.Fatalf("no tool %q among %v", name, toolNames(tools))
	return nil
}

func toolNames(tools []toolloop.Tool) []string {
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	return names
}

// hasTool reports whether the source lists the tool.
func hasTool(ctx context.Context, t *testing.T, src *mcp.Source, name string) bool {
	t.Helper()
	tools, err := src.Tools(ctx)
	require.NoError(t, err)
	return slices.Contains(toolNames(tools), name)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNewChecksClientCapabilities(t *testing.T) {
	t.Parallel()
	model := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) { return nil, nil })
	elicit := func(context.Context, string, *mcp.ElicitRequest) (mcp.ElicitResult, error) {
		return mcp.ElicitResult{}, nil
	}
	stdio := mcp.ServerConfig{Command: "server"}
	tests := []struct {
		name string
		cfg  func(*mcp.ServerConfig)
		opts mcp.Options
		ok   bool
	}{
		{"sampling without a handler", func(c *mcp.ServerConfig) { c.Sampling = true }, mcp.Options{}, false},
		{"sampling without a model", func(c *mcp.ServerConfig) { c.Sampling = true }, mcp.Options{Sampling: &mcp.Sampling{}}, false},
		{"sampling", func(c *mcp.ServerConfig) { c.Sampling = true }, mcp.Options{Sampling: &mcp.Sampling{Model: model}}, true},
		{"elicitation without a handler", func(c *mcp.ServerConfig) { c.Elicitation = true }, mcp.Options{}, false},
		{"elicitation", func(c *mcp.ServerConfig) { c.Elicitation = true }, mcp.Options{Elicit: elicit}, true},
		{"unknown log level", func(c *mcp.ServerConfig) { c.LogLevel = "loud" }, mcp.Options{}, false},
		{"log level", func(c *mcp.ServerConfig) { c.LogLevel = "warning" }, mcp.Options{}, true},
		{"oauth for stdio", func(c *mcp.ServerConfig) { c.OAuth = mcp.TokenAuth(nil) }, mcp.Options{}, false},
		{"oauth and an Authorization header", func(c *mcp.ServerConfig) {
			*c = mcp.ServerConfig{URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"authorization": "x"}, OAuth: mcp.TokenAuth(nil)}
		}, mcp.Options{}, false},
		{"oauth", func(c *mcp.ServerConfig) {
			*c = mcp.ServerConfig{URL: "http://127.0.0.1:1/mcp", OAuth: mcp.TokenAuth(nil)}
		}, mcp.Options{}, true},
		{"root that is a web URL", func(c *mcp.ServerConfig) { c.Roots = []string{"https://example.com/x"} }, mcp.Options{}, false},
		{"relative file URI", func(c *mcp.ServerConfig) { c.Roots = []string{"file://dir"} }, mcp.Options{}, false},
		{"roots", func(c *mcp.ServerConfig) { c.Roots = []string{"/tmp", "file:///srv"} }, mcp.Options{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := stdio
			tt.cfg(&cfg)
			src, err := mcp.New("s", cfg, &tt.opts)
			if !tt.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.NoError(t, src.Close())
		})
	}
}

func TestConfigReadsClientCapabilities(t *testing.T) {
	t.Parallel()
	c, err := mcp.ParseConfig([]byte(`{"mcpServers": {"s": {"command": "x", "roots": ["/a"], "sampling": true,
		"elicitation": true, "logLevel": "info", "resourceTools": true}}}`))
	require.NoError(t, err)
	got := c.Servers["s"]
	assert.Equal(t, []string{"/a"}, got.Roots)
	assert.True(t, got.Sampling)
	assert.True(t, got.Elicitation)
	assert.Equal(t, "info", got.LogLevel)
	assert.True(t, got.ResourceTools)
}

func TestSession(t *testing.T) {
	t.Parallel()
	srv := newServer(t, "memory")
	src := srv.source(t, "mem", nil, nil)
	ctx := testContext(t)
	cs, err := src.Session(ctx)
	require.NoError(t, err)
	require.NoError(t, cs.Ping(ctx, &sdk.PingParams{}))
	again, err := src.Session(ctx)
	require.NoError(t, err)
	assert.Same(t, cs, again, "a live session is shared")
	require.NoError(t, src.Close())
	_, err = src.Session(ctx)
	assert.ErrorIs(t, err, mcp.ErrClosed)
}

func TestEventPanicIsRecovered(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	cfg.LogLevel = "debug"
	var calls sync.WaitGroup
	calls.Add(1)
	var once sync.Once
	src := newSource(t, "everything", cfg, mcp.Options{OnEvent: func(toolloop.Event) {
		once.Do(calls.Done)
		panic("sink")
	}}, nil)
	ctx := testContext(t)
	res := callTool(ctx, t, src, "everything__toggle-simulated-logging", `{}`)
	require.False(t, res.IsError(), res.Text())
	calls.Wait()
	res = callTool(ctx, t, src, "everything__echo", `{"message":"still here"}`)
	assert.Equal(t, "Echo: still here", res.Text())
}

var errTest = errors.New("test failure")
