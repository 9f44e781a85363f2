package toolloop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// RunCall gives a call what Run would give it, and lets a driver settle an
// ask later.
func TestRunCall(t *testing.T) {
	runs := 0
	write := toolloop.NewTool("write", "Write.", func(context.Context, struct{}) (any, error) {
		runs++
		return "written", nil
	})
	write.Annotations.Destructive = true
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Tools: registry(t, write), Guard: destructiveAsks, PauseForApproval: true, OnEvent: rec.Record}
	ctx := context.Background()
	tc := looptest.Call("c1", "write", `{}`)

	res, pend := l.RunCall(ctx, "run_1", 3, tc, nil)
	require.Nil(t, res)
	require.NotNil(t, pend)
	assert.Equal(t, "c1", pend.CallID)
	assert.Equal(t, 0, runs)

	res, pend = l.RunCall(ctx, "run_1", 3, tc, &toolloop.Approval{Approved: false, Reason: "no"})
	require.Nil(t, pend)
	assert.Equal(t, toolloop.KindDenied, res.Error.Kind)
	assert.Equal(t, 0, runs)

	res, pend = l.RunCall(ctx, "run_1", 3, tc, &toolloop.Approval{Approved: true})
	require.Nil(t, pend)
	assert.Equal(t, "written", res.Text())
	assert.Equal(t, "c1", res.CallID)
	assert.Equal(t, 1, runs)
	for _, e := range rec.Events() {
		assert.Equal(t, "run_1", e.RunID)
		assert.Equal(t, 3, e.Turn)
	}

	res, _ = l.RunCall(ctx, "run_1", 3, looptest.Call("c2", "nope", `{}`), nil)
	assert.Equal(t, toolloop.KindNotFound, res.Error.Kind)
}

func TestAssistantMessage(t *testing.T) {
	m := toolloop.AssistantMessage(2, &toolloop.Response{
		Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{looptest.Call("", "a", `{}`), looptest.Call("x", "b", `{}`), looptest.Call("x", "c", `{}`)}},
		Usage:   toolloop.Usage{InputTokens: 3},
		Model:   "m",
	})
	assert.Equal(t, toolloop.RoleAssistant, m.Role)
	assert.Equal(t, toolloop.StopToolUse, m.StopReason)
	assert.Equal(t, "call_2_0", m.ToolCalls[0].ID)
	assert.Equal(t, "x_2", m.ToolCalls[2].ID)
	assert.Equal(t, int64(3), m.Usage.InputTokens)
}
