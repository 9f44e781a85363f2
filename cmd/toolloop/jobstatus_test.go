package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop"
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
