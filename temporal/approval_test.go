package temporal_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// TestApprovalBySignal: asks wait in the workflow, two days long, for a
// decision signal, and the transcript ends as with an approver that
// answered at once (the core pause-and-resume golden scenarios).
func TestApprovalBySignal(t *testing.T) {
	for _, name := range []string{"pause_resume_approve", "pause_resume_deny", "pause_resume_mixed"} {
		t.Run(name, func(t *testing.T) {
			g := readGolden(t, name)
			direct := &toolloop.AgentLoop{
				Model: looptest.NewModel(t, g.turns()...), Tools: goldenTools(), Guard: destructiveAsks,
				Approver: toolloop.ApproverFunc(func(_ context.Context, c *toolloop.Call, _ string) (toolloop.Approval, error) {
					return g.Decisions[c.ID], nil
				}),
			}
			want, err := direct.Run(context.Background(), g.Input)
			require.NoError(t, err)

			env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{
				Model: looptest.NewModel(t, g.turns()...), Tools: goldenTools(), Guard: destructiveAsks, PauseForApproval: true,
			}})
			start := env.Now()
			var decidedAt time.Time
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(temporal.StatusQuery)
				require.NoError(t, err)
				var st temporal.Status
				require.NoError(t, v.Get(&st))
				assert.Equal(t, 1, st.Turn)
				awaiting := st.Awaiting()
				require.Len(t, awaiting, len(g.Decisions))
				for _, c := range awaiting {
					require.NotNil(t, c.Pending)
					assert.Equal(t, "writes need a human", c.Pending.Reason)
					env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: c.CallID, Approval: g.Decisions[c.CallID]})
				}
				decidedAt = env.Now()
			}, 48*time.Hour)
			got, err := run(t, env, "", g.Input)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, decidedAt.Sub(start), 48*time.Hour, "the run waited for the decisions")
			looptest.AssertTranscript(t, want.Messages, got.Messages)
			looptest.AssertTranscript(t, g.Transcript, got.Messages)
			assert.Equal(t, want.FinalText, got.FinalText)
		})
	}
}

// TestDecisionAppliesOnce: a second decision for the same call, and a
// decision for no waiting call, change nothing; the write runs once.
func TestDecisionAppliesOnce(t *testing.T) {
	var runs atomic.Int32
	del := toolloop.NewTool("delete_file", "Delete a file.", func(context.Context, pathIn) (any, error) {
		runs.Add(1)
		return "deleted", nil
	})
	del.Annotations.Destructive = true
	var reg toolloop.ToolRegistry
	reg.MustRegister(del)
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "delete_file", `{"path":"old.txt"}`))},
		looptest.Turn{Reply: looptest.Text("Deleted.")})
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: destructiveAsks, PauseForApproval: true}})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_9", Approval: toolloop.Approval{Approved: true}})
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1", Approval: toolloop.Approval{Approved: true}})
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1", Approval: toolloop.Approval{Approved: false, Reason: "changed my mind"}})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(temporal.DecisionSignal, temporal.Decision{CallID: "call_1", Approval: toolloop.Approval{Approved: true}})
	}, 2*time.Hour)
	res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("delete old.txt")})
	require.NoError(t, err)
	assert.Equal(t, int32(1), runs.Load())
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	assert.Equal(t, "deleted", r.Text())
	assert.Equal(t, "Deleted.", res.FinalText)
}
