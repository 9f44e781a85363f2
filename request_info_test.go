package toolloop_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// rebuilt rebuilds the messages of each model request from the
// model.request events alone, as a viewer does: each request is the
// previous one's messages up to From, then the event's Messages.
func rebuilt(t *testing.T, rec *looptest.Recorder) [][]toolloop.Message {
	t.Helper()
	var out [][]toolloop.Message
	var prev []toolloop.Message
	for _, e := range rec.Of(toolloop.EventModelRequest) {
		require.NotNil(t, e.Request, "model.request of turn %d has no Request", e.Turn)
		require.LessOrEqual(t, e.Request.From, len(prev), "turn %d", e.Turn)
		msgs := append(append([]toolloop.Message(nil), prev[:e.Request.From]...), e.Messages...)
		require.Len(t, msgs, e.Request.Messages, "turn %d: From+len(Messages) is not the request's size", e.Turn)
		out = append(out, msgs)
		prev = msgs
	}
	return out
}

// assertSaw checks that the model.request events rebuild every request
// the model was sent, message for message.
func assertSaw(t *testing.T, m *looptest.Model, rec *looptest.Recorder) {
	t.Helper()
	got := rebuilt(t, rec)
	reqs := m.Requests()
	require.Len(t, got, len(reqs))
	for i, req := range reqs {
		assert.Equal(t, looptest.Canonical(req.Messages), looptest.Canonical(got[i]), "request %d", i+1)
	}
}

func TestModelRequestSaysWhatTheModelSaw(t *testing.T) {
	prompt := []toolloop.Message{toolloop.SystemMessage("You are terse."), toolloop.UserMessage("Say hi.")}
	t.Run("a plain run sends the prompts, then what each turn added", func(t *testing.T) {
		var reg toolloop.ToolRegistry
		counted(t, &reg, "read", "reads")
		counted(t, &reg, "write", "writes")
		m := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "read", `{}`), looptest.Call("c2", "write", `{}`))},
			looptest.Turn{Reply: looptest.Text("hi")})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: m, Tools: &reg, OnEvent: rec.Record,
			ModelTable: toolloop.ModelTable{"": {ContextWindow: 1000}}}
		_, err := l.Run(t.Context(), prompt)
		require.NoError(t, err)
		assertSaw(t, m, rec)
		reqs := rec.Of(toolloop.EventModelRequest)
		require.Len(t, reqs, 2)
		first, second := reqs[0].Request, reqs[1].Request
		assert.Equal(t, 0, first.From)
		assert.Equal(t, []toolloop.Role{toolloop.RoleSystem, toolloop.RoleUser}, roles(reqs[0].Messages))
		assert.Equal(t, []string{"read", "write"}, first.Tools)
		assert.Positive(t, first.Tokens)
		// The second request repeats the prompts and adds the model's
		// turn and its two results, as the model saw them.
		assert.Equal(t, 2, second.From)
		assert.Equal(t, 5, second.Messages)
		assert.Equal(t, []toolloop.Role{toolloop.RoleAssistant, toolloop.RoleTool, toolloop.RoleTool}, roles(reqs[1].Messages))
		assert.Equal(t, "c1", reqs[1].Messages[1].Result.CallID)
	})
	t.Run("the window is the answering model's", func(t *testing.T) {
		m := looptest.NewModel(t,
			looptest.Turn{Reply: &toolloop.Response{Message: looptest.Calls(looptest.Call("c1", "big", `{}`)).Message, Model: "small",
				Usage: toolloop.Usage{InputTokens: 40, OutputTokens: 10}}},
			looptest.Turn{Reply: looptest.Text("done")})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: m, Tools: bigTools(4000), OnEvent: rec.Record,
			ModelTable: toolloop.ModelTable{"small": {ContextWindow: 8000}}}
		_, err := l.Run(t.Context(), prompt)
		require.NoError(t, err)
		reqs := rec.Of(toolloop.EventModelRequest)
		require.Len(t, reqs, 2)
		assert.Zero(t, reqs[0].Request.Window, "no model has answered yet")
		assert.Equal(t, 8000, reqs[1].Request.Window)
		// 50 tokens counted by the provider, then about 1,000 for the
		// result's 4,000 bytes, scaled by the provider's count of the
		// first request against the loop's estimate of it.
		assert.Greater(t, reqs[1].Request.Tokens, 50+500)
		assert.Less(t, reqs[1].Request.Tokens, 50+2000)
	})
	t.Run("cleared results are sent again from the first one cleared", func(t *testing.T) {
		m := looptest.NewModel(t, bigCalls(4)...)
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: m, Tools: bigTools(2000), OnEvent: rec.Record,
			ContextManagers: []toolloop.ContextManager{&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1}, KeepTurns: 1}}}
		_, err := l.Run(t.Context(), prompt[1:])
		require.NoError(t, err)
		require.NotZero(t, countEdits(rec, "clear_tool_results"))
		assertSaw(t, m, rec)
		var cleared bool
		for _, e := range rec.Of(toolloop.EventModelRequest) {
			for _, msg := range e.Messages {
				cleared = cleared || msg.Result != nil && msg.Result.Meta.Cleared
			}
		}
		assert.True(t, cleared, "a request carries a cleared result as the model saw it")
	})
	t.Run("a before-model hook's own messages are what is shown", func(t *testing.T) {
		m := looptest.NewModel(t, bigCalls(2)...)
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: m, Tools: bigTools(10), OnEvent: rec.Record}
		l.Hooks.BeforeModel = []toolloop.BeforeModelHook{func(_ context.Context, turn *toolloop.ModelTurn) error {
			msgs := append([]toolloop.Message{toolloop.SystemMessage("It is turn " + string(rune('0'+turn.Turn)) + ".")}, turn.Request.Messages...)
			turn.Request.Messages = msgs
			return nil
		}}
		_, err := l.Run(t.Context(), prompt[1:])
		require.NoError(t, err)
		assertSaw(t, m, rec)
		reqs := rec.Of(toolloop.EventModelRequest)
		assert.Equal(t, 0, reqs[1].Request.From, "the system message changed, so everything is new")
	})
	t.Run("messages sent into the run", func(t *testing.T) {
		in := &toolloop.Inbox{}
		var reg toolloop.ToolRegistry
		reg.MustRegister(toolloop.NewTool("note", "Notes.", func(context.Context, noArgs) (any, error) {
			in.Send(toolloop.UserMessage("Also check the logs."))
			return "noted", nil
		}))
		m := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "note", `{}`))},
			looptest.Turn{Reply: looptest.Text("done")})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: m, Tools: &reg, OnEvent: rec.Record}
		_, err := l.Run(toolloop.WithInbox(t.Context(), in), prompt[1:])
		require.NoError(t, err)
		assertSaw(t, m, rec)
		last := rec.Of(toolloop.EventModelRequest)[1]
		require.NotEmpty(t, last.Messages)
		assert.Equal(t, "Also check the logs.", last.Messages[len(last.Messages)-1].Text())
	})
	t.Run("tools loaded by the tool search", func(t *testing.T) {
		reg, _ := deferredRegistry(t)
		m := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("s1", toolloop.ToolSearchName, `{"query":"weather forecast","max_results":1}`))},
			looptest.Turn{Reply: looptest.Calls(looptest.Call("w1", "get_weather", `{}`))},
			looptest.Turn{Reply: looptest.Text("sunny")})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: m, Tools: reg, Deferred: deferredTools, OnEvent: rec.Record}
		_, err := l.Run(t.Context(), prompt[1:])
		require.NoError(t, err)
		reqs := rec.Of(toolloop.EventModelRequest)
		require.Len(t, reqs, 3)
		assert.NotContains(t, reqs[0].Request.Tools, "get_weather")
		assert.Empty(t, reqs[0].Request.Loaded)
		assert.Contains(t, reqs[1].Request.Tools, "get_weather")
		assert.Equal(t, []string{"get_weather"}, reqs[1].Request.Loaded)
	})
	t.Run("the output format and the wrap-up's tool choice", func(t *testing.T) {
		m := looptest.NewModel(t, looptest.Turn{Reply: looptest.Text(`{"answer":"hi"}`)})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: nativeModel{m}, OnEvent: rec.Record,
			Output: &toolloop.OutputFormat{Name: "reply", Schema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)}}
		_, err := l.Run(t.Context(), prompt[1:])
		require.NoError(t, err)
		reqs := rec.Of(toolloop.EventModelRequest)
		require.Len(t, reqs, 1)
		assert.Equal(t, "reply", reqs[0].Request.Output)
	})
}

func roles(msgs []toolloop.Message) []toolloop.Role {
	out := make([]toolloop.Role, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

func TestCallTiming(t *testing.T) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("slow", "Sleeps.", func(ctx context.Context, _ noArgs) (any, error) {
		time.Sleep(30 * time.Millisecond)
		return "slept", nil
	}))
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "slow", `{}`))},
		looptest.Turn{Reply: looptest.Text("done")})
	rec := &looptest.Recorder{}
	var hooks atomic.Int32
	l := &toolloop.AgentLoop{Model: m, Tools: &reg, OnEvent: rec.Record,
		Guard: toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
			return toolloop.Verdict{Decision: toolloop.Ask}
		}),
		Approver: toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
			time.Sleep(400 * time.Millisecond) // a person thinks
			return toolloop.Approval{Approved: true}, nil
		})}
	l.Hooks.PreToolUse = []toolloop.PreToolUseHook{func(context.Context, *toolloop.Call) (toolloop.PreToolUse, error) {
		hooks.Add(1)
		time.Sleep(10 * time.Millisecond)
		return toolloop.PreToolUse{}, nil
	}}
	_, err := l.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	done := rec.Of(toolloop.EventComplete)
	require.Len(t, done, 1)
	tm := done[0].Timing
	require.NotNil(t, tm)
	assert.GreaterOrEqual(t, tm.Approval, 400*time.Millisecond)
	assert.GreaterOrEqual(t, tm.Tool, 30*time.Millisecond)
	assert.Less(t, tm.Tool, 400*time.Millisecond, "the tool's time holds no approval wait")
	assert.GreaterOrEqual(t, tm.PreHooks, 10*time.Millisecond)
	assert.Positive(t, tm.Checks)
	sum := tm.Checks + tm.Approval + tm.PreHooks + tm.Tool + tm.After
	d := done[0].Result.Meta.Duration
	assert.InDelta(t, float64(d), float64(sum), float64(50*time.Millisecond), "the stages account for the call's duration")
	assert.Equal(t, int32(1), hooks.Load())

	t.Run("a denied call has only checks", func(t *testing.T) {
		m := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "slow", `{}`))},
			looptest.Turn{Reply: looptest.Text("done")})
		rec := &looptest.Recorder{}
		l := &toolloop.AgentLoop{Model: m, Tools: &reg, OnEvent: rec.Record,
			Guard: toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
				return toolloop.Verdict{Decision: toolloop.Deny}
			})}
		_, err := l.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("go")})
		require.NoError(t, err)
		tm := rec.Of(toolloop.EventComplete)[0].Timing
		require.NotNil(t, tm)
		assert.Positive(t, tm.Checks)
		assert.Zero(t, tm.Tool+tm.After+tm.Approval+tm.PreHooks)
	})
}

func TestApprovalEditsArguments(t *testing.T) {
	type pathArgs struct {
		Path string `json:"path" jsonschema:"required"`
	}
	newReg := func(ran *[]string) *toolloop.ToolRegistry {
		var reg toolloop.ToolRegistry
		reg.MustRegister(toolloop.NewTool("rm", "Removes a file.", func(_ context.Context, a pathArgs) (any, error) {
			*ran = append(*ran, a.Path)
			return "removed " + a.Path, nil
		}))
		return &reg
	}
	ask := toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
		return toolloop.Verdict{Decision: toolloop.Ask, Reason: "destructive"}
	})
	tests := []struct {
		name     string
		edit     string
		ran      []string
		modified []string
		kind     toolloop.ErrorKind
	}{
		{"an edit runs the call with it", `{"path":"b.txt"}`, []string{"b.txt"}, []string{"approval: edited"}, ""},
		{"an edit equal to the call changes nothing", `{ "path": "a.txt" }`, []string{"a.txt"}, nil, ""},
		{"an edit the schema refuses fails the call", `{"path":7}`, nil, nil, toolloop.KindInvalidArgs},
		{"an edit that is not JSON fails the call", `{"path":`, nil, nil, toolloop.KindInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []string
			m := looptest.NewModel(t,
				looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "rm", `{"path":"a.txt"}`))},
				looptest.Turn{Reply: looptest.Text("done")})
			rec := &looptest.Recorder{}
			l := &toolloop.AgentLoop{Model: m, Tools: newReg(&ran), Guard: ask, OnEvent: rec.Record,
				Approver: toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
					return toolloop.Approval{Approved: true, Arguments: json.RawMessage(tt.edit)}, nil
				})}
			res, err := l.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("clean up")})
			require.NoError(t, err)
			assert.Equal(t, tt.ran, ran)
			r := looptest.Results(res.Messages)["c1"]
			require.NotNil(t, r)
			assert.Equal(t, tt.modified, r.Meta.Modified)
			if tt.kind != "" {
				require.NotNil(t, r.Error)
				assert.Equal(t, tt.kind, r.Error.Kind)
				assert.Contains(t, r.Error.Message, "edited when the call was approved")
				return
			}
			require.Nil(t, r.Error)
			if tt.modified != nil {
				assert.Contains(t, r.Text(), `the arguments were edited when the call was approved, before it ran. It ran with: {"path":"b.txt"}`)
				assert.NotContains(t, r.Text(), "policy")
			}
			pc := rec.Of(toolloop.EventPermissionCompleted)
			require.Len(t, pc, 1)
			assert.JSONEq(t, tt.edit, string(pc[0].Approval.Arguments))
		})
	}
	t.Run("a paused call resumed with edited arguments", func(t *testing.T) {
		var ran []string
		m := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "rm", `{"path":"a.txt"}`))},
			looptest.Turn{Reply: looptest.Text("done")})
		l := &toolloop.AgentLoop{Model: m, Tools: newReg(&ran), Guard: ask, PauseForApproval: true}
		res, err := l.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("clean up")})
		require.ErrorIs(t, err, toolloop.ErrPaused)
		require.Empty(t, ran)
		res, err = l.Resume(t.Context(), res.Paused, map[string]toolloop.Approval{
			"c1": {Approved: true, Arguments: json.RawMessage(`{"path":"c.txt"}`)}})
		require.NoError(t, err)
		assert.Equal(t, []string{"c.txt"}, ran)
		assert.Equal(t, []string{"approval: edited"}, looptest.Results(res.Messages)["c1"].Meta.Modified)
	})
	t.Run("a denial's arguments are ignored", func(t *testing.T) {
		var ran []string
		m := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "rm", `{"path":"a.txt"}`))},
			looptest.Turn{Reply: looptest.Text("done")})
		l := &toolloop.AgentLoop{Model: m, Tools: newReg(&ran), Guard: ask,
			Approver: toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
				return toolloop.Approval{Approved: false, Reason: "no", Arguments: json.RawMessage(`{"path":"b.txt"}`)}, nil
			})}
		res, err := l.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("clean up")})
		require.NoError(t, err)
		assert.Empty(t, ran)
		assert.Equal(t, toolloop.KindDenied, looptest.Results(res.Messages)["c1"].Error.Kind)
	})
}
