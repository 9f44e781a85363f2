package eventlog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// agentProcess is what one process of the test sets up: a lead agent whose
// turn reads with a tool of its own and hands a task to a sub-agent (and,
// nested, the sub-agent to a clerk), whose writes ask for approval. Each
// process has its own loops, models and tools; only the counter and the
// log file are shared, as a disk would be.
type agentProcess struct {
	lead *toolloop.AgentLoop
}

var asksForWrites = &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask, Reason: "writes need a human"}}}

// newAgentProcess builds the loops of one process. Its models answer from
// the transcript alone, so each process gives the same answer to the same
// turn. nested puts a clerk agent between the sub-agent and its tools.
func newAgentProcess(c *counter, w *eventlog.Writer, nested bool) *agentProcess {
	answered := func(req *toolloop.Request) bool {
		last := req.Messages[len(req.Messages)-1]
		return last.Role == toolloop.RoleTool
	}
	var worker *toolloop.AgentLoop
	worker = &toolloop.AgentLoop{
		Model: toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			if answered(req) {
				return withUsage(looptest.Text("removed a; b was refused"), 7, 3), nil
			}
			// The IDs are the lead's, on purpose.
			return withUsage(looptest.Calls(
				looptest.Call("call_1", "rm", `{"text":"a"}`),
				looptest.Call("call_2", "rm", `{"text":"b"}`),
				looptest.Call("call_3", "echo", `{"text":"child"}`)), 11, 2), nil
		}),
		Tools: registry(c), Guard: asksForWrites, PauseForApproval: true,
	}
	if nested {
		var tools toolloop.ToolRegistry
		tools.MustRegister(toolloop.NewAgentTool("clerk", "Removes files.", worker))
		worker = &toolloop.AgentLoop{
			Model: toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
				if answered(req) {
					return withUsage(looptest.Text("the clerk removed a; b was refused"), 5, 1), nil
				}
				return withUsage(looptest.Calls(looptest.Call("call_1", "clerk", `{"task":"remove a and b"}`)), 4, 1), nil
			}),
			Tools: &tools,
		}
	}
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewAgentTool("cleaner", "Cleans up.", worker))
	reg := registry(c)
	echo, _ := reg.Lookup(context.Background(), "echo")
	tools.MustRegister(echo)
	return &agentProcess{lead: &toolloop.AgentLoop{
		Model: toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			if answered(req) {
				return withUsage(looptest.Text("a is removed"), 100, 10), nil
			}
			return withUsage(looptest.Calls(
				looptest.Call("call_1", "cleaner", `{"task":"remove a and b"}`),
				looptest.Call("call_2", "echo", `{"text":"lead"}`)), 200, 20), nil
		}),
		Tools:   &tools,
		OnEvent: w.Record,
	}}
}

// TestResumePausedAgentFromLog: a sub-agent's ask pauses the lead; the
// process ends; another process reads the log, resumes the lead with a
// decision for each call the log says waits, and every call, the
// sub-agent's included, has run exactly once.
func TestResumePausedAgentFromLog(t *testing.T) {
	for _, nested := range []bool{false, true} {
		t.Run(map[bool]string{false: "child", true: "grandchild"}[nested], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agent.jsonl")
			c := new(counter)

			// First process: run until the pause.
			w, err := eventlog.Open(path, eventlog.Options{})
			require.NoError(t, err)
			first := newAgentProcess(c, w, nested)
			res, err := first.lead.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("clean up")})
			require.ErrorIs(t, err, toolloop.ErrPaused)
			require.NoError(t, w.Close())
			assert.Equal(t, 0, c.get("rm"))
			assert.Equal(t, 2, c.get("echo"), "the lead's and the sub-agent's reads ran")

			// Second process: read the log, resume.
			rp, err := eventlog.ReadFile(path)
			require.NoError(t, err)
			require.NotNil(t, rp.Paused)
			assert.Equal(t, looptest.Canonical(res.Paused), looptest.Canonical(rp.Paused), "the log gives back the pause state")
			assert.Equal(t, res.RunID, rp.RunID, "the lead's run, not a child's")
			prefix := "call_1/"
			if nested {
				prefix = "call_1/call_1/"
			}
			decisions := map[string]toolloop.Approval{}
			var ids []string
			for _, p := range rp.Paused.Pending {
				ids = append(ids, p.CallID)
				decisions[p.CallID] = toolloop.Approval{Approved: p.CallID == prefix+"call_1", Reason: "only a"}
			}
			assert.Equal(t, []string{prefix + "call_1", prefix + "call_2"}, ids)

			w, err = eventlog.Open(path, eventlog.Options{})
			require.NoError(t, err)
			second := newAgentProcess(c, w, nested)
			res, err = second.lead.Resume(context.Background(), rp.Paused, decisions)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			assert.Equal(t, "a is removed", res.FinalText)
			want := "removed a; b was refused"
			if nested {
				want = "the clerk removed a; b was refused"
			}
			assert.Equal(t, want, looptest.Results(res.Messages)["call_1"].Text())
			assert.Equal(t, 1, c.get("rm"), "the approved write ran once, the denied one never")
			assert.Equal(t, 2, c.get("echo"), "no read ran again")

			// The log replays the whole run, the sub-agents' usage included.
			rp, err = eventlog.ReadFile(path)
			require.NoError(t, err)
			assert.Nil(t, rp.Paused)
			assert.True(t, rp.Ended)
			looptest.AssertTranscript(t, res.Messages, rp.Transcript())
			assert.Equal(t, res.Usage, rp.Usage)
			assert.Equal(t, res.RunID, rp.RunID)
			var child int
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			for e, err := range eventlog.Events(f) {
				require.NoError(t, err)
				if e.ParentRunID != "" {
					child++
				}
			}
			assert.Positive(t, child, "the sub-agents' events are in the log")
		})
	}
}
