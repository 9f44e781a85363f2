package toolloop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func pausedRun(t *testing.T) (*toolloop.AgentLoop, *toolloop.PauseState, *int) {
	t.Helper()
	runs := 0
	write := toolloop.NewTool("write", "Write.", func(context.Context, struct{}) (any, error) {
		runs++
		return "written", nil
	})
	write.Annotations.Destructive = true
	l := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("w1", "write", `{}`))},
			looptest.Turn{Reply: looptest.Text("done")}),
		Tools:            registry(t, write),
		Guard:            destructiveAsks,
		PauseForApproval: true,
	}
	res, err := l.Run(context.Background(), user("write"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.Len(t, res.Paused.Pending, 1)
	assert.Equal(t, "w1", res.Paused.Pending[0].CallID)
	assert.Equal(t, "writes need a human", res.Paused.Pending[0].Reason)
	assert.Equal(t, 0, runs, "nothing runs before the decision")
	return l, res.Paused, &runs
}

func TestResumeNeedsEveryDecision(t *testing.T) {
	l, st, runs := pausedRun(t)
	_, err := l.Resume(context.Background(), st, map[string]toolloop.Approval{"other": {Approved: true}})
	require.ErrorIs(t, err, toolloop.ErrMissingDecision)
	assert.Equal(t, 0, *runs)

	res, err := l.Resume(context.Background(), st, map[string]toolloop.Approval{"w1": {Approved: true}})
	require.NoError(t, err)
	assert.Equal(t, 1, *runs, "an approved call runs exactly once")
	assert.Equal(t, "done", res.FinalText)
	assert.Equal(t, "written", looptest.Results(res.Messages)["w1"].Text())
}

func TestResumeRejectsBadState(t *testing.T) {
	l, st, _ := pausedRun(t)
	bad := *st
	bad.Messages = bad.Messages[:1]
	_, err := l.Resume(context.Background(), &bad, map[string]toolloop.Approval{"w1": {Approved: true}})
	require.Error(t, err)
	_, err = l.Resume(context.Background(), nil, nil)
	require.Error(t, err)
	// Use up the scripted turn so the model's cleanup check passes.
	_, err = l.Resume(context.Background(), st, map[string]toolloop.Approval{"w1": {Approved: false}})
	require.NoError(t, err)
}

func TestResumeCanceled(t *testing.T) {
	l, st, runs := pausedRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := l.Resume(ctx, st, map[string]toolloop.Approval{"w1": {Approved: true}})
	require.ErrorIs(t, err, context.Canceled)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, toolloop.KindCanceled, looptest.Results(res.Messages)["w1"].Error.Kind)
	assert.Equal(t, 0, *runs)
	// The model's second turn is never asked for.
	_, _ = l.Model.Generate(context.Background(), &toolloop.Request{})
}
