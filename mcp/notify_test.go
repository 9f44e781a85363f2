//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the protocol of 2026-07-28 but work for at least a year, and servers use them; the issue asks for them.

package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// inMemory serves srv to the source over the SDK's in-memory transports.
func inMemory(srv *sdk.Server) mcp.ServerConfig {
	return mcp.ServerConfig{Transport: func(ctx context.Context) (sdk.Transport, error) {
		ct, st := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

// logEvent is the Text of an EventLog event.
type logEvent struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger"`
	Data   json.RawMessage `json:"data"`
}

func decodeLog(t *testing.T, e toolloop.Event) logEvent {
	t.Helper()
	var l logEvent
	require.NoError(t, json.Unmarshal([]byte(e.Text), &l), e.Text)
	return l
}

// TestLogEventsGo: a Go server's log messages, at or above the configured
// level, become events, redacted and bounded, and reach the logger.
func TestLogEventsGo(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "logs", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "log", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			for _, p := range []*sdk.LoggingMessageParams{
				{Level: "debug", Logger: "db", Data: "too quiet"},
				{Level: "warning", Logger: "db", Data: "password=hunter2-hunter2 in a log line"},
				{Level: "error", Data: map[string]any{"n": 1}},
				{Level: "critical", Data: strings.Repeat("x", 100<<10)},
			} {
				if err := req.Session.Log(ctx, p); err != nil {
					return nil, err
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "logged"}}}, nil
		})
	cfg := inMemory(srv)
	cfg.LogLevel = "warning"
	ev := &looptest.Recorder{}
	logs := &logBuffer{}
	src := newSource(t, "logs", cfg, mcp.Options{OnEvent: ev.Record}, logs)
	ctx := testContext(t)
	res := callTool(ctx, t, src, "logs__log", `{}`)
	require.False(t, res.IsError(), res.Text())
	require.Eventually(t, func() bool { return len(ev.Of(mcp.EventLog)) >= 3 }, 5*time.Second, 10*time.Millisecond)
	got := ev.Of(mcp.EventLog)
	require.Len(t, got, 3, "the debug message is below the level")
	for _, e := range got {
		assert.Equal(t, "logs", e.SourceName)
		assert.Equal(t, toolloop.SourceMCP, e.Source)
		assert.False(t, e.Time.IsZero())
	}
	warn := decodeLog(t, got[0])
	assert.Equal(t, "warning", warn.Level)
	assert.Equal(t, "db", warn.Logger)
	assert.NotContains(t, string(warn.Data), "hunter2", "a secret reached the event")
	assert.Contains(t, string(warn.Data), "REDACTED")
	errEv := decodeLog(t, got[1])
	assert.JSONEq(t, `{"n":1}`, string(errEv.Data), "JSON data stays JSON")
	assert.Less(t, len(got[2].Text), mcp.MaxLogBytes+256, "a long message is cut")
	assert.NotContains(t, logs.String(), "hunter2", "a secret reached the log")
	assert.Contains(t, logs.String(), "mcp server log")
	assert.NotContains(t, logs.String(), "too quiet")
}

// TestLogEventsEverything: server-everything's simulated logging, with
// the level set to debug so that every message comes through.
func TestLogEventsEverything(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	cfg.LogLevel = "debug"
	ev := &looptest.Recorder{}
	src := newSource(t, "everything", cfg, mcp.Options{OnEvent: ev.Record}, nil)
	ctx := testContext(t)
	res := callTool(ctx, t, src, "everything__toggle-simulated-logging", `{}`)
	require.False(t, res.IsError(), res.Text())
	require.Eventually(t, func() bool { return len(ev.Of(mcp.EventLog)) > 0 }, 10*time.Second, 20*time.Millisecond)
	l := decodeLog(t, ev.Of(mcp.EventLog)[0])
	assert.Contains(t, []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}, l.Level)
	assert.Contains(t, string(l.Data), "message")
}

// TestLogLevelEverything: the level is sent with logging/setLevel, and
// server-everything drops its info message about a subscription when the
// level is warning.
func TestLogLevelEverything(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		level string
		want  bool
	}{{"info", true}, {"warning", false}} {
		t.Run(tt.level, func(t *testing.T) {
			t.Parallel()
			cfg := everythingConfig(t)
			cfg.LogLevel = tt.level
			ev := &looptest.Recorder{}
			src := newSource(t, "everything", cfg, mcp.Options{OnEvent: ev.Record}, nil)
			ctx := testContext(t)
			require.NoError(t, src.Subscribe(ctx, "demo://resource/dynamic/text/1"))
			// A round trip after the subscription: its log message, sent
			// before its answer, has been handled by the time this returns.
			res := callTool(ctx, t, src, "everything__echo", `{"message":"x"}`)
			require.False(t, res.IsError(), res.Text())
			var got bool
			for _, e := range ev.Of(mcp.EventLog) {
				got = got || strings.Contains(e.Text, "Received Subscribe Resource request")
			}
			assert.Equal(t, tt.want, got, "events: %v", ev.Of(mcp.EventLog))
		})
	}
}
