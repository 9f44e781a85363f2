package temporal_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// runCounter counts the runs of tools by tool and path, across the
// workers of a test.
type runCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *runCounter) tool(name string, destructive bool) toolloop.Tool {
	t := toolloop.NewTool(name, "Counts its runs.", func(_ context.Context, in pathIn) (any, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.n == nil {
			c.n = make(map[string]int)
		}
		c.n[name+" "+in.Path]++
		return name + " " + in.Path + " done", nil
	})
	t.Annotations.Destructive = destructive
	t.Annotations.ReadOnly = !destructive
	return t
}

func (c *runCounter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// replied reports whether the last message of req is a tool result: the
// models below answer from the transcript alone, so that a worker that
// never saw the run's start gives the same answer.
func replied(req *toolloop.Request) bool {
	return req.Messages[len(req.Messages)-1].Role == toolloop.RoleTool
}

// subAgentLead is a lead agent whose first turn reads a file itself and
// hands a task to a sub-agent, which reads a file and asks to delete two
// (with the same call IDs as the lead's: the lead lists them qualified).
func subAgentLead(c *runCounter) *toolloop.AgentLoop {
	var childTools toolloop.ToolRegistry
	childTools.MustRegister(c.tool("read_file", false), c.tool("delete_file", true))
	child := &toolloop.AgentLoop{
		Model: toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			if replied(req) {
				return usage(looptest.Text("deleted a; b was refused"), 7), nil
			}
			return usage(looptest.Calls(
				looptest.Call("call_1", "delete_file", `{"path":"a"}`),
				looptest.Call("call_2", "delete_file", `{"path":"b"}`),
				looptest.Call("call_3", "read_file", `{"path":"c"}`)), 11), nil
		}),
		Tools: &childTools, Guard: destructiveAsks, PauseForApproval: true,
	}
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewAgentTool("cleaner", "Cleans up.", child), c.tool("read_file", false))
	return &toolloop.AgentLoop{
		Model: toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			if replied(req) {
				return usage(looptest.Text("a is deleted"), 100), nil
			}
			return usage(looptest.Calls(
				looptest.Call("call_1", "cleaner", `{"task":"delete a and b"}`),
				looptest.Call("call_2", "read_file", `{"path":"x"}`)), 200), nil
		}),
		Tools: &tools,
	}
}

func usage(r *toolloop.Response, in int64) *toolloop.Response {
	r.Usage = toolloop.Usage{InputTokens: in}
	return r
}

// subAgentDecisions decides the sub-agent's deletes: a yes, b no.
func subAgentDecisions(awaiting []temporal.CallStatus) []temporal.Decision {
	var out []temporal.Decision
	for _, c := range awaiting {
		ok := strings.Contains(string(c.Pending.Arguments), `"a"`)
		out = append(out, temporal.Decision{CallID: c.CallID, Approval: toolloop.Approval{Approved: ok, Reason: "only a"}})
	}
	return out
}

// checkSubAgentRun checks the end of a subAgentLead run: every call ran
// once, the denied one never, and the sub-agent's usage is the lead's.
func checkSubAgentRun(t *testing.T, c *runCounter, res *toolloop.RunResult) {
	t.Helper()
	assert.Equal(t, "a is deleted", res.FinalText)
	looptest.AssertValid(t, res.Messages)
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	assert.Equal(t, "deleted a; b was refused", r.Text())
	assert.Equal(t, 1, c.get("delete_file a"), "the approved delete ran once")
	assert.Equal(t, 0, c.get("delete_file b"), "the denied delete never ran")
	assert.Equal(t, 1, c.get("read_file c"), "the sub-agent's read ran once")
	assert.Equal(t, 1, c.get("read_file x"), "the lead's read ran once")
	assert.Equal(t, int64(200+100+11+7), res.Usage.InputTokens)
}

// TestSubAgentApprovalBySignal: a sub-agent's asks wait in the workflow,
// listed by Awaiting under qualified IDs; a decision for each resumes the
// sub-agent once. A decision for the agent's own call, or a second one,
// changes nothing.
func TestSubAgentApprovalBySignal(t *testing.T) {
	c := &runCounter{}
	env := newEnv(t, temporal.Agent{Loop: subAgentLead(c)})
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(temporal.StatusQuery)
		require.NoError(t, err)
		var st temporal.Status
		require.NoError(t, v.Get(&st))
		awaiting := st.Awaiting()
		require.Len(t, awaiting, 2)
		assert.Equal(t, "call_1/call_1", awaiting[0].CallID)
		assert.Equal(t, "call_1/call_2", awaiting[1].CallID)
		assert.Equal(t, "delete_file", awaiting[0].Name)
		assert.Equal(t, "writes need a human", awaiting[0].Pending.Reason)
		assert.Equal(t, 1, c.get("read_file c"))
		ds := subAgentDecisions(awaiting)
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1", Approval: toolloop.Approval{Approved: true}})
		env.SignalWorkflow(temporal.DecisionSignal, ds[0])
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: ds[0].CallID, Approval: toolloop.Approval{Approved: false}})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(temporal.StatusQuery)
		require.NoError(t, err)
		var st temporal.Status
		require.NoError(t, v.Get(&st))
		awaiting := st.Awaiting()
		require.Len(t, awaiting, 1, "one decision to go")
		assert.Equal(t, "call_1/call_2", awaiting[0].CallID)
		assert.Equal(t, 0, c.get("delete_file a"), "nothing runs before every decision is in")
		env.SignalWorkflow(temporal.DecisionSignal, subAgentDecisions(awaiting)[0])
	}, 2*time.Hour)
	res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("delete a and b")})
	require.NoError(t, err)
	checkSubAgentRun(t, c, res)
}

// TestIntegrationSubAgentWorkerRestart: on a real server, a sub-agent's
// asks pause the lead's run; the worker stops; a new worker, with loops,
// models and tools of its own, takes over; decisions come; the run
// completes with every call run once.
func TestIntegrationSubAgentWorkerRestart(t *testing.T) {
	addr := serverAddress(t)
	c, err := dial(addr)
	require.NoError(t, err)
	defer c.Close()
	queue := "subagent-" + fmt.Sprint(time.Now().UnixNano())
	counter := &runCounter{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	first := worker.New(c, queue, worker.Options{})
	temporal.Register(first, temporal.Agent{Loop: subAgentLead(counter)})
	require.NoError(t, first.Start())
	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		[]toolloop.Message{toolloop.UserMessage("delete a and b")})
	require.NoError(t, err)
	var st *temporal.Status
	require.Eventually(t, func() bool {
		st, err = temporal.Describe(ctx, c, run.GetID(), "")
		return err == nil && len(st.Awaiting()) == 2
	}, 30*time.Second, 100*time.Millisecond)
	first.Stop()
	assert.Equal(t, 1, counter.get("read_file c"))
	assert.Equal(t, 0, counter.get("delete_file a"))

	// The decisions are durable with no worker running.
	for _, d := range subAgentDecisions(st.Awaiting()) {
		require.NoError(t, temporal.Decide(ctx, c, run.GetID(), "", d))
		require.NoError(t, temporal.Decide(ctx, c, run.GetID(), "", d), "a second decision is ignored")
	}
	second := worker.New(c, queue, worker.Options{})
	temporal.Register(second, temporal.Agent{Loop: subAgentLead(counter)})
	require.NoError(t, second.Start())
	defer second.Stop()
	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	checkSubAgentRun(t, counter, res)
}

// TestCancelWhileSubAgentAwaits: cancelling the run while a sub-agent
// waits for decisions answers its call as canceled; the deletes it waited
// on never run, and what it did before stands.
func TestCancelWhileSubAgentAwaits(t *testing.T) {
	c := &runCounter{}
	env := newEnv(t, temporal.Agent{Loop: subAgentLead(c)})
	env.RegisterDelayedCallback(env.CancelWorkflow, 24*time.Hour)
	res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("delete a and b")})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	looptest.AssertValid(t, res.Messages)
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	require.NotNil(t, r.Error)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	assert.Contains(t, r.Text(), "the calls it had made stand")
	assert.Equal(t, 0, c.get("delete_file a"))
	assert.Equal(t, 1, c.get("read_file c"))
}
