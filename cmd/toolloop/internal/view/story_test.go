package view

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// recordEdited runs a real loop whose guard asks about rm with its rule
// "destructive", rewriting the arguments (dry run), and pauses; the
// person deciding approves with arguments they edited (another path), as
// toolloop.Approval.Arguments carries them.
// A pre-tool-use hook adds context to the result.
func recordEdited(t *testing.T) []byte {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("rm", "Removes a file.", func(_ context.Context, in struct {
		Path   string `json:"path"`
		DryRun bool   `json:"dry_run,omitempty"`
	}) (any, error) {
		return "1 line", nil
	}))
	guard := toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
		if c.Name != "rm" {
			return toolloop.Verdict{Decision: toolloop.Allow}
		}
		return toolloop.Verdict{Decision: toolloop.Ask, Rule: "destructive", Reason: "removes files",
			Arguments: json.RawMessage(`{"path":"a.txt","dry_run":true}`)}
	})
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "rm", `{"path":"a.txt"}`))},
		looptest.Turn{Reply: looptest.Text("Removed.")},
	)
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: guard, PauseForApproval: true, OnEvent: w.Record}
	res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("Remove b.txt.")})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.NotNil(t, res.Paused)
	res, err = loop.Resume(t.Context(), res.Paused, map[string]toolloop.Approval{"c1": {Approved: true, Reason: "b, not a",
		Arguments: json.RawMessage(`{"path":"b.txt"}`)}}) // the person's edit
	require.NoError(t, err)
	require.Equal(t, toolloop.StopEnd, res.StopReason)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestModelArgumentsAttributed: a call shows the arguments it ran with,
// the model's beside them, and each change by who made it: the guard's
// rewrite by its rule, the person's edit as the person's. The result and
// the guard's note are apart.
func TestModelArgumentsAttributed(t *testing.T) {
	p := buildLog(t, recordEdited(t), Options{})
	require.Len(t, p.Runs, 1)
	c := callsByID(p.Runs)["c1"]
	require.NotNil(t, c)
	assert.Equal(t, statusOK, c.Status)
	require.NotNil(t, c.Args)
	require.NotNil(t, c.Original)
	assert.JSONEq(t, `{"path":"b.txt"}`, c.Args.S, "the arguments it ran with")
	assert.JSONEq(t, `{"path":"a.txt"}`, c.Original.S, "the model's")
	require.Len(t, c.Changes, 2)
	assert.Equal(t, byGuard, c.Changes[0].By)
	assert.Equal(t, "destructive", c.Changes[0].Name)
	assert.Equal(t, "removes files", c.Changes[0].Reason.S)
	assert.JSONEq(t, `{"path":"a.txt","dry_run":true}`, c.Changes[0].Args.S)
	assert.Equal(t, byPerson, c.Changes[1].By, "the last change is the person's, not the guard's")
	assert.Equal(t, "b, not a", c.Changes[1].Reason.S)
	assert.JSONEq(t, `{"path":"b.txt"}`, c.Changes[1].Args.S)
	require.NotNil(t, c.Result)
	assert.Equal(t, "1 line", c.Result.S, "the result without the note")
	require.Len(t, c.Notes, 2, "the guard's note and the approval's")
	assert.True(t, strings.HasPrefix(c.Notes[0].S, guardNote), c.Notes[0].S)
	assert.True(t, strings.HasPrefix(c.Notes[1].S, approvalNote), c.Notes[1].S)
}

// TestModelArgumentsByHookAndProcessor: a processor's change (the call
// started with other arguments than the model's) and a hook's are theirs,
// and a hook's context is a note apart from the result.
func TestModelArgumentsByHookAndProcessor(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	ev := func(n int, typ toolloop.EventType) toolloop.Event {
		return toolloop.Event{Type: typ, Time: ms(n), RunID: "r", Turn: 1, CallID: "c1", Tool: "echo"}
	}
	start := ev(6, toolloop.EventStart)
	start.Arguments = json.RawMessage(`{"text":"y"}`)
	modify := ev(7, toolloop.EventHook)
	modify.Hook = &toolloop.HookEffect{Hook: "pre_tool_use", Index: 0, Effect: "modify", Detail: `{"text":"z"}`}
	ctx := ev(8, toolloop.EventHook)
	ctx.Hook = &toolloop.HookEffect{Hook: "pre_tool_use", Index: 1, Effect: "context", Detail: "mind the z"}
	done := ev(20, toolloop.EventComplete)
	done.Result = &toolloop.ToolResult{CallID: "c1", Name: "echo", Status: toolloop.StatusOK,
		Content: []toolloop.Content{toolloop.TextContent("z"), toolloop.TextContent("mind the z")}}
	evs := append(sampleEvents()[:2], start, modify, ctx, done)
	p, err := build(events(evs...), &Options{})
	require.NoError(t, err)
	c := callsByID(p.Runs)["c1"]
	require.Len(t, c.Changes, 2)
	assert.Equal(t, byProcessor, c.Changes[0].By)
	assert.Equal(t, byHook, c.Changes[1].By)
	assert.Equal(t, "pre_tool_use[0]", c.Changes[1].Name)
	assert.JSONEq(t, `{"text":"z"}`, c.Args.S)
	assert.JSONEq(t, `{"text":"x"}`, c.Original.S)
	assert.Equal(t, "z", c.Result.S)
	require.Len(t, c.Notes, 1)
	assert.Equal(t, "mind the z", c.Notes[0].S)

	// A person who approves a call with arguments they edited changed
	// them: the approval carries them.
	verdict := ev(7, toolloop.EventGuardVerdict)
	verdict.Verdict = &toolloop.Verdict{Decision: toolloop.Ask, Rule: "writes", Reason: "writes need a human"}
	approved := ev(8, toolloop.EventPermissionCompleted)
	approved.Approval = &toolloop.Approval{Approved: true, Reason: "w is right", Arguments: json.RawMessage(`{"text":"w"}`)}
	p, err = build(events(append(sampleEvents()[:2], ev(6, toolloop.EventStart), verdict, approved, done)...), &Options{})
	require.NoError(t, err)
	c = callsByID(p.Runs)["c1"]
	require.Len(t, c.Changes, 1)
	assert.Equal(t, byPerson, c.Changes[0].By)
	assert.Equal(t, "w is right", c.Changes[0].Reason.S)
	assert.JSONEq(t, `{"text":"w"}`, c.Args.S)

	// Unchanged arguments show once.
	p, err = build(events(sampleEvents()...), &Options{})
	require.NoError(t, err)
	c = callsByID(p.Runs)["c1"]
	assert.Nil(t, c.Original)
	assert.Empty(t, c.Changes)
	assert.JSONEq(t, `{"text":"x"}`, c.Args.S)
}

// resumedEvents is a run (r1) whose process stopped during call c1, so
// that the run was aborted, then resumed under a new ID (r2) with its
// transcript: the repair answers c1, and r2 ends with stop. A later run
// (r3) of the same conversation, after r2 ended, is a run of its own.
func resumedEvents() []toolloop.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	call := looptest.Call("c1", "echo", `{"text":"x"}`)
	asked := toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call}}
	synth := &toolloop.ToolResult{CallID: "c1", Name: "echo", Status: toolloop.StatusError,
		Error:   &toolloop.ToolError{Kind: toolloop.KindCanceled, Message: "the call did not finish"},
		Content: []toolloop.Content{toolloop.TextContent("the call did not finish")}}
	transcript := []toolloop.Message{toolloop.UserMessage("hi"), asked}
	return []toolloop.Event{
		{Type: toolloop.EventRunStart, Time: ms(0), RunID: "r1", Messages: transcript[:1]},
		{Type: toolloop.EventModelResponse, Time: ms(5), RunID: "r1", Turn: 1, Response: &toolloop.Response{Message: asked}},
		{Type: toolloop.EventStart, Time: ms(6), RunID: "r1", Turn: 1, CallID: "c1", Tool: "echo", Arguments: call.Arguments},
		{Type: toolloop.EventRunEnd, Time: ms(9), RunID: "r1", StopReason: toolloop.StopAborted, Error: "context canceled"},
		{Type: toolloop.EventRunStart, Time: ms(100), RunID: "r2", Messages: transcript},
		{Type: toolloop.EventTranscriptRepaired, Time: ms(100), RunID: "r2", Repairs: []string{"answered 1 call without a result"},
			Messages: []toolloop.Message{{Role: toolloop.RoleTool, Result: synth}}},
		{Type: toolloop.EventModelResponse, Time: ms(110), RunID: "r2", Turn: 1, Response: &toolloop.Response{
			StopReason: toolloop.StopEnd, Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("done")}}}},
		{Type: toolloop.EventRunEnd, Time: ms(111), RunID: "r2", StopReason: toolloop.StopEnd},
		{Type: toolloop.EventRunStart, Time: ms(200), RunID: "r3", Messages: append(transcript, toolloop.Message{Role: toolloop.RoleTool, Result: synth})},
		{Type: toolloop.EventRunEnd, Time: ms(201), RunID: "r3", StopReason: toolloop.StopEnd},
	}
}

// TestModelResumedRun: a run resumed under a new ID is a part of the
// run it resumed, the story ends as its last part does, and the call the
// repair answered is no longer unfinished.
func TestModelResumedRun(t *testing.T) {
	p, err := build(events(resumedEvents()...), &Options{})
	require.NoError(t, err)
	require.Len(t, p.Runs, 2, "r2 is a part of r1; r3, after r2 ended, is its own run")
	r1 := p.Runs[0]
	assert.Equal(t, "r1", r1.ID)
	assert.Equal(t, "aborted", r1.Stop)
	require.Len(t, r1.Parts, 1)
	r2 := r1.Parts[0]
	assert.Equal(t, "r2", r2.ID)
	assert.Equal(t, "r1", r2.Resumes)
	assert.Equal(t, "stop", r2.Stop, "the story's end is its last part's")
	assert.Equal(t, "r3", p.Runs[1].ID)
	assert.Empty(t, p.Runs[1].Resumes)
	assert.Equal(t, 2, p.Turns, "the parts' turns count")

	c := callsByID(p.Runs)["c1"]
	require.NotNil(t, c)
	assert.Equal(t, statusCanceled, c.Status, "the repair answered it")
	require.NotNil(t, c.Repair)
	assert.Contains(t, c.Repair.S, "answered 1 call without a result")
	assert.Contains(t, c.Repair.S, "r2")
	assert.Zero(t, p.Counts[statusUnfinished])
}

// TestModelCrashedPartCounted: the part of a run whose process died has
// no accounting in the log; what its turns spent still counts.
func TestModelCrashedPartCounted(t *testing.T) {
	p, err := build(eventlog.Events(bytes.NewReader(crashedLog(t))), &Options{})
	require.NoError(t, err)
	require.Len(t, p.Runs, 1)
	dead := p.Runs[0]
	require.Len(t, dead.Parts, 1)
	require.NotNil(t, dead.Acct)
	assert.True(t, dead.Counted)
	assert.Equal(t, int64(1700), dead.Acct.Usage.InputTokens)
	assert.Equal(t, int64(70), dead.Acct.Usage.OutputTokens)
	assert.Positive(t, dead.Acct.Cost)
	assert.False(t, dead.Parts[0].Counted, "the resumed part ended, with its accounting")
}
