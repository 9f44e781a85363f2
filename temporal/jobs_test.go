package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// suite is a background tool standing for a slow test suite: it prints
// a line, says it started (with its job ID), and waits to be released or
// for its context.
type suite struct {
	name     string // "suite" if empty
	started  chan string
	release  chan string
	canceled atomic.Int32
}

func newSuite() *suite { return &suite{started: make(chan string, 8), release: make(chan string, 8)} }

func (s *suite) Spec() toolloop.ToolSpec {
	name := s.name
	if name == "" {
		name = "suite"
	}
	return toolloop.ToolSpec{Name: name, Description: "Run the test suite.", Background: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pkg":{"type":"string"}},"required":["pkg"],"additionalProperties":false}`)}
}

func (s *suite) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in struct {
		Pkg string `json:"pkg"`
	}
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	call.ReportPartial("=== RUN TestAll\n")
	s.started <- call.Job
	select {
	case <-ctx.Done():
		s.canceled.Add(1)
		return nil, ctx.Err()
	case verdict := <-s.release:
		if verdict == "FAIL" {
			return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "FAIL %s", in.Pkg)
		}
		return toolloop.TextResult("ok " + in.Pkg), nil
	}
}

// registry holds the suite, a quick foreground tool, lint, and more.
func (s *suite) registry(more ...toolloop.Tool) *toolloop.ToolRegistry {
	var reg toolloop.ToolRegistry
	reg.MustRegister(s)
	for _, t := range more {
		reg.MustRegister(t)
	}
	reg.MustRegister(toolloop.NewTool("lint", "Lint.", func(context.Context, struct{}) (any, error) { return "clean", nil }))
	return &reg
}

func startSuite(id string) *toolloop.Response {
	return looptest.Calls(looptest.Call(id, "suite", `{"pkg":"./...","background":true}`))
}

// jobEnds returns the texts of the user messages that tell a job's end.
func jobEnds(msgs []toolloop.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == toolloop.RoleUser && strings.HasPrefix(m.Text(), "[Job ") {
			out = append(out, m.Text())
		}
	}
	return out
}

// schemaHas reports whether the named tool's schema has the property.
func schemaHas(t *testing.T, specs []toolloop.ToolSpec, tool, prop string) bool {
	t.Helper()
	for _, s := range specs {
		if s.Name != tool {
			continue
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(s.InputSchema, &schema))
		_, ok := schema.Properties[prop]
		return ok
	}
	return false
}

// TestJobAcrossTurns: a call that sets background starts a job and is
// answered at once; the job runs on across three model turns (the last a
// final answer, after which the run waits for it, Limits.Jobs.WaitAtEnd),
// and its end is delivered once, as a user message, before the next
// turn. The model sees the background argument, and the job tools once
// the job started.
func TestJobAcrossTurns(t *testing.T) {
	s := newSuite()
	var jobID string
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		switch turn {
		case 1:
			return startSuite("c1")
		case 2:
			jobID = <-s.started
			return looptest.Calls(looptest.Call("c2", "lint", `{}`))
		case 3:
			s.release <- "ok"
			return looptest.Text("The suite runs; I will wait for it.")
		}
		return looptest.Text("The suite passed.")
	}}
	requests := make(chan *toolloop.Request, 8)
	l := &toolloop.AgentLoop{Model: &recordRequests{m, requests}, Tools: s.registry(),
		Limits: toolloop.Limits{Jobs: toolloop.JobLimits{WaitAtEnd: true}}}
	env := newEnv(t, temporal.Agent{Loop: l})
	res, err := run(t, env, "", task("run the tests"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "job_1", jobID, "the tool ran as the job")
	assert.Equal(t, "The suite passed.", res.FinalText)
	assert.Equal(t, 4, res.Turns)

	started := looptest.Results(res.Messages)["c1"]
	require.NotNil(t, started)
	assert.Equal(t, toolloop.StatusOK, started.Status)
	assert.True(t, strings.HasPrefix(started.Text(), "Started background job job_1: suite runs on"), started.Text())
	assert.Equal(t, "job_1", started.Meta.Extra["job"])

	ends := jobEnds(res.Messages)
	require.Len(t, ends, 1, "delivered once")
	assert.True(t, strings.HasPrefix(ends[0], "[Job job_1 (suite, started by call c1) ended: ok after"), ends[0])
	assert.Contains(t, ends[0], "Its result:\nok ./...")
	assert.Contains(t, ends[0], "It printed 16 bytes of output")
	reqs := m.requests()
	require.Len(t, reqs, 4)
	for i := range 3 {
		assert.Empty(t, jobEnds(reqs[i]), "turn %d", i+1)
	}
	assert.Len(t, jobEnds(reqs[3]), 1, "told before the fourth turn")

	require.Len(t, res.Jobs, 1)
	j := res.Jobs[0]
	assert.Equal(t, "job_1", j.ID)
	assert.Equal(t, "c1", j.CallID)
	assert.Equal(t, 1, j.Turn)
	assert.Equal(t, toolloop.JobOK, j.Status)
	assert.True(t, j.Reported)
	assert.Equal(t, int64(16), j.OutputBytes)

	first, second := <-requests, <-requests
	assert.True(t, schemaHas(t, first.Tools, "suite", toolloop.BackgroundArg), "the background argument is offered")
	assert.False(t, schemaHas(t, first.Tools, "lint", toolloop.BackgroundArg))
	assert.False(t, hasTool(first.Tools, toolloop.JobWaitName), "no job tools before a job")
	for _, name := range []string{toolloop.JobCancelName, toolloop.JobListName, toolloop.JobOutputName, toolloop.JobWaitName} {
		assert.True(t, hasTool(second.Tools, name), name)
	}
}

// recordRequests passes on the requests a streaming model gets.
type recordRequests struct {
	*stepModel
	reqs chan *toolloop.Request
}

func (r *recordRequests) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	select {
	case r.reqs <- req:
	default:
	}
	return r.stepModel.Stream(ctx, req)
}

func hasTool(specs []toolloop.ToolSpec, name string) bool {
	for _, s := range specs {
		if s.Name == name {
			return true
		}
	}
	return false
}

// TestJobWaitReportsTheEnd: job_wait waits for the job's end on a
// workflow timer and reports it; the end is not told again. job_list and
// job_output then read the ended job.
func TestJobWaitReportsTheEnd(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		switch turn {
		case 1:
			return startSuite("c1")
		case 2:
			<-s.started
			s.release <- "FAIL"
			return looptest.Calls(looptest.Call("c2", toolloop.JobWaitName, `{"job":"job_1","timeout_seconds":60}`))
		case 3:
			return looptest.Calls(looptest.Call("c3", toolloop.JobListName, `{}`),
				looptest.Call("c4", toolloop.JobOutputName, `{"job":"job_1"}`),
				looptest.Call("c5", toolloop.JobWaitName, `{"job":"job_1"}`),
				looptest.Call("c6", toolloop.JobWaitName, `{"job":"job_9"}`))
		}
		return looptest.Text("The suite failed.")
	}}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: s.registry()}})
	res, err := run(t, env, "", task("run the tests"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	results := looptest.Results(res.Messages)
	wait := results["c2"].Text()
	assert.True(t, strings.HasPrefix(wait, "[Job job_1 (suite, started by call c1) ended: error after"), wait)
	assert.Contains(t, wait, "(execution_failed: FAIL ./...)")
	assert.Empty(t, jobEnds(res.Messages), "told by job_wait, not again")
	assert.Regexp(t, `^job_1\tsuite\terror\t\d+s\t16 bytes of output\n$`, results["c3"].Text())
	assert.Equal(t, "Job job_1 (suite): error; next_offset 16.\n=== RUN TestAll\n", results["c4"].Text())
	assert.Equal(t, "Job job_1 had already ended (error), as you were told.", results["c5"].Text())
	require.NotNil(t, results["c6"].Error)
	assert.Equal(t, toolloop.KindNotFound, results["c6"].Error.Kind)
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobError, res.Jobs[0].Status)
	assert.True(t, res.Jobs[0].Reported)
}

// TestJobCancel: job_cancel cancels the job's activity (the tool sees
// its context end) and reports the end in its result; the end is not
// told again.
func TestJobCancel(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		switch turn {
		case 1:
			return startSuite("c1")
		case 2:
			<-s.started
			return looptest.Calls(looptest.Call("c2", toolloop.JobCancelName, `{"job":"job_1"}`))
		case 3:
			return looptest.Calls(looptest.Call("c3", toolloop.JobCancelName, `{"job":"job_1"}`))
		}
		return looptest.Text("Canceled.")
	}}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: s.registry()}, HeartbeatTimeout: 200 * time.Millisecond})
	res, err := run(t, env, "", task("run the tests"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Eventually(t, func() bool { return s.canceled.Load() == 1 }, 10*time.Second, 10*time.Millisecond, "the tool saw its context end")
	results := looptest.Results(res.Messages)
	c := results["c2"].Text()
	assert.True(t, strings.HasPrefix(c, "[Job job_1 (suite, started by call c1) ended: canceled after"), c)
	assert.Contains(t, c, "(canceled: job job_1 was canceled: canceled by the model (job_cancel))")
	assert.Equal(t, "Job job_1 had already ended (canceled); nothing to cancel.", results["c3"].Text())
	assert.Empty(t, jobEnds(res.Messages), "told by job_cancel, not again")
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobCanceled, res.Jobs[0].Status)
	assert.Equal(t, "canceled by the model (job_cancel)", res.Jobs[0].Reason)
	assert.True(t, res.Jobs[0].Reported)
}

// TestJobEndsWithRun: a run whose model answers while a job runs
// cancels the job before the workflow completes; RunResult.Jobs says how
// it ended, and nothing is left undelivered.
func TestJobEndsWithRun(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		if turn == 1 {
			return startSuite("c1")
		}
		<-s.started
		return looptest.Text("Started the suite.")
	}}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: s.registry()}, HeartbeatTimeout: 200 * time.Millisecond})
	res, err := run(t, env, "", task("run the tests"))
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return s.canceled.Load() == 1 }, 10*time.Second, 10*time.Millisecond, "the job's activity was canceled")
	require.Len(t, res.Jobs, 1)
	j := res.Jobs[0]
	assert.Equal(t, toolloop.JobCanceled, j.Status)
	assert.Equal(t, "the run ended", j.Reason)
	assert.False(t, j.Reported)
	assert.Empty(t, res.Undelivered)
	assert.Empty(t, jobEnds(res.Messages))
}

// TestJobsOff: with Limits.Jobs.Max negative the background argument is
// not offered, and a call that sets it runs in the foreground.
func TestJobsOff(t *testing.T) {
	s := newSuite()
	go func() {
		<-s.started
		s.release <- "ok"
	}()
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		if turn == 1 {
			return startSuite("c1")
		}
		return looptest.Text("done")
	}}
	requests := make(chan *toolloop.Request, 8)
	l := &toolloop.AgentLoop{Model: &recordRequests{m, requests}, Tools: s.registry(), Limits: toolloop.Limits{Jobs: toolloop.JobLimits{Max: -1}}}
	env := newEnv(t, temporal.Agent{Loop: l})
	res, err := run(t, env, "", task("run the tests"))
	require.NoError(t, err)
	assert.Equal(t, "ok ./...", looptest.Results(res.Messages)["c1"].Text())
	assert.Empty(t, res.Jobs)
	assert.False(t, schemaHas(t, (<-requests).Tools, "suite", toolloop.BackgroundArg))
}

// TestJobAcrossContinueAsNew: a run does not continue as new while a job
// runs (its activity cannot outlive the execution); once the job has
// ended and its end is told, it does, and the next execution numbers its
// jobs after the first's and lists them. When Temporal suggests
// continuing as new while a job runs, the job is ended first and its end
// is told in the next execution.
func TestJobAcrossContinueAsNew(t *testing.T) {
	t.Run("waits for the job", func(t *testing.T) {
		s := newSuite()
		m := &stepModel{reply: func(turn int) *toolloop.Response {
			switch turn {
			case 1:
				return startSuite("c1")
			case 2:
				<-s.started
				s.release <- "ok"
				return looptest.Calls(looptest.Call("c2", toolloop.JobWaitName, `{"job":"job_1"}`))
			case 3:
				return startSuite("c3")
			case 4:
				<-s.started
				s.release <- "ok"
				return looptest.Calls(looptest.Call("c4", toolloop.JobWaitName, `{"job":"job_2"}`))
			case 5:
				return looptest.Calls(looptest.Call("c5", toolloop.JobListName, `{}`))
			}
			return looptest.Text("both passed")
		}}
		l := &toolloop.AgentLoop{Model: m, Tools: s.registry()}
		res, n, err := runChain(t, temporal.Agent{Loop: l, MaxTurnsPerExecution: 1}, temporal.Input{Messages: task("test twice")})
		require.NoError(t, err)
		looptest.AssertValid(t, res.Messages)
		assert.Equal(t, 4, n, "turns 1-2, 3-4, 5 and 6: no execution ended with a job running")
		results := looptest.Results(res.Messages)
		assert.Equal(t, "job_2", results["c3"].Meta.Extra["job"], "numbered after the first execution's")
		assert.True(t, strings.HasPrefix(results["c4"].Text(), "[Job job_2 (suite, started by call c3) ended: ok"), results["c4"].Text())
		assert.Regexp(t, `^job_1\tsuite\tok\t\d+s\t16 bytes of output\njob_2\tsuite\tok\t\d+s\t16 bytes of output\n$`, results["c5"].Text())
		assert.Empty(t, jobEnds(res.Messages), "both ends went to job_wait")
		require.Len(t, res.Jobs, 2)
	})
	t.Run("suggested", func(t *testing.T) {
		s := newSuite()
		m := &stepModel{reply: func(turn int) *toolloop.Response {
			if turn == 1 {
				return startSuite("c1")
			}
			return looptest.Text("The suite was stopped.")
		}}
		a := temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: s.registry()}, HeartbeatTimeout: 200 * time.Millisecond}
		env := newEnv(t, a)
		env.SetContinueAsNewSuggested(true)
		env.ExecuteWorkflow(temporal.DefaultName, temporal.Input{Messages: task("run the tests")})
		require.True(t, env.IsWorkflowCompleted())
		var can *workflow.ContinueAsNewError
		require.True(t, errors.As(env.GetWorkflowError(), &can), "%v", env.GetWorkflowError())
		var in temporal.Input
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
		res, n, err := runChain(t, a, in)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		ends := jobEnds(res.Messages)
		require.Len(t, ends, 1)
		assert.True(t, strings.HasPrefix(ends[0], "[Job job_1 (suite, started by call c1) ended when the run continued as new: canceled"), ends[0])
		require.Len(t, res.Jobs, 1)
		assert.True(t, res.Jobs[0].Reported)
	})
}
