package temporal_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

var record = flag.Bool("record", false, "record the integration tests' workflow histories into testdata/history (needs a Temporal server)")

// workerEnv, when set, makes the test binary a worker of the crash test:
// "address,task queue,marker directory".
const workerEnv = "TOOLLOOP_TEMPORAL_TEST_WORKER"

// crashScript is a model that answers from the transcript alone, so that
// any worker, in any process, gives the same answer to the same turn.
var crashScript = toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	turns := 0
	for _, m := range req.Messages {
		if m.Role == toolloop.RoleAssistant {
			turns++
		}
	}
	switch turns {
	case 0:
		return looptest.Calls(looptest.Call("call_w1", "step", `{"n":1}`)), nil
	case 1:
		return looptest.Calls(looptest.Call("call_w2", "step", `{"n":2}`), looptest.Call("call_scan", "scan", `{}`)), nil
	}
	return looptest.Text("All steps done and the scan is clean."), nil
})

// markerTool is a tool that appends a line to a file named after the call
// when it starts and when it completes, so the test can count runs across
// processes. scan is read-only and long (it reports progress); step is
// destructive and quick.
type markerTool struct {
	name string
	dir  string
	long bool
}

func (m *markerTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: m.name, Description: "Marks its runs.",
		Annotations: toolloop.Annotations{ReadOnly: m.long, Destructive: !m.long}}
}

func (m *markerTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	mark(m.dir, "started-"+call.ID)
	if m.long {
		for i := range 40 {
			call.ReportProgress(toolloop.Progress{Message: "scanning", Done: float64(i), Total: 40})
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	mark(m.dir, "completed-"+call.ID)
	return toolloop.TextResult(m.name + " ok"), nil
}

func mark(dir, name string) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	if err := f.Close(); err != nil {
		panic(err)
	}
}

func marks(t *testing.T, dir, name string) int {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

func crashAgent(dir string) temporal.Agent {
	var reg toolloop.ToolRegistry
	reg.MustRegister(&markerTool{name: "step", dir: dir}, &markerTool{name: "scan", dir: dir, long: true})
	return temporal.Agent{
		Loop:             &toolloop.AgentLoop{Model: crashScript, Tools: &reg},
		HeartbeatTimeout: 2 * time.Second,
		ToolRetry:        quickRetry,
	}
}

// workerMain runs a worker of the crash test until it is killed.
func workerMain() int {
	cfg := strings.Split(os.Getenv(workerEnv), ",")
	c, err := dial(cfg[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer c.Close()
	w := worker.New(c, cfg[1], worker.Options{})
	temporal.Register(w, crashAgent(cfg[2]))
	temporal.Register(w, longCrashAgent(cfg[2]))
	if err := w.Run(worker.InterruptCh()); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

// startWorker starts a worker process: this test binary again.
func startWorker(t *testing.T, addr, queue, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), workerEnv+"="+strings.Join([]string{addr, queue, dir}, ","))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// TestIntegrationWorkerKilled kills a worker with SIGKILL while a
// read-only tool runs; a second worker finishes the run. No tool that
// completed ran twice, the interrupted read ran again, and the transcript
// is the one the model scripted.
func TestIntegrationWorkerKilled(t *testing.T) {
	addr := serverAddress(t)
	c, err := dial(addr)
	require.NoError(t, err)
	defer c.Close()
	dir := t.TempDir()
	queue := "crash-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + fmt.Sprint(time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	first := startWorker(t, addr, queue, dir)
	opts := temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}}
	run, err := temporal.Start(ctx, c, opts, []toolloop.Message{toolloop.UserMessage("Do both steps, then scan.")})
	require.NoError(t, err)

	// Wait until step 2 is done and the scan reports progress, as seen
	// through the workflow's status and the scan's heartbeats.
	var st *temporal.Status
	require.Eventually(t, func() bool {
		st, err = temporal.Describe(ctx, c, run.GetID(), run.GetRunID())
		if err != nil || st.Turn != 2 || len(st.Calls) != 2 {
			return false
		}
		return st.Calls[0].State == temporal.CallDone && st.Calls[1].State == temporal.CallRunning && st.Calls[1].Progress != nil
	}, time.Minute, 100*time.Millisecond, "status: %+v, err: %v", st, err)
	assert.Equal(t, "scanning", st.Calls[1].Progress.Message)
	assert.Equal(t, int32(1), st.Calls[1].Attempt)

	require.NoError(t, first.Process.Kill()) // SIGKILL
	_, _ = first.Process.Wait()
	assert.Equal(t, 0, marks(t, dir, "completed-call_scan"), "killed mid-scan")
	startWorker(t, addr, queue, dir)

	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "All steps done and the scan is clean.", res.FinalText)
	for id, r := range looptest.Results(res.Messages) {
		assert.False(t, r.IsError(), "%s: %s", id, r.Text())
	}
	for _, id := range []string{"call_w1", "call_w2", "call_scan"} {
		assert.Equal(t, 1, marks(t, dir, "completed-"+id), "%s completed once", id)
	}
	assert.Equal(t, 1, marks(t, dir, "started-call_w1"), "a completed write never runs again")
	assert.Equal(t, 1, marks(t, dir, "started-call_w2"), "a completed write never runs again")
	assert.Equal(t, 2, marks(t, dir, "started-call_scan"), "the interrupted read ran again on the second worker")
	if *record {
		recordHistory(t, c, run.GetID(), run.GetRunID(), "worker_killed.json")
	}
}

// TestIntegrationApproval waits for a decision on a real server: the ask
// shows in Describe, Decide approves it, the write runs once.
func TestIntegrationApproval(t *testing.T) {
	addr := serverAddress(t)
	c, err := dial(addr)
	require.NoError(t, err)
	defer c.Close()
	g := readGolden(t, "pause_resume_mixed")
	queue := "approval-" + fmt.Sprint(time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	temporal.Register(w, temporal.Agent{Loop: &toolloop.AgentLoop{
		Model: looptest.Script(g.Replies...), Tools: goldenTools(), Guard: destructiveAsks, PauseForApproval: true,
	}})
	require.NoError(t, w.Start())
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}}, g.Input)
	require.NoError(t, err)
	var st *temporal.Status
	require.Eventually(t, func() bool {
		st, err = temporal.Describe(ctx, c, run.GetID(), "")
		return err == nil && len(st.Awaiting()) == len(g.Decisions)
	}, 30*time.Second, 100*time.Millisecond)
	for _, call := range st.Awaiting() {
		d := temporal.Decision{CallID: call.CallID, Approval: g.Decisions[call.CallID]}
		require.NoError(t, temporal.Decide(ctx, c, run.GetID(), "", d))
		require.NoError(t, temporal.Decide(ctx, c, run.GetID(), "", d), "a second decision is ignored")
	}
	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	looptest.AssertTranscript(t, g.Transcript, res.Messages)
	if *record {
		recordHistory(t, c, run.GetID(), run.GetRunID(), "approval.json")
	}
}

// TestIntegrationCancel cancels a run on a real server while two calls
// run: the activities stop their tools and report the canceled results
// the pipeline gives, so the transcript is the in-process one (the core
// cancel_mid_turn scenario).
func TestIntegrationCancel(t *testing.T) {
	addr := serverAddress(t)
	c, err := dial(addr)
	require.NoError(t, err)
	defer c.Close()
	g := readGolden(t, "cancel_mid_turn")
	var running sync.WaitGroup
	running.Add(2)
	reg := goldenTools()
	reg.MustRegister(toolloop.NewTool("block", "Wait until the run is cancelled.", func(ctx context.Context, _ struct{}) (any, error) {
		running.Done()
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	queue := "cancel-" + fmt.Sprint(time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	temporal.Register(w, temporal.Agent{Loop: &toolloop.AgentLoop{Model: looptest.Script(g.Replies...), Tools: reg},
		HeartbeatTimeout: time.Second})
	require.NoError(t, w.Start())
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}}, g.Input)
	require.NoError(t, err)
	running.Wait()
	require.NoError(t, c.CancelWorkflow(ctx, run.GetID(), ""))
	res, err := temporal.Wait(ctx, run)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.Equal(t, toolloop.StopAborted, res.StopReason)
	looptest.AssertTranscript(t, g.Transcript, res.Messages)
	if *record {
		recordHistory(t, c, run.GetID(), run.GetRunID(), "cancel.json")
	}
}

// recordHistory writes a run's history to testdata/history, for the
// replay test.
func recordHistory(t *testing.T, c client.Client, id, runID, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, runID, false, 0)
	hist := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, e)
	}
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join("testdata", "history"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("testdata", "history", name), append(b, '\n'), 0o644))
}
