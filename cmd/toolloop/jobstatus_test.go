package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

var jobT0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// jobEvent is an event of job id, started by call callID to tool at
// second startedAt, happening at second at.
func jobEvent(typ toolloop.EventType, run, id, callID, tool string, startedAt, at int, status toolloop.JobStatus) toolloop.Event {
	e := toolloop.Event{Type: typ, RunID: run, Turn: 1, CallID: callID, Tool: tool, Time: jobT0.Add(time.Duration(at) * time.Second)}
	e.Job = &toolloop.Job{ID: id, CallID: callID, Tool: tool, Turn: 1, Status: status, Started: jobT0.Add(time.Duration(startedAt) * time.Second)}
	if status != toolloop.JobRunning {
		e.Job.Ended = e.Time
	}
	return e
}

func TestJobStatus(t *testing.T) {
	started := func(id string, at int) toolloop.Event {
		return jobEvent(toolloop.EventJobStarted, "r", id, "c"+id, "exec_shell", at, at, toolloop.JobRunning)
	}
	finished := func(id string, startedAt, at int) toolloop.Event {
		return jobEvent(toolloop.EventJobFinished, "r", id, "c"+id, "exec_shell", startedAt, at, toolloop.JobOK)
	}
	var s jobStatus
	steps := []struct {
		e    toolloop.Event
		want string
	}{
		{started("job_1", 0), "  · jobs: 1 running (job_1 exec_shell 0s)\n"},
		{jobEvent(toolloop.EventJobOutput, "r", "job_1", "cjob_1", "exec_shell", 0, 5, toolloop.JobRunning), ""},
		{started("job_2", 12), "  · jobs: 2 running (job_1 exec_shell 12s, job_2 exec_shell 0s)\n"},
		{finished("job_1", 0, 31), "  · jobs: 1 running (job_2 exec_shell 19s)\n"},
		{finished("job_9", 0, 31), ""}, // never seen to start
		{finished("job_2", 12, 40), "  · jobs: none running\n"},
		{toolloop.Event{Type: toolloop.EventRunEnd, RunID: "r"}, ""},
	}
	for i, st := range steps {
		assert.Equal(t, st.want, s.update(st.e), "step %d: %s", i, st.e.Type)
	}

	// Many jobs: four are named, the rest counted; a run's end forgets
	// its jobs, not another run's.
	for i := range 6 {
		s.update(started("job_"+string(rune('1'+i)), i))
	}
	other := jobEvent(toolloop.EventJobStarted, "child", "job_1", "x1", "grep", 10, 10, toolloop.JobRunning)
	assert.Equal(t, "  · jobs: 7 running (job_1 exec_shell 10s, job_2 exec_shell 9s, job_3 exec_shell 8s, job_4 exec_shell 7s, +3 more)\n",
		s.update(other))
	s.update(toolloop.Event{Type: toolloop.EventRunEnd, RunID: "r"})
	assert.Equal(t, "  · jobs: none running\n",
		s.update(jobEvent(toolloop.EventJobFinished, "child", "job_1", "x1", "grep", 10, 11, toolloop.JobCanceled)))

	// A tool name cannot drive the terminal or break the line.
	hostile := jobEvent(toolloop.EventJobStarted, "h", "job_1", "c", "a\x1b[2J\nb", 0, 0, toolloop.JobRunning)
	line := s.update(hostile)
	assert.NotContains(t, line, "\x1b")
	assert.Equal(t, 1, strings.Count(line, "\n"), line)
}

// The session's printer shows the status line after the printer's own
// line for a job event, on a line of its own.
func TestPrintJobStatus(t *testing.T) {
	var b bytes.Buffer
	show := newPrint(&output{w: &b}, false)
	start := toolloop.Event{Type: toolloop.EventStart, RunID: "r", Turn: 1, CallID: "c1", Tool: "exec_shell", Time: jobT0,
		Arguments: json.RawMessage(`{"command":"make test"}`)}
	done := toolloop.Event{Type: toolloop.EventComplete, RunID: "r", Turn: 1, CallID: "c1", Tool: "exec_shell", Time: jobT0,
		Result: toolloop.TextResult("started job job_1")}
	fin := jobEvent(toolloop.EventJobFinished, "r", "job_1", "c1", "exec_shell", 0, 31, toolloop.JobOK)
	fin.Job.Result = toolloop.TextResult("PASS")
	for _, e := range []toolloop.Event{
		start,
		jobEvent(toolloop.EventJobStarted, "r", "job_1", "c1", "exec_shell", 0, 0, toolloop.JobRunning),
		done,
		{Type: toolloop.EventModelDelta, RunID: "r", Turn: 2, Text: "Waiting for the tests"},
		fin,
	} {
		show(e)
	}
	assert.Equal(t, `  & job_1 exec_shell command="make test" → started in the background
  · jobs: 1 running (job_1 exec_shell 0s)
Waiting for the tests
  ✓ job_1 exec_shell command="make test" (31s) → ok: PASS
  · jobs: none running
`, b.String())
}

// slowTool runs in the background until released.
type slowTool struct{ release chan struct{} }

func (s *slowTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "suite", Description: "Runs the tests.", Background: true, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (s *slowTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	call.ReportPartial("=== RUN TestA\n")
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.release:
		return &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent("ok ./...")},
			Meta: toolloop.ResultMeta{Extra: map[string]any{"exit_code": 0}}}, nil
	}
}

// modelFunc answers turn n (from 1) with reply(n).
type modelFunc func(n int) *toolloop.Response

func (f modelFunc) counter() toolloop.Model {
	var mu sync.Mutex
	n := 0
	return toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		return f(k), nil
	})
}

// With the events of a real loop: job_1 starts in turn 1 and job_2 in
// turn 2; job_1 is released in turn 3 and waited for; the run's end
// cancels job_2.
func TestPrintJobStatusLoop(t *testing.T) {
	suite, lint := &slowTool{release: make(chan struct{})}, &slowTool{release: make(chan struct{})}
	var reg toolloop.ToolRegistry
	reg.MustRegister(suite)
	reg.MustRegister(renamed{lint, "lint"})
	var b syncBuffer
	model := modelFunc(func(n int) *toolloop.Response {
		switch n {
		case 1:
			return looptest.Calls(looptest.Call("c1", "suite", `{"background":true}`))
		case 2:
			return looptest.Calls(looptest.Call("c2", "lint", `{"background":true}`))
		case 3:
			close(suite.release)
			return looptest.Calls(looptest.Call("c3", toolloop.JobWaitName, `{"job":"job_1"}`))
		}
		return looptest.Text("Tests pass; lint is still running.")
	})
	loop := &toolloop.AgentLoop{Tools: &reg, OnEvent: newPrint(&output{w: &b}, false), Model: model.counter()}
	res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("test")})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 2)
	out := b.String()
	assert.Contains(t, out, "  & job_1 suite background=true → started in the background\n  · jobs: 1 running (job_1 suite 0s)\n")
	assert.Regexp(t, `  & job_2 lint background=true → started in the background\n  · jobs: 2 running \(job_1 suite \d+s, job_2 lint \d+s\)\n`, out)
	assert.Regexp(t, `  ✓ job_1 suite background=true (\(.+\) )?→ ok, exit code 0: ok \./\.\.\.\n  · jobs: 1 running \(job_2 lint \d+s\)\n`, out)
	assert.Regexp(t, `  ! job_2 lint background=true (\(.+\) )?→ canceled: .+\n  · jobs: none running\n$`, out)
	assert.NotContains(t, out, "started job job_", "a job's line stands for its starting call's")
}

// renamed is a tool under another name.
type renamed struct {
	toolloop.Tool
	name string
}

func (r renamed) Spec() toolloop.ToolSpec {
	s := r.Tool.Spec()
	s.Name = r.name
	return s
}
