package temporal_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

func names(req *toolloop.Request) []string {
	var out []string
	for _, s := range req.Tools {
		out = append(out, s.Name)
	}
	return out
}

// TestTurnControls takes model turns in the workflow as Run takes them:
// the loop's tool choice, its tool filter, deferred tools found with the
// tool search tool (which resolves in the call activity), and the
// before- and after-model hooks.
func TestTurnControls(t *testing.T) {
	var reg toolloop.ToolRegistry
	for _, n := range []string{"read", "write", "get_weather"} {
		reg.MustRegister(toolloop.NewTool(n, "Tool "+n+": gets the weather forecast when asked.", func(context.Context, struct{}) (any, error) { return n + " ok", nil }))
	}
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("s1", toolloop.ToolSearchName, `{"query":"get_weather"}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("w1", "get_weather", `{}`))},
		looptest.Turn{Reply: looptest.Text("raw")})
	var before []int
	l := &toolloop.AgentLoop{Model: m, Tools: &reg,
		ToolChoice: toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired},
		ToolFilter: toolloop.Only(toolloop.SelectNames("write").Not()),
		Deferred:   toolloop.SelectNames("get_weather"),
		Hooks: toolloop.Hooks{
			BeforeModel: []toolloop.BeforeModelHook{func(_ context.Context, turn *toolloop.ModelTurn) error {
				before = append(before, turn.Turn)
				if turn.Turn == 3 {
					turn.Request.ToolChoice = toolloop.ToolChoice{}
				}
				return nil
			}},
			AfterModel: []toolloop.AfterModelHook{func(_ context.Context, _ *toolloop.ModelTurn, resp *toolloop.Response) (*toolloop.Response, error) {
				if resp.Message.Text() == "raw" {
					return looptest.Text("cooked"), nil
				}
				return nil, nil
			}},
		}}
	env := newEnv(t, temporal.Agent{Loop: l})
	res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("weather?")})
	require.NoError(t, err)
	assert.Equal(t, "cooked", res.FinalText)
	reqs := m.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"read", toolloop.ToolSearchName}, names(reqs[0]))
	assert.Equal(t, []string{"get_weather", "read", toolloop.ToolSearchName}, names(reqs[1]))
	assert.Equal(t, toolloop.ToolChoiceRequired, reqs[0].ToolChoice.Mode)
	assert.Equal(t, toolloop.ToolChoice{}, reqs[2].ToolChoice)
	assert.Equal(t, []int{1, 2, 3}, before)
	got := looptest.Results(res.Messages)
	assert.Equal(t, []string{"get_weather"}, got["s1"].Meta.LoadedTools)
	assert.Equal(t, "get_weather ok", got["w1"].Text())
}

func TestAfterModelRejects(t *testing.T) {
	bad := errors.New("off-topic")
	m := looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("hi")})
	l := &toolloop.AgentLoop{Model: m, Hooks: toolloop.Hooks{AfterModel: []toolloop.AfterModelHook{
		func(context.Context, *toolloop.ModelTurn, *toolloop.Response) (*toolloop.Response, error) {
			return nil, bad
		}}}}
	env := newEnv(t, temporal.Agent{Loop: l, ModelRetry: quickRetry})
	res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("hello")})
	require.ErrorIs(t, err, temporal.ErrModel)
	assert.Contains(t, err.Error(), "off-topic")
	assert.Equal(t, toolloop.StopError, res.StopReason)
	assert.Zero(t, m.Remaining(), "a rejected response is not asked for again")
}

func TestUnsupportedTurnControlsPanic(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	assert.PanicsWithValue(t,
		"toolloop/temporal: Agent.Loop.Output, Agent.Loop.TurnProcessors and Agent.Loop.Budget.Shared are not supported by the workflow yet: run such a loop with AgentLoop.Run",
		func() {
			temporal.Register(env, temporal.Agent{Loop: &toolloop.AgentLoop{Model: looptest.Script(),
				TurnProcessors: []toolloop.TurnProcessor{func(context.Context, *toolloop.TurnBatch) (toolloop.TurnDecision, error) {
					return toolloop.TurnDecision{}, nil
				}}}})
		})
}
