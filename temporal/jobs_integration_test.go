package temporal_test

import (
	"context"
	"fmt"
	"strings"
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

// TestIntegrationJob runs background jobs on a real server: job_1 runs
// across four model turns while the model reads its output (from the
// job activity's heartbeat), starts job_2 and cancels it; job_1's end is
// delivered once, before the fifth turn. Then the history replays, and
// is recorded as testdata/history/job.json with -record.
func TestIntegrationJob(t *testing.T) {
	c, err := dial(serverAddress(t))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	queue := fmt.Sprintf("job-%d", time.Now().UnixNano())

	s, soak := newSuite(), &suite{name: "soak", started: make(chan string, 8), release: make(chan string, 8)}
	// status waits until the run's StatusQuery, with the heartbeats,
	// shows job_1 as ok says.
	status := func(ok func(toolloop.Job) bool) {
		for {
			st, err := temporal.Describe(ctx, c, queue, "")
			if err == nil && len(st.Jobs) > 0 && ok(st.Jobs[0]) {
				return
			}
			select {
			case <-ctx.Done():
				t.Errorf("job_1 never got there: %v", err)
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	// check stands for a slow tool that returns once job_1 has ended,
	// so that its end is queued before the next turn.
	check := toolloop.NewTool("check", "Check the build.", func(context.Context, struct{}) (any, error) {
		status(func(j toolloop.Job) bool { return j.Status != toolloop.JobRunning })
		return "built", nil
	})
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		switch turn {
		case 1:
			return startSuite("c1")
		case 2:
			<-s.started
			status(func(j toolloop.Job) bool { return j.OutputBytes == 16 })
			return looptest.Calls(looptest.Call("c2", toolloop.JobOutputName, `{"job":"job_1"}`),
				looptest.Call("c3", "soak", `{"pkg":"./slow","background":true}`))
		case 3:
			<-soak.started
			return looptest.Calls(looptest.Call("c4", toolloop.JobCancelName, `{"job":"job_2"}`))
		case 4:
			s.release <- "ok"
			return looptest.Calls(looptest.Call("c5", "check", `{}`))
		}
		return looptest.Text("The suite passed.")
	}}
	w := worker.New(c, queue, worker.Options{})
	temporal.Register(w, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: s.registry(soak, check)}, HeartbeatTimeout: time.Second})
	require.NoError(t, w.Start())
	defer w.Stop()

	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		task("Run the tests."))
	require.NoError(t, err)
	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "The suite passed.", res.FinalText)

	results := looptest.Results(res.Messages)
	assert.Equal(t, "job_1", results["c1"].Meta.Extra["job"])
	assert.Equal(t, "Job job_1 (suite): running; next_offset 16.\n=== RUN TestAll\n", results["c2"].Text(), "read from the heartbeat")
	assert.Equal(t, "job_2", results["c3"].Meta.Extra["job"])
	assert.Contains(t, results["c4"].Text(), "[Job job_2 (soak, started by call c3) ended: canceled")
	assert.Contains(t, results["c4"].Text(), "canceled by the model (job_cancel)")
	assert.Equal(t, int32(1), soak.canceled.Load(), "the activity was canceled")

	ends := jobEnds(res.Messages)
	require.Len(t, ends, 1, "job_1's end, once")
	assert.True(t, strings.HasPrefix(ends[0], "[Job job_1 (suite, started by call c1) ended: ok"), ends[0])
	reqs := m.requests()
	require.Len(t, reqs, 5)
	for i := range 4 {
		assert.Empty(t, jobEnds(reqs[i]), "turn %d", i+1)
	}
	assert.Len(t, jobEnds(reqs[4]), 1)
	require.Len(t, res.Jobs, 2)
	assert.Equal(t, toolloop.JobOK, res.Jobs[0].Status)
	assert.Equal(t, toolloop.JobCanceled, res.Jobs[1].Status)

	hist := history(ctx, t, c, run.GetID(), run.GetRunID())
	replayHistory(t, hist)
	if *record {
		recordHistory(t, c, run.GetID(), run.GetRunID(), "job.json")
	}
}
