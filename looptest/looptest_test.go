package looptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeTB records failures instead of failing the real test, so that we can
// test that looptest fails tests when it should.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errors) > 0
}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) finish() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func echoRegistry(t *testing.T) *toolloop.ToolRegistry {
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.Register(toolloop.NewTool("echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (any, error) {
		return in.Text, nil
	})))
	return &reg
}

func transcript() []toolloop.Message {
	return []toolloop.Message{
		toolloop.UserMessage("say hi"),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{looptest.Call("c1", "echo", `{"text":"hi"}`)}, StopReason: toolloop.StopToolUse, Usage: &toolloop.Usage{InputTokens: 10, OutputTokens: 5}},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c1", Name: "echo", Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("hi")},
			Meta: toolloop.ResultMeta{Bytes: 2, Source: toolloop.SourceLocal, SourceName: toolloop.LocalSource}}),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("hi")}, StopReason: toolloop.StopEnd, Usage: &toolloop.Usage{InputTokens: 20, OutputTokens: 1}},
	}
}

func TestReplayPassesAMatchingRun(t *testing.T) {
	want := transcript()
	loop := &toolloop.AgentLoop{Model: looptest.Replay(t, want), Tools: echoRegistry(t)}
	res, err := loop.Run(context.Background(), want[:1])
	require.NoError(t, err)
	looptest.AssertTranscript(t, want, res.Messages)
	assert.Equal(t, toolloop.Usage{InputTokens: 30, OutputTokens: 6}, res.Usage)
}

func TestReplayFailsADivergentRun(t *testing.T) {
	want := transcript()
	// The tool answers differently from the recorded transcript.
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.Register(toolloop.NewTool("echo", "Echo.", func(context.Context, struct {
		Text string `json:"text"`
	}) (any, error) {
		return "HI", nil
	})))
	ft := &fakeTB{}
	loop := &toolloop.AgentLoop{Model: looptest.Replay(ft, want), Tools: &reg}
	_, err := loop.Run(context.Background(), want[:1])
	require.ErrorIs(t, err, looptest.ErrUnexpected)
	ft.finish()
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], `-want +got`)
	assert.Contains(t, ft.errors[0], `"HI"`, "the diff shows what the loop sent")
}

func TestModelFailsOnUnusedOrExtraTurns(t *testing.T) {
	ft := &fakeTB{}
	m := looptest.NewModel(ft, looptest.Turn{Reply: looptest.Text("one")}, looptest.Turn{Reply: looptest.Text("two")})
	_, err := m.Generate(context.Background(), &toolloop.Request{})
	require.NoError(t, err)
	assert.Equal(t, 1, m.Remaining())
	ft.finish()
	require.Len(t, ft.errors, 1, "an unplayed turn fails the test")

	ft = &fakeTB{}
	m = looptest.NewModel(ft)
	_, err = m.Generate(context.Background(), &toolloop.Request{Messages: []toolloop.Message{toolloop.UserMessage("more?")}})
	require.ErrorIs(t, err, looptest.ErrUnexpected)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "more?")
}

func TestModelTurnOptions(t *testing.T) {
	ft := &fakeTB{}
	boom := errors.New("rate limited")
	m := looptest.NewModel(ft,
		looptest.Turn{Check: func(r *toolloop.Request) string {
			if len(r.Tools) == 0 {
				return "no tools offered"
			}
			return ""
		}, Reply: looptest.Text("a")},
		looptest.Turn{Err: boom},
		looptest.Turn{},
	)
	_, err := m.Generate(context.Background(), &toolloop.Request{})
	require.ErrorIs(t, err, looptest.ErrUnexpected)
	_, err = m.Generate(context.Background(), &toolloop.Request{})
	require.ErrorIs(t, err, boom)
	_, err = m.Generate(context.Background(), &toolloop.Request{})
	require.ErrorIs(t, err, looptest.ErrUnexpected)
	ft.finish()
	assert.Len(t, ft.errors, 2) // the failed check and the empty turn
	assert.Len(t, m.Requests(), 3)
}

func TestModelRepliesAreCopies(t *testing.T) {
	reply := looptest.Text("same")
	m := looptest.NewModel(t, looptest.Turn{Reply: reply}, looptest.Turn{Reply: reply})
	a, err := m.Generate(context.Background(), &toolloop.Request{})
	require.NoError(t, err)
	a.Message.Content[0].Text = "changed"
	b, err := m.Generate(context.Background(), &toolloop.Request{})
	require.NoError(t, err)
	assert.Equal(t, "same", b.Message.Text())
}

func TestScript(t *testing.T) {
	m := looptest.Script(looptest.Text("a"))
	r, err := m.Generate(context.Background(), &toolloop.Request{})
	require.NoError(t, err)
	assert.Equal(t, "a", r.Message.Text())
	_, err = m.Generate(context.Background(), &toolloop.Request{})
	require.ErrorIs(t, err, looptest.ErrScriptEnded)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = looptest.Script(looptest.Text("a")).Generate(ctx, &toolloop.Request{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestValidate(t *testing.T) {
	good := transcript()
	require.NoError(t, looptest.Validate(good))
	tests := map[string][]toolloop.Message{
		"missing result": good[:2],
		"orphan result":  {good[0], good[2]},
		"wrong order": {good[0], {Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{looptest.Call("a", "x", "{}"), looptest.Call("b", "x", "{}")}},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: "b"}), toolloop.ToolMessage(&toolloop.ToolResult{CallID: "a"})},
	}
	for name, msgs := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, looptest.Validate(msgs))
			ft := &fakeTB{}
			assert.False(t, looptest.AssertValid(ft, msgs))
		})
	}
}

func TestDiffIgnoresDurationsAndArgumentFormatting(t *testing.T) {
	a := transcript()
	b := transcript()
	b[1].ToolCalls[0].Arguments = json.RawMessage(`{ "text" : "hi" }`)
	b[2].Result.Meta.Duration = 12345
	assert.Empty(t, looptest.DiffTranscripts(a, b))
	b[2].Result.Content[0].Text = "ho"
	assert.True(t, strings.Contains(looptest.DiffTranscripts(a, b), "ho"))
}

func TestRecorder(t *testing.T) {
	rec := &looptest.Recorder{}
	loop := &toolloop.AgentLoop{Model: looptest.Replay(t, transcript()), Tools: echoRegistry(t), OnEvent: rec.Record}
	_, err := loop.Run(context.Background(), transcript()[:1])
	require.NoError(t, err)
	assert.Equal(t, toolloop.EventRunStart, rec.Types()[0])
	assert.Len(t, rec.Of(toolloop.EventComplete), 1)
	callEvents := rec.ForCall("c1")
	require.NotEmpty(t, callEvents)
	assert.Equal(t, toolloop.EventStart, callEvents[0].Type)
	assert.Equal(t, toolloop.EventComplete, callEvents[len(callEvents)-1].Type)
	assert.Len(t, rec.Events(), len(rec.Types()))
}

func TestConformance(t *testing.T) {
	t.Run("tool", func(t *testing.T) {
		tool := toolloop.NewTool("echo", "Echo the text.", func(_ context.Context, in struct {
			Text string `json:"text"`
		}) (any, error) {
			return in.Text, nil
		})
		looptest.TestTool(t, tool, json.RawMessage(`{"text":"hi"}`))
	})
	t.Run("model", func(t *testing.T) {
		m := looptest.Script(
			looptest.Text("Hello!"),
			looptest.Calls(looptest.Call("c1", "get_weather", `{"city":"Paris"}`)),
			looptest.Text("unused: the context is cancelled"),
		)
		looptest.TestModel(t, m)
	})
}
