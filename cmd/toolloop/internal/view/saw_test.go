package view

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// thinking is how long the approver of recordSaw takes to decide: the
// wait the page accounts to approval.
const thinking = 30 * time.Millisecond

// recordSaw runs a real loop with a system and a user prompt: turn 1
// asks for read (whose long result the loop truncates for the model)
// and write, which the guard asks about and the approver, after
// thinking, approves with arguments it edited; turn 2 answers in text.
func recordSaw(t *testing.T) []byte {
	var reg toolloop.ToolRegistry
	type file struct {
		Path string `json:"path"`
		Text string `json:"text,omitempty"`
	}
	reg.MustRegister(toolloop.NewTool("read", "Reads a file.", func(_ context.Context, in file) (any, error) {
		return strings.Repeat("line of "+in.Path+"\n", 400), nil
	}))
	reg.MustRegister(toolloop.NewTool("write", "Writes a file.", func(_ context.Context, in file) (any, error) {
		return "wrote " + in.Path, nil
	}))
	guard := toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
		if c.Name == "write" {
			return toolloop.Verdict{Decision: toolloop.Ask, Rule: "writes", Reason: "writes need a person"}
		}
		return toolloop.Verdict{Decision: toolloop.Allow}
	})
	approver := toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
		time.Sleep(thinking) // the person thinks; not a synchronization
		return toolloop.Approval{Approved: true, Reason: "y, not x", Arguments: json.RawMessage(`{"path":"y.txt","text":"hi"}`)}, nil
	})
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	model := looptest.NewModel(t,
		looptest.Turn{Reply: withUsage(looptest.Calls(
			looptest.Call("c1", "read", `{"path":"a.txt"}`),
			looptest.Call("c2", "write", `{"path":"x.txt","text":"hi"}`)), 1200, 40)},
		looptest.Turn{Reply: withUsage(looptest.Text("Wrote y.txt."), 1500, 10)},
	)
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: guard, Approver: approver, OnEvent: w.Record,
		Limits: toolloop.Limits{MaxResultBytes: 300}}
	res, err := loop.Run(t.Context(), []toolloop.Message{
		toolloop.SystemMessage("You are careful with files."),
		toolloop.UserMessage("Copy a.txt to y.txt."),
	})
	require.NoError(t, err)
	require.Equal(t, toolloop.StopEnd, res.StopReason)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestSawRequests: each turn has its request: the first holds the system
// and user prompts, the next what was new (the model's turn, the results
// as the model saw them: truncated, with the loop's note), the tools
// once and then "same", and the token estimate.
func TestSawRequests(t *testing.T) {
	p := buildLog(t, recordSaw(t), Options{})
	require.Len(t, p.Runs, 1)
	r := p.Runs[0]
	require.Len(t, r.Turns, 2)
	q1, q2 := r.Turns[0].Request, r.Turns[1].Request
	require.NotNil(t, q1, "the first turn's request")
	require.NotNil(t, q2)

	assert.Equal(t, 0, q1.From)
	assert.Equal(t, 2, q1.Count)
	require.Len(t, q1.Messages, 2)
	assert.Equal(t, "system", q1.Messages[0].Role)
	assert.Equal(t, "You are careful with files.", q1.Messages[0].Text.S)
	assert.Equal(t, "user", q1.Messages[1].Role)
	assert.Equal(t, "Copy a.txt to y.txt.", q1.Messages[1].Text.S)
	assert.ElementsMatch(t, []string{"read", "write"}, q1.Tools)
	assert.Equal(t, 2, q1.ToolCount)
	assert.False(t, q1.SameTools)
	assert.Positive(t, q1.Tokens)

	assert.Equal(t, 2, q2.From, "the second request repeats the prompts")
	assert.Equal(t, 5, q2.Count)
	var roles []string
	for _, m := range q2.Messages {
		roles = append(roles, m.Role)
	}
	assert.Equal(t, []string{"assistant", "tool", "tool"}, roles)
	assert.Equal(t, []string{"read (c1)", "write (c2)"}, q2.Messages[0].Calls)
	read, write := q2.Messages[1], q2.Messages[2]
	assert.Equal(t, "c1", read.CallID)
	assert.Equal(t, "read", read.Tool)
	assert.Less(t, len(read.Text.S), 400*len("line of a.txt\n"), "the result as the model saw it: truncated")
	assert.Equal(t, "c2", write.CallID)
	assert.Contains(t, write.Text.S, "wrote y.txt")
	assert.Contains(t, write.Text.S, approvalNote, "the model saw the loop's note")
	assert.True(t, q2.SameTools, "the same tools as the previous turn")
	assert.Nil(t, q2.Tools, "named once")
	assert.Equal(t, 2, q2.ToolCount)
	assert.Greater(t, q2.Tokens, q1.Tokens)

	// The page's texts are bounded: a request's messages too.
	small := buildLog(t, recordSaw(t), Options{FieldBytes: 64})
	m := small.Runs[0].Turns[1].Request.Messages[1]
	assert.LessOrEqual(t, len(m.Text.S), 64)
	assert.Positive(t, m.Text.More)
}

// TestSawTiming: a call's stages come from its completion, its queue from
// the model's response, and the turn says where its time went: the
// approver's thinking is approval, not the tools'.
func TestSawTiming(t *testing.T) {
	p := buildLog(t, recordSaw(t), Options{})
	t1 := p.Runs[0].Turns[0]
	calls := callsByID(p.Runs)
	read, write := calls["c1"], calls["c2"]
	require.NotNil(t, read.Timing)
	require.NotNil(t, write.Timing)
	assert.GreaterOrEqual(t, read.Timing.Queue, 0.0, "the log has the response and the start")
	assert.Positive(t, read.Timing.Tool)
	assert.Zero(t, read.Timing.Approval)
	assert.GreaterOrEqual(t, write.Timing.Approval, ms(thinking))
	assert.Less(t, write.Timing.Tool, write.Timing.Approval)
	assert.InDelta(t, write.Dur, write.Timing.total(), 5, "the stages account for the call")

	require.NotNil(t, t1.Spent)
	assert.GreaterOrEqual(t, t1.Spent.Approval, ms(thinking))
	assert.Less(t, t1.Spent.Tools, ms(thinking), "the wait is not the tools'")
	assert.GreaterOrEqual(t, t1.Spent.Model, 0.0)
	assert.InDelta(t, t1.Dur, t1.Spent.Model+t1.Spent.Tools+t1.Spent.Approval+t1.Spent.Other, 0.01, "the parts make the turn")
	assert.Nil(t, p.Runs[0].Turns[1].Spent, "a turn without calls has nothing to split")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestSawPersonEdit: the approver's edited arguments are the person's
// change, with the reason; the call shows what it ran with and the
// model's beside it.
func TestSawPersonEdit(t *testing.T) {
	p := buildLog(t, recordSaw(t), Options{})
	c := callsByID(p.Runs)["c2"]
	require.NotNil(t, c)
	assert.Equal(t, statusOK, c.Status)
	require.Len(t, c.Changes, 1)
	assert.Equal(t, byPerson, c.Changes[0].By)
	assert.Equal(t, "y, not x", c.Changes[0].Reason.S)
	assert.JSONEq(t, `{"path":"y.txt","text":"hi"}`, c.Args.S)
	require.NotNil(t, c.Original)
	assert.JSONEq(t, `{"path":"x.txt","text":"hi"}`, c.Original.S)
	require.NotNil(t, c.Approval)
	assert.True(t, c.Approval.Edited)
	assert.Equal(t, "wrote y.txt", c.Result.S, "the result apart from the loop's note")
	require.Len(t, c.Notes, 1)
	assert.True(t, strings.HasPrefix(c.Notes[0].S, approvalNote))
	assert.Contains(t, c.Modified, "approval: edited")
}

// TestSawPersonEditAtResume: a paused call resumed with other arguments
// than it paused with (the pending call edited) is the person's change
// too, as before the approval carried arguments; an approval whose
// arguments are the call's changes nothing.
func TestSawPersonEditAtResume(t *testing.T) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("rm", "Removes a file.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (any, error) {
		return "removed " + in.Path, nil
	}))
	guard := toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
		return toolloop.Verdict{Decision: toolloop.Ask, Reason: "removes"}
	})
	for _, tc := range []struct {
		name    string
		pending string // the pending call's arguments at resume
		edit    string // the approval's
		want    []string
		args    string
	}{
		{"pending edited", `{"path":"b.txt"}`, "", []string{byPerson}, `{"path":"b.txt"}`},
		{"approval with the same arguments", `{"path":"a.txt"}`, `{"path":"a.txt"}`, nil, `{"path":"a.txt"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
			model := looptest.NewModel(t,
				looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "rm", `{"path":"a.txt"}`))},
				looptest.Turn{Reply: looptest.Text("Done.")},
			)
			loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: guard, PauseForApproval: true, OnEvent: w.Record}
			res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("Remove it.")})
			require.ErrorIs(t, err, toolloop.ErrPaused)
			res.Paused.Pending[0].Arguments = json.RawMessage(tc.pending)
			a := toolloop.Approval{Approved: true, Reason: "ok"}
			if tc.edit != "" {
				a.Arguments = json.RawMessage(tc.edit)
			}
			_, err = loop.Resume(t.Context(), res.Paused, map[string]toolloop.Approval{"c1": a})
			require.NoError(t, err)
			require.NoError(t, w.Close())
			p := buildLog(t, buf.Bytes(), Options{})
			c := callsByID(p.Runs)["c1"]
			var by []string
			for _, ch := range c.Changes {
				by = append(by, ch.By)
			}
			assert.Equal(t, tc.want, by)
			assert.JSONEq(t, tc.args, c.Args.S)
			require.NotNil(t, c.Timing, "the resumed call has its stages")
			assert.Positive(t, c.Timing.Paused, "it waited from its start to its resumption")
			assert.InDelta(t, c.At+c.Dur, c.Timing.Start+c.Timing.total(), 0.01, "its stages end with it")
			sp := p.Runs[0].Turns[0].Spent
			require.NotNil(t, sp)
			assert.GreaterOrEqual(t, sp.Approval, c.Timing.Paused, "the pause is approval's")
		})
	}
}

// TestSawOutputTool: a call of the output tool is the turn's typed
// answer, marked as output; the request offered the tool.
func TestSawOutputTool(t *testing.T) {
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", toolloop.DefaultOutputName, `{"answer":"42"}`))},
	)
	loop := &toolloop.AgentLoop{Model: model, OnEvent: w.Record, Output: &toolloop.OutputFormat{
		Schema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)}}
	res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("What is it?")})
	require.NoError(t, err)
	require.JSONEq(t, `{"answer":"42"}`, string(res.Output))
	require.NoError(t, w.Close())
	p := buildLog(t, buf.Bytes(), Options{})
	c := callsByID(p.Runs)["c1"]
	require.NotNil(t, c)
	assert.True(t, c.Output, "source %q", c.Source)
	assert.JSONEq(t, `{"answer":"42"}`, c.Args.S)
	q := p.Runs[0].Turns[0].Request
	require.NotNil(t, q)
	assert.Contains(t, q.Tools, toolloop.DefaultOutputName)
	assert.Nil(t, p.Runs[0].Turns[0].Answer, "the answer is the call's")
}

// crafted is a run's events as a log without some payloads would have
// them, or with ones a scripted model does not make (a native output
// format, a compaction).
func crafted() []toolloop.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	prompt := []toolloop.Message{toolloop.SystemMessage("sys"), toolloop.UserMessage("report, please")}
	asked := toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{looptest.Call("c1", "echo", `{"text":"x"}`)}}
	result := &toolloop.ToolResult{CallID: "c1", Name: "echo", Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("x")}}
	summary := toolloop.UserMessage("Summary of the conversation so far: echoed x.")
	answer := toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("```json\n{\"status\":\"green\",\"n\":3}\n```")}}
	return []toolloop.Event{
		{Type: toolloop.EventRunStart, Time: at(0), RunID: "r", Messages: prompt},
		{Type: toolloop.EventModelRequest, Time: at(1), RunID: "r", Turn: 1, Messages: prompt,
			Request: &toolloop.RequestInfo{From: 0, Messages: 2, Tools: []string{"echo", "deploy"}, Loaded: []string{"deploy"},
				ToolChoice: toolloop.ToolChoice{Mode: "required", Name: "echo"}, Tokens: 900, Window: 3000}},
		{Type: toolloop.EventModelResponse, Time: at(11), RunID: "r", Turn: 1, Response: &toolloop.Response{Message: asked}},
		{Type: toolloop.EventStart, Time: at(12), RunID: "r", Turn: 1, CallID: "c1", Tool: "echo", Arguments: asked.ToolCalls[0].Arguments},
		{Type: toolloop.EventComplete, Time: at(20), RunID: "r", Turn: 1, CallID: "c1", Tool: "echo", Result: result},
		{Type: toolloop.EventTranscriptEdited, Time: at(21), RunID: "r", Turn: 2, Edit: &toolloop.TranscriptEdit{Strategy: "compact"}},
		{Type: toolloop.EventModelRequest, Time: at(22), RunID: "r", Turn: 2, Messages: []toolloop.Message{summary},
			Request: &toolloop.RequestInfo{From: 1, Messages: 2, Tools: []string{"echo"}, Output: "report", Tokens: 300}},
		{Type: toolloop.EventModelResponse, Time: at(40), RunID: "r", Turn: 2, Response: &toolloop.Response{Message: answer}},
		{Type: toolloop.EventRunEnd, Time: at(41), RunID: "r", StopReason: toolloop.StopEnd},
	}
}

// TestSawCrafted: a compaction's summary is the request's new message,
// the tools changed are listed with those loaded by search, the tool
// choice and window are kept, and a turn that answered a native output
// format in text has the typed answer. A call without a timing has none,
// nor its turn a split.
func TestSawCrafted(t *testing.T) {
	p, err := build(events(crafted()...), &Options{})
	require.NoError(t, err)
	t1, t2 := p.Runs[0].Turns[0], p.Runs[0].Turns[1]
	require.NotNil(t, t1.Request)
	assert.Equal(t, "required echo", t1.Request.Choice)
	assert.Equal(t, []string{"deploy"}, t1.Request.Loaded)
	assert.Equal(t, 3000, t1.Request.Window)
	assert.Equal(t, 1.0, t1.Request.At)
	require.NotNil(t, t2.Request)
	assert.False(t, t2.Request.SameTools, "the tools changed")
	assert.Equal(t, []string{"echo"}, t2.Request.Tools)
	require.Len(t, t2.Request.Messages, 1)
	assert.Equal(t, "user", t2.Request.Messages[0].Role)
	assert.Contains(t, t2.Request.Messages[0].Text.S, "Summary of the conversation")
	assert.Equal(t, 1, t2.Request.From)
	require.NotNil(t, t2.Answer)
	assert.JSONEq(t, `{"status":"green","n":3}`, t2.Answer.S)
	assert.Equal(t, "report", t2.AnswerName)

	c := callsByID(p.Runs)["c1"]
	assert.Nil(t, c.Timing)
	assert.Nil(t, t1.Spent)
	assert.False(t, c.Output)
}

// TestSawPrompt: a run whose first request is not in the log (written
// without transient events) shows the messages it started with; one
// whose request is there shows them in the request only.
func TestSawPrompt(t *testing.T) {
	var dropped []toolloop.Event
	for _, e := range crafted() {
		if !e.Type.Transient() {
			dropped = append(dropped, e)
		}
	}
	p, err := build(events(dropped...), &Options{})
	require.NoError(t, err)
	r := p.Runs[0]
	require.Len(t, r.Prompt, 2)
	assert.Equal(t, "system", r.Prompt[0].Role)
	assert.Equal(t, "sys", r.Prompt[0].Text.S)
	assert.Equal(t, "report, please", r.Prompt[1].Text.S)
	assert.Nil(t, r.Turns[0].Request)

	p, err = build(events(crafted()...), &Options{})
	require.NoError(t, err)
	assert.Nil(t, p.Runs[0].Prompt)
}

// TestSawOlderLog: a log without the new payloads (no request, no
// timing) builds as before: no request, no split, no answer.
func TestSawOlderLog(t *testing.T) {
	p, err := build(events(sampleEvents()...), &Options{})
	require.NoError(t, err)
	for _, r := range p.Runs {
		for _, tn := range r.Turns {
			assert.Nil(t, tn.Request)
			assert.Nil(t, tn.Spent)
			assert.Nil(t, tn.Answer)
			for _, c := range tn.Calls {
				assert.Nil(t, c.Timing)
			}
		}
	}
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	for _, key := range []string{`"request"`, `"spent"`, `"timing"`, `"answer"`, `"output"`} {
		assert.NotContains(t, string(raw), key)
	}
}

// manyTurns crafts a run of n turns with requests and timed calls, two
// calls a turn, for the speed of the page.
func manyTurns(n int) []toolloop.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	prompt := []toolloop.Message{toolloop.SystemMessage("You are a tester."), toolloop.UserMessage("Test everything.")}
	evs := []toolloop.Event{{Type: toolloop.EventRunStart, Time: at(0), RunID: "r", Messages: prompt}}
	tools := []string{"read_file", "grep_search", "run_tests"}
	var last []toolloop.Message
	clock := 1
	for turn := 1; turn <= n; turn++ {
		msgs, from := prompt, 0
		if turn > 1 {
			msgs, from = last, 2+4*(turn-2)
		}
		evs = append(evs, toolloop.Event{Type: toolloop.EventModelRequest, Time: at(clock), RunID: "r", Turn: turn, Messages: msgs,
			Request: &toolloop.RequestInfo{From: from, Messages: from + len(msgs), Tools: tools, Tokens: 1000 + 50*turn, Window: 200000}})
		clock += 20
		var tcs []toolloop.ToolCall
		for k := range 2 {
			tcs = append(tcs, looptest.Call(fmt.Sprintf("c%d_%d", turn, k), tools[(turn+k)%3], fmt.Sprintf(`{"n":%d}`, turn)))
		}
		asked := toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: tcs, Content: []toolloop.Content{toolloop.TextContent(fmt.Sprintf("Step %d.", turn))}}
		evs = append(evs, toolloop.Event{Type: toolloop.EventModelResponse, Time: at(clock), RunID: "r", Turn: turn,
			Response: &toolloop.Response{Message: asked, Model: "gpt-4.1", Usage: toolloop.Usage{InputTokens: int64(1000 + 50*turn), OutputTokens: 40}}})
		last = []toolloop.Message{asked}
		for k, tc := range tcs {
			res := &toolloop.ToolResult{CallID: tc.ID, Name: tc.Name, Status: toolloop.StatusOK,
				Content: []toolloop.Content{toolloop.TextContent(fmt.Sprintf("result %d of turn %d", k, turn))}}
			evs = append(evs,
				toolloop.Event{Type: toolloop.EventStart, Time: at(clock + 1), RunID: "r", Turn: turn, CallID: tc.ID, Tool: tc.Name, Arguments: tc.Arguments},
				toolloop.Event{Type: toolloop.EventComplete, Time: at(clock + 6), RunID: "r", Turn: turn, CallID: tc.ID, Tool: tc.Name, Result: res,
					Timing: &toolloop.CallTiming{Checks: time.Millisecond, Tool: 3 * time.Millisecond, After: time.Millisecond}})
			last = append(last, toolloop.ToolMessage(res))
		}
		clock += 8
	}
	evs = append(evs, toolloop.Event{Type: toolloop.EventRunEnd, Time: at(clock), RunID: "r", StopReason: toolloop.StopEnd})
	return evs
}

// TestSawManyTurns: the crafted run's model is whole: each turn's
// request, the tools named once.
func TestSawManyTurns(t *testing.T) {
	p, err := build(events(manyTurns(50)...), &Options{})
	require.NoError(t, err)
	r := p.Runs[0]
	require.Len(t, r.Turns, 50)
	named := 0
	for _, tn := range r.Turns {
		require.NotNil(t, tn.Request)
		require.NotNil(t, tn.Spent)
		if tn.Request.Tools != nil {
			named++
		}
	}
	assert.Equal(t, 1, named, "the tools are named on the first request only")
}

// TestSawRequestBounds: the names a request lists are bounded as every
// text of the page is: each cut, at most maxNames of them, the count
// whole.
func TestSawRequestBounds(t *testing.T) {
	evs := crafted()
	tools := []string{strings.Repeat("x", 500)}
	for i := range maxNames + 10 {
		tools = append(tools, fmt.Sprintf("tool_%d", i))
	}
	evs[1].Request.Tools = tools
	evs[1].Request.ToolChoice.Name = strings.Repeat("y", 500)
	p, err := build(events(evs...), &Options{FieldBytes: 64})
	require.NoError(t, err)
	q := p.Runs[0].Turns[0].Request
	assert.Equal(t, len(tools), q.ToolCount)
	assert.Len(t, q.Tools, maxNames)
	assert.True(t, strings.HasPrefix(q.Tools[0], strings.Repeat("x", 64)+"…"), q.Tools[0])
	assert.Less(t, len(q.Tools[0]), 100)
	assert.Less(t, len(q.Choice), 100)
}
