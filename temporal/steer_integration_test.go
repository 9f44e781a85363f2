package temporal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// steerWorker starts a worker of a steered agent on a queue of its own
// and returns the queue.
func steerWorker(t *testing.T, c client.Client, m *stepModel, h *hold) string {
	t.Helper()
	queue := fmt.Sprintf("steer-%s-%d", t.Name(), time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	// A short heartbeat timeout: an interrupt now reaches a running
	// activity at its next heartbeat.
	temporal.Register(w, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry()}, HeartbeatTimeout: time.Second})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return queue
}

// within receives from ch, or fails the test after a minute.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// TestIntegrationSteer steers a run on a real server with the client's
// helpers: a message sent while a call runs comes after the call's
// result; a message and an interrupt now that goes on, sent while the
// model streams its next turn, cut the turn short, whose streamed text is
// kept marked interrupted; a follow-up sent while the model streams its
// final answer comes after it. Then the run's history, signals included,
// replays without a non-determinism error.
func TestIntegrationSteer(t *testing.T) {
	c, err := dial(serverAddress(t))
	require.NoError(t, err)
	defer c.Close()
	h := newHold()
	streamed := make(chan int, 8)
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		switch turn {
		case 1:
			return holdCalls("c1")
		case 2:
			return nil // streams "partial " and waits
		case 3:
			return looptest.Text("Used the backup.")
		}
		return looptest.Text("Summary.")
	}}
	answer := make(chan struct{})
	m.streamed = func(turn int) {
		streamed <- turn
		if turn == 3 {
			<-answer // finish the answer once the follow-up is sent
		}
	}
	queue := steerWorker(t, c, m, h)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		[]toolloop.Message{toolloop.UserMessage("Restore the database.")})
	require.NoError(t, err)
	within(t, h.started, "the call to start")
	require.NoError(t, temporal.Steer(ctx, c, run.GetID(), "", toolloop.UserMessage("Use staging.")))
	close(h.release)
	for turn := 0; turn != 2; {
		turn = within(t, streamed, "turn 2 to stream")
	}
	require.NoError(t, temporal.Steer(ctx, c, run.GetID(), "", toolloop.UserMessage("Stop, use the backup.")))
	require.NoError(t, temporal.Interrupt(ctx, c, run.GetID(), "", toolloop.Interrupt{Mode: toolloop.InterruptNow, Continue: true}))
	assert.Equal(t, 3, within(t, streamed, "turn 3 to stream"))
	require.NoError(t, temporal.FollowUp(ctx, c, run.GetID(), "", toolloop.UserMessage("Then summarize.")))
	close(answer)

	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, []string{"Restore the database.", "Use staging.", "Stop, use the backup.", "Then summarize."}, userTexts(res.Messages))
	require.Len(t, res.Messages, 9)
	assert.Equal(t, toolloop.RoleTool, res.Messages[2].Role, "the message came after the call's result")
	cut := res.Messages[4]
	assert.Equal(t, toolloop.RoleAssistant, cut.Role)
	assert.Equal(t, "partial ", cut.Text(), "the streamed text is kept")
	assert.Equal(t, toolloop.StopInterrupted, cut.StopReason)
	assert.Equal(t, "Summary.", res.FinalText)
	assert.Equal(t, 4, res.Turns)
	assert.Empty(t, res.Undelivered)
	reqs := m.requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []string{"Restore the database.", "Use staging."}, userTexts(reqs[1]))
	assert.Equal(t, res.Messages[:6], reqs[2], "the interrupted turn and the message, as the model saw them")
	assert.Equal(t, res.Messages[:8], reqs[3], "the final answer and the follow-up")

	hist := history(ctx, t, c, run.GetID(), run.GetRunID())
	assert.Equal(t, 4, signals(hist), "the signals are in the history")
	replayHistory(t, hist)
	if *record {
		recordHistory(t, c, run.GetID(), run.GetRunID(), "steer.json")
	}
}

// TestIntegrationInterrupt interrupts a run on a real server while two
// calls run: both are cancelled and answered, the run ends with
// ErrInterrupted and returns the message it did not deliver, and a
// message sent after the end fails; the history replays.
func TestIntegrationInterrupt(t *testing.T) {
	c, err := dial(serverAddress(t))
	require.NoError(t, err)
	defer c.Close()
	h := newHold()
	m := &stepModel{reply: func(int) *toolloop.Response { return holdCalls("c1", "c2") }}
	queue := steerWorker(t, c, m, h)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		[]toolloop.Message{toolloop.UserMessage("Migrate both.")})
	require.NoError(t, err)
	within(t, h.started, "the first call to start")
	within(t, h.started, "the second call to start")
	require.NoError(t, temporal.Steer(ctx, c, run.GetID(), "", toolloop.UserMessage("Only the first.")))
	require.NoError(t, temporal.Interrupt(ctx, c, run.GetID(), "", toolloop.Interrupt{}))

	res, err := temporal.Wait(ctx, run)
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	require.NotNil(t, res)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, toolloop.StopInterrupted, res.StopReason)
	results := looptest.Results(res.Messages)
	require.Len(t, results, 2)
	for id, r := range results {
		require.NotNil(t, r.Error, id)
		assert.Equal(t, toolloop.KindCanceled, r.Error.Kind, id)
	}
	require.Len(t, res.Undelivered, 1)
	assert.Equal(t, "Only the first.", res.Undelivered[0].Text())
	assert.Len(t, m.requests(), 1)
	assert.Error(t, temporal.Steer(ctx, c, run.GetID(), "", toolloop.UserMessage("Too late.")), "the run has ended")

	hist := history(ctx, t, c, run.GetID(), run.GetRunID())
	assert.Equal(t, 2, signals(hist))
	replayHistory(t, hist)
	if *record {
		recordHistory(t, c, run.GetID(), run.GetRunID(), "interrupt.json")
	}
}

// history reads a run's history.
func history(ctx context.Context, t *testing.T, c client.Client, id, runID string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, e)
	}
	return hist
}

// signals counts the signals a history received.
func signals(hist *historypb.History) int {
	n := 0
	for _, e := range hist.GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
			n++
		}
	}
	return n
}

// replayHistory replays a history with the worker's replayer, as a
// worker that has lost the run from its cache does: the workflow must
// make the same decisions from the same events.
func replayHistory(t *testing.T, hist *historypb.History) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	temporal.Register(r, temporal.Agent{Loop: &toolloop.AgentLoop{}})
	require.NoError(t, r.ReplayWorkflowHistory(quietLogger(), hist))
}
