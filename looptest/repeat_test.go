package looptest_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func generate(m toolloop.Model) (*toolloop.Response, error) {
	return m.Generate(context.Background(), &toolloop.Request{Messages: []toolloop.Message{toolloop.UserMessage("again")}})
}

func TestTurnTimes(t *testing.T) {
	ft := &fakeTB{}
	m := looptest.NewModel(ft,
		looptest.Turn{Reply: looptest.Text("a"), Times: 3},
		looptest.Turn{Reply: looptest.Text("b")},
		looptest.Turn{Reply: looptest.Text("c"), Times: 1},
	)
	var got []string
	for want := 5; want > 0; want-- {
		assert.Equal(t, want, m.Remaining())
		r, err := generate(m)
		require.NoError(t, err)
		got = append(got, r.Message.Text())
	}
	assert.Equal(t, []string{"a", "a", "a", "b", "c"}, got)
	assert.Zero(t, m.Remaining())
	_, err := generate(m)
	require.ErrorIs(t, err, looptest.ErrUnexpected, "the script is played out")
	ft.finish()
	assert.Len(t, ft.errors, 1, "only the extra call failed the test")
	assert.Len(t, m.Requests(), 6)
}

func TestTurnTimesUnplayedFailsTheTest(t *testing.T) {
	ft := &fakeTB{}
	m := looptest.NewModel(ft, looptest.Turn{Reply: looptest.Text("a"), Times: 3})
	for range 2 {
		_, err := generate(m)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, m.Remaining())
	ft.finish()
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "1 more calls")
}

func TestTurnForever(t *testing.T) {
	ft := &fakeTB{}
	m := looptest.NewModel(ft,
		looptest.Turn{Reply: looptest.Text("first")},
		looptest.Turn{Reply: looptest.Text("again"), Times: looptest.Forever},
	)
	assert.Equal(t, 2, m.Remaining(), "a turn that repeats forever wants one call at least")
	r, err := generate(m)
	require.NoError(t, err)
	assert.Equal(t, "first", r.Message.Text())
	for range 100 {
		r, err := generate(m)
		require.NoError(t, err)
		assert.Equal(t, "again", r.Message.Text())
		assert.Zero(t, m.Remaining())
	}
	ft.finish()
	assert.Empty(t, ft.errors)
}

func TestTurnForeverNeverReachedFailsTheTest(t *testing.T) {
	ft := &fakeTB{}
	m := looptest.NewModel(ft, looptest.Turn{Reply: looptest.Text("again"), Times: looptest.Forever})
	assert.Equal(t, 1, m.Remaining())
	ft.finish()
	assert.Len(t, ft.errors, 1)
}

func TestTurnForeverMustBeLast(t *testing.T) {
	ft := &fakeTB{}
	looptest.NewModel(ft,
		looptest.Turn{Reply: looptest.Text("again"), Times: looptest.Forever},
		looptest.Turn{Reply: looptest.Text("never")},
	)
	assert.True(t, ft.Failed(), "a turn after a forever turn is a mistake in the script")
}

func TestRepeatedTurnChecksEveryCall(t *testing.T) {
	ft := &fakeTB{}
	calls := 0
	m := looptest.NewModel(ft, looptest.Turn{
		Check: func(r *toolloop.Request) string {
			calls++
			if len(r.Messages) > 2 {
				return "too many messages"
			}
			return ""
		},
		Reply: looptest.Text("a"),
		Times: looptest.Forever,
	})
	req := &toolloop.Request{}
	for range 3 {
		req.Messages = append(req.Messages, toolloop.UserMessage("more"))
		_, _ = m.Generate(context.Background(), req)
	}
	assert.Equal(t, 3, calls)
	ft.finish()
	require.Len(t, ft.errors, 1, "the third call's check failed")
	assert.Contains(t, ft.errors[0], "turn 3")
}

// TestForeverStopsOnMaxTurns is the test the feature is for: a model
// that keeps calling tools, and a loop that must stop it.
func TestForeverStopsOnMaxTurns(t *testing.T) {
	model := looptest.NewModel(t, looptest.Turn{
		Reply: looptest.Calls(looptest.Call("c1", "echo", `{"text":"again"}`)),
		Times: looptest.Forever,
	})
	loop := &toolloop.AgentLoop{Model: model, Tools: echoRegistry(t), Budget: toolloop.Budget{MaxTurns: 5}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("loop")})
	require.ErrorIs(t, err, toolloop.ErrBudget)
	assert.Equal(t, 5, res.Turns)
	assert.Len(t, model.Requests(), 5)
	looptest.AssertValid(t, res.Messages)
}

func TestAlways(t *testing.T) {
	loop := &toolloop.AgentLoop{
		Model: looptest.Always(looptest.Calls(looptest.Call("c1", "echo", `{"text":"again"}`))),
		Tools: echoRegistry(t), Budget: toolloop.Budget{MaxTurns: 7},
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("loop")})
	require.ErrorIs(t, err, toolloop.ErrBudget)
	assert.Equal(t, 7, res.Turns)
	looptest.AssertValid(t, res.Messages)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = looptest.Always(looptest.Text("x")).Generate(ctx, &toolloop.Request{})
	require.ErrorIs(t, err, context.Canceled)

	assert.Panics(t, func() { looptest.Always(nil) })
}

func TestAlwaysIsSafeForConcurrentUse(t *testing.T) {
	m := looptest.Always(looptest.Calls(looptest.Call("c1", "echo", `{"text":"again"}`)))
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			for range 50 {
				r, err := generate(m)
				if err != nil {
					errs[i] = err
					return
				}
				// Each caller owns its copy.
				r.Message.ToolCalls[0].Arguments[0] = 'X'
				r.Message.ToolCalls[0].ID = "mine"
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	r, err := generate(m)
	require.NoError(t, err)
	assert.Equal(t, `{"text":"again"}`, string(r.Message.ToolCalls[0].Arguments))
	assert.Equal(t, "c1", r.Message.ToolCalls[0].ID)
}
