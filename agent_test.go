package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// spend gives a scripted reply a usage, from a priced model.
func spend(r *toolloop.Response, in, out int64) *toolloop.Response {
	r.Usage = toolloop.Usage{InputTokens: in, OutputTokens: out}
	r.Model = "test-model"
	return r
}

// testModels prices test-model at $1 per million input tokens and $2 per
// million output tokens.
var testModels = toolloop.ModelTable{"test-model": {Price: &toolloop.Price{Input: 1, Output: 2}}}

// counter is a tool that counts its runs by call ID.
type counter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counter) tool(name string, destructive bool) toolloop.Tool {
	t, err := toolloop.NewSchemaTool(name, "Counts its runs.",
		json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		func(_ context.Context, call *toolloop.Call) (any, error) {
			c.count(call)
			var in struct{ Path string }
			if err := call.Bind(&in); err != nil {
				return nil, err
			}
			return name + " " + in.Path + " done", nil
		})
	if err != nil {
		panic(err)
	}
	t.Annotations.Destructive = destructive
	return t
}

func (c *counter) count(call *toolloop.Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = make(map[string]int)
	}
	c.runs[call.RunID+":"+call.ID]++
}

// textAndCalls is a reply with text and calls.
func textAndCalls(text string, calls ...toolloop.ToolCall) *toolloop.Response {
	r := looptest.Calls(calls...)
	r.Message.Content = []toolloop.Content{toolloop.TextContent(text)}
	return r
}

// byCall counts the runs of calls with this ID, in any run.
func (c *counter) byCall(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.runs {
		if strings.HasSuffix(k, ":"+id) {
			n += v
		}
	}
	return n
}

// researcher is a child agent that reads twice and answers.
func researcher(t *testing.T, c *counter) *toolloop.AgentLoop {
	return &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: spend(looptest.Calls(looptest.Call("call_1", "read", `{"path":"a.txt"}`)), 100, 10)},
			looptest.Turn{Reply: spend(looptest.Text("a.txt says hello"), 200, 20)}),
		Tools:      registry(t, c.tool("read", false)),
		ModelTable: testModels,
	}
}

func TestAgentToolRunsTheChild(t *testing.T) {
	var c counter
	child := researcher(t, &c)
	agent := toolloop.NewAgentTool("research", "Research a question.", child)
	agent.Instructions = "You research."
	var mu sync.Mutex
	var events []toolloop.Event
	parent := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: spend(looptest.Calls(looptest.Call("call_1", "research", `{"task":"What does a.txt say?"}`)), 1000, 50)},
			looptest.Turn{Reply: spend(looptest.Text("It says hello."), 2000, 60)}),
		Tools:      registry(t, agent),
		ModelTable: testModels,
		OnEvent: func(e toolloop.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e)
		},
	}
	res, err := parent.Run(context.Background(), user("What does a.txt say?"))
	require.NoError(t, err)
	assert.Equal(t, "It says hello.", res.FinalText)
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	assert.Equal(t, "a.txt says hello", r.Text())
	assert.Equal(t, 1, c.byCall("call_1"), "the child's call ran once")

	// What the child spent is the parent's too.
	want := toolloop.Usage{InputTokens: 1000 + 2000 + 100 + 200, OutputTokens: 50 + 60 + 10 + 20}
	assert.Equal(t, want, res.Usage)
	assert.InDelta(t, (3300*1+140*2)/1e6, res.Cost, 1e-12)
	require.NotNil(t, r.Meta.Spent)
	assert.Equal(t, toolloop.Usage{InputTokens: 300, OutputTokens: 30}, r.Meta.Spent.Usage)
	assert.Equal(t, 1, r.Meta.Spent.ToolCalls)
	assert.Equal(t, 1, res.ToolCalls, "the child's calls are its own")

	// The child's events reach the parent's stream, tagged.
	var childRun string
	var childTypes []toolloop.EventType
	for _, e := range events {
		if e.ParentRunID == "" {
			assert.Equal(t, res.RunID, e.RunID)
			continue
		}
		assert.Equal(t, res.RunID, e.ParentRunID)
		assert.Equal(t, "call_1", e.ParentCallID)
		assert.NotEqual(t, res.RunID, e.RunID)
		if childRun == "" {
			childRun = e.RunID
		}
		assert.Equal(t, childRun, e.RunID, "one child run")
		childTypes = append(childTypes, e.Type)
	}
	assert.Equal(t, []toolloop.EventType{
		toolloop.EventRunStart, toolloop.EventModelRequest, toolloop.EventModelResponse,
		toolloop.EventStart, toolloop.EventComplete, toolloop.EventModelRequest, toolloop.EventModelResponse, toolloop.EventRunEnd,
	}, childTypes)
	for _, e := range events {
		if e.ParentRunID != "" && e.Type == toolloop.EventRunStart {
			require.Len(t, e.Messages, 2)
			assert.Equal(t, toolloop.SystemMessage("You research."), e.Messages[0])
			assert.Equal(t, "What does a.txt say?", e.Messages[1].Text())
		}
		if e.ParentRunID != "" && e.Type == toolloop.EventModelResponse {
			assert.Positive(t, e.Turn, "the child's own turn")
		}
	}
}

// The child's events reach a RunStream's range loop too, in order with
// the parent's.
func TestAgentToolStream(t *testing.T) {
	var c counter
	agent := toolloop.NewAgentTool("research", "Research a question.", researcher(t, &c))
	parent := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("p1", "research", `{"task":"a.txt?"}`))},
			looptest.Turn{Reply: looptest.Text("hello")}),
		Tools: registry(t, agent),
	}
	s := parent.RunStream(context.Background(), user("a.txt?"))
	var child, total int
	for e := range s.Events() {
		total++
		if e.ParentCallID == "p1" {
			child++
		}
	}
	res, err := s.Result()
	require.NoError(t, err)
	assert.Equal(t, "hello", res.FinalText)
	assert.Equal(t, 8, child)
	assert.Greater(t, total, child)
}

// A grandchild's events name the child as their parent; usage adds up
// through every level.
func TestAgentToolNested(t *testing.T) {
	var c counter
	grandchild := researcher(t, &c)
	child := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: spend(looptest.Calls(looptest.Call("call_1", "research", `{"task":"a.txt?"}`)), 10, 1)},
			looptest.Turn{Reply: spend(looptest.Text("hello, it says"), 20, 2)}),
		Tools: registry(t, toolloop.NewAgentTool("research", "Research.", grandchild)),
	}
	rec := &looptest.Recorder{}
	parent := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: spend(looptest.Calls(looptest.Call("call_1", "lead", `{"task":"a.txt?"}`)), 1, 0)},
			looptest.Turn{Reply: spend(looptest.Text("hello"), 2, 0)}),
		Tools:   registry(t, toolloop.NewAgentTool("lead", "Lead.", child)),
		OnEvent: rec.Record,
	}
	res, err := parent.Run(context.Background(), user("a.txt?"))
	require.NoError(t, err)
	assert.Equal(t, toolloop.Usage{InputTokens: 1 + 2 + 10 + 20 + 100 + 200, OutputTokens: 1 + 2 + 10 + 20}, res.Usage)

	runs := map[string]string{} // run ID -> parent run ID
	for _, e := range rec.Events() {
		if e.Type == toolloop.EventRunStart {
			runs[e.RunID] = e.ParentRunID
		}
	}
	require.Len(t, runs, 3)
	var childID, grandID string
	for id, p := range runs {
		switch p {
		case res.RunID:
			childID = id
		case "":
		default:
			grandID = id
		}
	}
	assert.Equal(t, childID, runs[grandID], "the grandchild's parent is the child")
	for _, e := range rec.Events() {
		if e.RunID == grandID {
			assert.Equal(t, childID, e.ParentRunID)
			assert.Equal(t, "call_1", e.ParentCallID)
		}
	}
}

// pauseFixture is a parent whose turn calls a tool of its own and an
// agent whose child asks about two writes (one call ID the same as the
// parent's), then, resumed, answers.
type pauseFixture struct {
	parentTools, childTools counter
	parent                  *toolloop.AgentLoop
}

func newPauseFixture(t *testing.T, script bool) *pauseFixture {
	f := &pauseFixture{}
	reply := func(rs ...*toolloop.Response) toolloop.Model {
		if script {
			return looptest.Script(rs...)
		}
		turns := make([]looptest.Turn, len(rs))
		for i, r := range rs {
			turns[i] = looptest.Turn{Reply: r}
		}
		return looptest.NewModel(t, turns...)
	}
	child := &toolloop.AgentLoop{
		Model: reply(
			spend(looptest.Calls(
				looptest.Call("call_1", "write", `{"path":"a"}`),
				looptest.Call("call_2", "write", `{"path":"b"}`),
				looptest.Call("call_3", "read", `{"path":"c"}`)), 100, 10),
			spend(looptest.Text("wrote a; b was refused"), 200, 20)),
		Tools:            registry(t, f.childTools.tool("write", true), f.childTools.tool("read", false)),
		Guard:            destructiveAsks,
		PauseForApproval: true,
		ModelTable:       testModels,
	}
	f.parent = &toolloop.AgentLoop{
		Model: reply(
			spend(looptest.Calls(
				looptest.Call("call_1", "clerk", `{"task":"write a and b"}`),
				looptest.Call("call_2", "read", `{"path":"x"}`)), 1000, 50),
			spend(looptest.Text("a is written"), 2000, 60)),
		Tools:      registry(t, toolloop.NewAgentTool("clerk", "Writes files.", child), f.parentTools.tool("read", false)),
		ModelTable: testModels,
	}
	return f
}

// decideAll decides every pending call as a user interface would: by its
// CallID, approving writes to a.
func decideAll(st *toolloop.PauseState) map[string]toolloop.Approval {
	d := make(map[string]toolloop.Approval)
	for _, p := range st.Pending {
		d[p.CallID] = toolloop.Approval{Approved: strings.Contains(string(p.Arguments), `"a"`), Reason: "only a"}
	}
	return d
}

func TestAgentToolPauseResume(t *testing.T) {
	f := newPauseFixture(t, false)
	res, err := f.parent.Run(context.Background(), user("write a and b"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	st := res.Paused
	require.NotNil(t, st)

	// The human sees the child's asks, qualified by the parent's call.
	require.Len(t, st.Pending, 2)
	for i, p := range st.Pending {
		assert.Equal(t, "call_1/call_"+string(rune('1'+i)), p.CallID)
		assert.Equal(t, "call_1", p.ParentCallID)
		assert.Equal(t, "write", p.Name)
		assert.Equal(t, 0, p.Index, "the position of the agent's call")
		assert.Equal(t, "writes need a human", p.Reason)
	}
	require.Len(t, st.Agents, 1)
	assert.Equal(t, "call_1", st.Agents[0].CallID)
	require.NotNil(t, st.Agents[0].Child)
	assert.Nil(t, st.Results[0], "the agent's call waits")
	require.NotNil(t, st.Results[1], "the parent's read finished")
	assert.Equal(t, 1, f.parentTools.byCall("call_2"))
	assert.Equal(t, 1, f.childTools.byCall("call_3"), "the child's read ran before the pause")
	assert.Equal(t, 0, f.childTools.byCall("call_1"))

	// The state survives JSON, as a process that saves it would keep it.
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var saved toolloop.PauseState
	require.NoError(t, json.Unmarshal(b, &saved))

	decisions := decideAll(&saved)
	res, err = f.parent.Resume(context.Background(), &saved, decisions)
	require.NoError(t, err)
	assert.Equal(t, "a is written", res.FinalText)
	looptest.AssertValid(t, res.Messages)
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	assert.Equal(t, "wrote a; b was refused", r.Text())
	assert.Equal(t, 1, f.childTools.byCall("call_1"), "the approved write ran once")
	assert.Equal(t, 0, f.childTools.byCall("call_2"), "the denied write never ran")
	assert.Equal(t, 1, f.childTools.byCall("call_3"), "the child's read did not run again")
	assert.Equal(t, 1, f.parentTools.byCall("call_2"), "the parent's read did not run again")
	assert.Equal(t, toolloop.Usage{InputTokens: 3300, OutputTokens: 140}, res.Usage, "the child's usage, before and after the pause, counted once")
	assert.InDelta(t, (3300*1+140*2)/1e6, res.Cost, 1e-12)
}

func TestAgentToolResumeNeedsEveryDecision(t *testing.T) {
	f := newPauseFixture(t, true)
	res, err := f.parent.Run(context.Background(), user("write a and b"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	d := decideAll(res.Paused)
	delete(d, "call_1/call_2")
	d["call_2"] = toolloop.Approval{Approved: true} // the parent's own call_2 is not pending
	_, err = f.parent.Resume(context.Background(), res.Paused, d)
	require.ErrorIs(t, err, toolloop.ErrMissingDecision)
	assert.Equal(t, 0, f.childTools.byCall("call_1"), "nothing ran")

	// A state whose agent was dropped cannot be resumed either.
	bad := *res.Paused
	bad.Agents = nil
	_, err = f.parent.Resume(context.Background(), &bad, decideAll(res.Paused))
	require.Error(t, err)
	assert.Equal(t, 0, f.childTools.byCall("call_1"))
}

// A grandchild's ask pauses every level; one decision resumes them all.
func TestAgentToolNestedPause(t *testing.T) {
	var c counter
	grandchild := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "write", `{"path":"a"}`))},
			looptest.Turn{Reply: looptest.Text("wrote a")}),
		Tools: registry(t, c.tool("write", true)), Guard: destructiveAsks, PauseForApproval: true,
	}
	child := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "clerk", `{"task":"write a"}`))},
			looptest.Turn{Reply: looptest.Text("the clerk wrote a")}),
		Tools: registry(t, toolloop.NewAgentTool("clerk", "Writes.", grandchild)),
	}
	parent := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "lead", `{"task":"write a"}`))},
			looptest.Turn{Reply: looptest.Text("done")}),
		Tools: registry(t, toolloop.NewAgentTool("lead", "Leads.", child)),
	}
	res, err := parent.Run(context.Background(), user("write a"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.Len(t, res.Paused.Pending, 1)
	p := res.Paused.Pending[0]
	assert.Equal(t, "call_1/call_1/call_1", p.CallID)
	assert.Equal(t, "call_1", p.ParentCallID)
	assert.Equal(t, "write", p.Name)

	res, err = parent.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{p.CallID: {Approved: true}})
	require.NoError(t, err)
	assert.Equal(t, "done", res.FinalText)
	assert.Equal(t, "the clerk wrote a", looptest.Results(res.Messages)["call_1"].Text())
	assert.Equal(t, 1, c.byCall("call_1"))
}

// A resumed child that asks again pauses its parent again.
func TestAgentToolPausesTwice(t *testing.T) {
	var c counter
	child := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "write", `{"path":"a"}`))},
			looptest.Turn{Reply: looptest.Calls(looptest.Call("call_2", "write", `{"path":"b"}`))},
			looptest.Turn{Reply: looptest.Text("wrote a and b")}),
		Tools: registry(t, c.tool("write", true)), Guard: destructiveAsks, PauseForApproval: true,
	}
	parent := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("w", "clerk", `{"task":"write a, then b"}`))},
			looptest.Turn{Reply: looptest.Text("done")}),
		Tools: registry(t, toolloop.NewAgentTool("clerk", "Writes.", child)),
	}
	ctx := context.Background()
	res, err := parent.Run(ctx, user("go"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	assert.Equal(t, "w/call_1", res.Paused.Pending[0].CallID)
	res, err = parent.Resume(ctx, res.Paused, map[string]toolloop.Approval{"w/call_1": {Approved: true}})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.Len(t, res.Paused.Pending, 1)
	assert.Equal(t, "w/call_2", res.Paused.Pending[0].CallID)
	res, err = parent.Resume(ctx, res.Paused, map[string]toolloop.Approval{"w/call_2": {Approved: true}})
	require.NoError(t, err)
	assert.Equal(t, "wrote a and b", looptest.Results(res.Messages)["w"].Text())
	assert.Equal(t, 1, c.byCall("call_1"))
	assert.Equal(t, 1, c.byCall("call_2"))
}

// A driver runs and resumes an agent's call with RunCall and ResumeCall.
func TestAgentToolRunCallResumeCall(t *testing.T) {
	var c counter
	child := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "write", `{"path":"a"}`))},
			looptest.Turn{Reply: looptest.Text("wrote a")}),
		Tools: registry(t, c.tool("write", true)), Guard: destructiveAsks, PauseForApproval: true,
	}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Tools: registry(t, toolloop.NewAgentTool("clerk", "Writes.", child)), OnEvent: rec.Record}
	ctx := context.Background()
	tc := looptest.Call("c9", "clerk", `{"task":"write a"}`)
	res, p := l.RunCall(ctx, "run_1", 2, tc, nil)
	require.Nil(t, res)
	require.NotNil(t, p)
	require.NotNil(t, p.Child)
	w := p.Waiting()
	require.Len(t, w, 1)
	assert.Equal(t, "c9/call_1", w[0].CallID)

	again, p2 := l.ResumeCall(ctx, "run_1", 2, tc, p, nil)
	assert.Nil(t, again)
	assert.Same(t, p, p2, "no decision: nothing runs")
	assert.Equal(t, 0, c.byCall("call_1"))

	res, p = l.ResumeCall(ctx, "run_1", 2, tc, p, map[string]toolloop.Approval{"c9/call_1": {Approved: true}})
	require.Nil(t, p)
	require.NotNil(t, res)
	assert.Equal(t, "wrote a", res.Text())
	assert.Equal(t, "c9", res.CallID)
	assert.Equal(t, 1, c.byCall("call_1"))
	for _, e := range rec.Events() {
		if e.ParentRunID != "" {
			assert.Equal(t, "run_1", e.ParentRunID)
			assert.Equal(t, "c9", e.ParentCallID)
		}
	}
}

// Cancelling the parent cancels the child: its tool sees it and returns
// before the parent's Run does, and the agent's call is canceled.
func TestAgentToolCanceled(t *testing.T) {
	started := make(chan struct{})
	var returned atomic.Bool
	block := toolloop.NewTool("block", "Blocks.", func(ctx context.Context, _ struct{}) (any, error) {
		close(started)
		<-ctx.Done()
		returned.Store(true)
		return nil, ctx.Err()
	})
	child := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: textAndCalls("Starting.", looptest.Call("b", "block", `{}`))}),
		Tools: registry(t, block),
	}
	parent := &toolloop.AgentLoop{
		Model: looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "worker", `{"task":"block"}`))}),
		Tools: registry(t, toolloop.NewAgentTool("worker", "Works.", child)),
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	res, err := parent.Run(ctx, user("go"))
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, returned.Load(), "the child's tool returned before the parent's run")
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	require.NotNil(t, r.Error)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	assert.Contains(t, r.Text(), "Starting.", "what the child had written")
}

func TestAgentToolFailures(t *testing.T) {
	errModel := errors.New("model unavailable")
	hang := toolloop.NewTool("hang", "Hangs.", func(ctx context.Context, _ struct{}) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	tests := []struct {
		name    string
		child   func(t *testing.T) *toolloop.AgentLoop
		set     func(a *toolloop.AgentTool)
		kind    toolloop.ErrorKind
		partial string
		wantErr error
	}{
		{
			name: "model error",
			child: func(t *testing.T) *toolloop.AgentLoop {
				return &toolloop.AgentLoop{Model: looptest.NewModel(t,
					looptest.Turn{Reply: textAndCalls("Half way.", looptest.Call("r", "read", `{"path":"a"}`))},
					looptest.Turn{Err: errModel}), Tools: registry(t, new(counter).tool("read", false))}
			},
			kind: toolloop.KindExecutionFailed, partial: "Half way.",
		},
		{
			name: "model panic",
			child: func(*testing.T) *toolloop.AgentLoop {
				return &toolloop.AgentLoop{Model: toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
					panic("boom")
				})}
			},
			kind: toolloop.KindExecutionFailed,
		},
		{
			name: "limit",
			child: func(t *testing.T) *toolloop.AgentLoop {
				return &toolloop.AgentLoop{Model: looptest.NewModel(t,
					looptest.Turn{Reply: looptest.Calls(looptest.Call("r", "read", `{"path":"a"}`))}),
					Tools: registry(t, new(counter).tool("read", false)), Budget: toolloop.Budget{MaxTurns: 1},
				}
			},
			kind: toolloop.KindExecutionFailed, wantErr: &toolloop.BudgetError{Limit: toolloop.LimitTurns, Used: 1, Max: 1},
		},
		{
			name:  "no model",
			child: func(*testing.T) *toolloop.AgentLoop { return &toolloop.AgentLoop{} },
			kind:  toolloop.KindExecutionFailed,
		},
		{
			name: "timeout",
			child: func(t *testing.T) *toolloop.AgentLoop {
				return &toolloop.AgentLoop{Model: looptest.NewModel(t,
					looptest.Turn{Reply: looptest.Calls(looptest.Call("h", "hang", `{}`))}), Tools: registry(t, hang)}
			},
			set:  func(a *toolloop.AgentTool) { a.Timeout = 50 * time.Millisecond },
			kind: toolloop.KindTimeout,
		},
		{
			name:  "prompt panics",
			child: func(*testing.T) *toolloop.AgentLoop { return &toolloop.AgentLoop{Model: looptest.Script()} },
			set: func(a *toolloop.AgentTool) {
				a.Prompt = func(*toolloop.Call) ([]toolloop.Message, error) { panic("bad prompt") }
			},
			kind: toolloop.KindPanic,
		},
		{
			name:  "prompt refuses",
			child: func(*testing.T) *toolloop.AgentLoop { return &toolloop.AgentLoop{Model: looptest.Script()} },
			set: func(a *toolloop.AgentTool) {
				a.Prompt = func(*toolloop.Call) ([]toolloop.Message, error) { return nil, errors.New("no such task") }
			},
			kind: toolloop.KindInvalidArgs,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agent := toolloop.NewAgentTool("worker", "Works.", tt.child(t))
			if tt.set != nil {
				tt.set(agent)
			}
			parent := &toolloop.AgentLoop{
				Model: looptest.NewModel(t,
					looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "worker", `{"task":"work"}`))},
					looptest.Turn{Reply: looptest.Text("the worker failed")}),
				Tools: registry(t, agent),
			}
			res, err := parent.Run(context.Background(), user("go"))
			require.NoError(t, err, "the child's failure is the call's, not the run's")
			r := looptest.Results(res.Messages)["call_1"]
			require.NotNil(t, r)
			require.True(t, r.IsError())
			assert.Equal(t, tt.kind, r.Error.Kind, r.Text())
			if tt.partial != "" {
				assert.Contains(t, r.Text(), tt.partial)
			}
			if tt.wantErr != nil {
				assert.Contains(t, r.Text(), tt.wantErr.Error())
			}
			assert.Equal(t, "the worker failed", res.FinalText)
		})
	}
}

// The child's spending counts against the parent's budget.
func TestAgentToolBudget(t *testing.T) {
	var c counter
	parent := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: spend(looptest.Calls(looptest.Call("call_1", "research", `{"task":"a.txt?"}`)), 10, 1)}),
		Tools:  registry(t, toolloop.NewAgentTool("research", "Research.", researcher(t, &c))),
		Budget: toolloop.Budget{MaxTotalTokens: 100},
	}
	res, err := parent.Run(context.Background(), user("a.txt?"))
	var be *toolloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, toolloop.LimitTotalTokens, be.Limit)
	assert.Equal(t, int64(10+1+300+30), res.Usage.InputTokens+res.Usage.OutputTokens)
}

// An agent given itself as a tool stops at MaxAgentDepth.
func TestAgentToolDepth(t *testing.T) {
	var depth atomic.Int32
	var loop toolloop.AgentLoop
	loop.Model = toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Result != nil {
			return looptest.Text("done: " + last.Result.Text()), nil
		}
		depth.Add(1)
		return looptest.Calls(looptest.Call("call_1", "self", `{"task":"again"}`)), nil
	})
	loop.Tools = registry(t, toolloop.NewAgentTool("self", "Myself.", &loop))
	res, err := loop.Run(context.Background(), user("go"))
	require.NoError(t, err)
	assert.Equal(t, int32(toolloop.MaxAgentDepth+1), depth.Load())
	assert.Contains(t, res.FinalText, "nested")
}

func TestAgentToolSpec(t *testing.T) {
	a := toolloop.NewAgentTool("research", "Research.", &toolloop.AgentLoop{})
	a.Annotations.ReadOnly = true
	a.Timeout = time.Hour
	s := a.Spec()
	assert.Equal(t, "research", s.Name)
	assert.True(t, s.Annotations.ReadOnly)
	assert.Equal(t, time.Hour, s.Timeout)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(s.InputSchema, &schema))
	assert.Equal(t, []any{"task"}, schema["required"])
	assert.Panics(t, func() { toolloop.NewAgentTool("x", "x", nil) })

	// A custom schema and prompt.
	child := &toolloop.AgentLoop{Model: looptest.NewModel(t, looptest.Turn{
		Want:  []toolloop.Message{toolloop.UserMessage("look up 42")},
		Reply: looptest.Text("found 42")})}
	b := toolloop.NewAgentTool("lookup", "Look up.", child)
	b.InputSchema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)
	b.Prompt = func(call *toolloop.Call) ([]toolloop.Message, error) {
		var in struct{ ID int }
		if err := call.Bind(&in); err != nil {
			return nil, err
		}
		return []toolloop.Message{toolloop.UserMessage(fmt.Sprintf("look up %d", in.ID))}, nil
	}
	res, pend := (&toolloop.AgentLoop{Tools: registry(t, b)}).RunCall(context.Background(), "r", 1, looptest.Call("c", "lookup", `{"id":42}`), nil)
	require.Nil(t, pend)
	assert.Equal(t, "found 42", res.Text())
}

// Resuming with a cancelled context resumes no child: the agent's call is
// canceled, and the calls its child waited on never run.
func TestAgentToolResumeCanceled(t *testing.T) {
	f := newPauseFixture(t, true)
	res, err := f.parent.Run(context.Background(), user("write a and b"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = f.parent.Resume(ctx, res.Paused, decideAll(res.Paused))
	require.ErrorIs(t, err, context.Canceled)
	looptest.AssertValid(t, res.Messages)
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	assert.Equal(t, 0, f.childTools.byCall("call_1"))
	assert.Equal(t, 1, f.childTools.byCall("call_3"), "what the child did before the pause stands")
}

func TestAgentToolTypedChild(t *testing.T) {
	child := &toolloop.AgentLoop{
		Model:  looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(looptest.Call("f", "final_answer", `{"answer":"yes","confidence":0.5}`))}),
		Output: &toolloop.OutputFormat{Schema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number"}},"required":["answer"]}`)},
	}
	parent := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "judge", `{"task":"is it?"}`))},
			looptest.Turn{Reply: looptest.Text("done")}),
		Tools: registry(t, toolloop.NewAgentTool("judge", "Judges.", child)),
	}
	res, err := parent.Run(context.Background(), user("judge it"))
	require.NoError(t, err)
	r := looptest.Results(res.Messages)["call_1"]
	require.False(t, r.IsError(), r.Text())
	require.Len(t, r.Content, 1)
	assert.Equal(t, toolloop.ContentJSON, r.Content[0].Type)
	assert.JSONEq(t, `{"answer":"yes","confidence":0.5}`, string(r.Content[0].JSON))
}

// TestAgentLoopSurface keeps AgentLoop's settings grouped: new settings
// go into Limits, Budget or a small struct of their own, not beside them
// (issue 31 brought 29 fields down to 18).
func TestAgentLoopSurface(t *testing.T) {
	n := 0
	for f := range reflect.TypeFor[toolloop.AgentLoop]().Fields() {
		if f.IsExported() {
			n++
		}
	}
	assert.LessOrEqual(t, n, 20, "AgentLoop has %d exported fields: group new settings in Limits, Budget or a struct of their own", n)
}
