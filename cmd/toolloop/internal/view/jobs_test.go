package view

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// jobEvents is a run of four turns with two background jobs: job_1,
// started by call c1 in turn 1, reports output in turns 2 and 3, a hook
// transforms its result and it ends in turn 3, 53 ms after it started,
// and the model is told in a message;
// job_2, started by c3 in turn 2, has no end in the log (the log was cut,
// or the process died), so it runs to the run's last event.
func jobEvents() []toolloop.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	resp := func(at, turn int, text string, calls ...toolloop.ToolCall) toolloop.Event {
		stop := toolloop.StopToolUse
		if len(calls) == 0 {
			stop = toolloop.StopEnd
		}
		m := toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: calls}
		if text != "" {
			m.Content = []toolloop.Content{toolloop.TextContent(text)}
		}
		return toolloop.Event{Type: toolloop.EventModelResponse, Time: ms(at), RunID: "r", Turn: turn,
			Response: &toolloop.Response{Model: "m", StopReason: stop, Message: m}}
	}
	req := func(at, turn int) toolloop.Event {
		return toolloop.Event{Type: toolloop.EventModelRequest, Time: ms(at), RunID: "r", Turn: turn}
	}
	done := func(at, turn int, id, tool, text string) toolloop.Event {
		return toolloop.Event{Type: toolloop.EventComplete, Time: ms(at), RunID: "r", Turn: turn, CallID: id, Tool: tool,
			Result: &toolloop.ToolResult{CallID: id, Name: tool, Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent(text)}}}
	}
	jobEv := func(typ toolloop.EventType, at, turn int, callID string) toolloop.Event {
		return toolloop.Event{Type: typ, Time: ms(at), RunID: "r", Turn: turn, CallID: callID, Tool: "exec_shell",
			Source: toolloop.SourceBuiltin, SourceName: "toolloop"}
	}
	started := func(at, turn int, id, callID string) toolloop.Event {
		e := jobEv(toolloop.EventJobStarted, at, turn, callID)
		e.Job = &toolloop.Job{ID: id, CallID: callID, Tool: "exec_shell", Turn: turn, Status: toolloop.JobRunning, Started: ms(at)}
		return e
	}
	output := func(at, turn int, callID, text string, coalesced int) toolloop.Event {
		e := jobEv(toolloop.EventJobOutput, at, turn, callID)
		e.Text, e.Coalesced = text, coalesced
		return e
	}
	// As the loop sends them, a job's events name the turn it started in.
	finished := jobEv(toolloop.EventJobFinished, 60, 1, "c1")
	finished.Job = &toolloop.Job{ID: "job_1", CallID: "c1", Tool: "exec_shell", Turn: 1, Status: toolloop.JobOK,
		Started: ms(7), Ended: ms(60), OutputBytes: 40, Result: &toolloop.ToolResult{CallID: "c1", Name: "exec_shell",
			Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("ok  example.com/pkg 0.3s\n")},
			Meta: toolloop.ResultMeta{Extra: map[string]any{"exit_code": 0}}}}
	return []toolloop.Event{
		{Type: toolloop.EventRunStart, Time: ms(0), RunID: "r", Messages: []toolloop.Message{toolloop.UserMessage("test it")}},
		req(1, 1),
		resp(5, 1, "Running the tests in the background.",
			looptest.Call("c1", "exec_shell", `{"command":"go test ./...","background":true}`),
			looptest.Call("c2", "read_file", `{"path":"a.go"}`)),
		{Type: toolloop.EventStart, Time: ms(6), RunID: "r", Turn: 1, CallID: "c1", Tool: "exec_shell",
			Arguments: json.RawMessage(`{"command":"go test ./...","background":true}`)},
		started(7, 1, "job_1", "c1"),
		done(8, 1, "c1", "exec_shell", "started job job_1 (exec_shell) in the background"),
		done(20, 1, "c2", "read_file", "package a"),
		req(21, 2),
		output(30, 1, "c1", "=== RUN   TestA\n", 1),
		resp(40, 2, "", looptest.Call("c3", "exec_shell", `{"command":"sleep 100","background":true}`)),
		started(41, 2, "job_2", "c3"),
		done(42, 2, "c3", "exec_shell", "started job job_2 (exec_shell) in the background"),
		output(45, 2, "c3", "zzz", 1),
		{Type: toolloop.EventHook, Time: ms(59), RunID: "r", Turn: 1, CallID: "c1", Tool: "exec_shell",
			Hook: &toolloop.HookEffect{Hook: "post_tool_use", Effect: "transform", Detail: "redacted the job's result"}},
		req(50, 3),
		resp(52, 3, "", looptest.Call("c4", "read_file", `{"path":"b.go"}`)),
		output(55, 1, "c1", "--- PASS: TestA (0.00s)\n", 3),
		done(58, 3, "c4", "read_file", "package b"),
		finished,
		{Type: toolloop.EventUserMessage, Time: ms(61), RunID: "r", Turn: 3, Origin: toolloop.OriginJob,
			Messages: []toolloop.Message{toolloop.UserMessage("[Job job_1 (exec_shell) ended: ok after 53ms]\nok  example.com/pkg 0.3s")}},
		req(62, 4),
		resp(70, 4, "The tests pass."),
		{Type: toolloop.EventRunEnd, Time: ms(71), RunID: "r", Turn: 4, StopReason: toolloop.StopEnd},
	}
}

// jobLog is jobEvents as a log.
func jobLog(t testing.TB) []byte {
	var b bytes.Buffer
	for _, e := range jobEvents() {
		line, err := json.Marshal(e)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

func TestModelJobs(t *testing.T) {
	p := buildLog(t, jobLog(t), Options{})
	require.Len(t, p.Runs, 1)
	r := p.Runs[0]
	assert.Equal(t, 2, p.Jobs)
	assert.Equal(t, 4, p.Calls, "a job is no call of its own")
	require.Len(t, r.Jobs, 2)
	j1, j2 := r.Jobs[0], r.Jobs[1]

	assert.Equal(t, "job_1", j1.ID)
	assert.Equal(t, "c1", j1.CallID)
	assert.Equal(t, "exec_shell", j1.Tool)
	assert.Equal(t, statusOK, j1.Status)
	assert.Equal(t, 1, j1.Turn, "it starts at its starting call's turn")
	assert.Equal(t, 3, j1.EndTurn, "and outlives it, to the turn it ended in")
	assert.InDelta(t, 7.0, j1.At, 1e-9)
	assert.InDelta(t, 53.0, j1.Dur, 1e-9)
	c1 := callsByID(p.Runs)["c1"]
	assert.Equal(t, "job_1", c1.Job)
	assert.Less(t, c1.At+c1.Dur, j1.At+j1.Dur, "the job outlives its call")
	assert.Greater(t, j1.At+j1.Dur, r.Turns[1].At+r.Turns[1].Dur, "it ran past the end of turn 2")
	require.NotNil(t, j1.Exit)
	assert.EqualValues(t, 0, *j1.Exit)
	assert.EqualValues(t, 40, j1.OutputBytes)
	require.Len(t, j1.Output, 2)
	assert.Equal(t, "=== RUN   TestA\n", j1.Output[0].Text.S)
	assert.InDelta(t, 30.0, j1.Output[0].At, 1e-9)
	assert.Equal(t, 2, j1.OutputMore, "the second event joined three reports")
	assert.Equal(t, "ok  example.com/pkg 0.3s\n", j1.Result.S)
	assert.Equal(t, 3, j1.Told)

	assert.Equal(t, "job_2", j2.ID)
	assert.Equal(t, "job_2", callsByID(p.Runs)["c3"].Job)
	assert.Equal(t, statusUnfinished, j2.Status)
	assert.Equal(t, 2, j2.Turn)
	assert.Equal(t, 4, j2.EndTurn, "a job without an end runs to the run's last turn")
	assert.InDelta(t, 71.0-41.0, j2.Dur, 1e-9, "and to its last event")
	assert.Zero(t, j2.Told)

	// The message that told the model is shown as the job's end, linked.
	t3 := r.Turns[2]
	require.Len(t, t3.Notes, 1)
	assert.Equal(t, "job", t3.Notes[0].Kind)
	assert.Equal(t, "job ended: job_1", t3.Notes[0].Title)
	assert.Equal(t, []string{"job_1"}, t3.Notes[0].Jobs)

	// The turns are the calls' and the model's: a job does not stretch
	// the turn it started in.
	assert.InDelta(t, 1.0, r.Turns[0].At, 1e-9)
	assert.InDelta(t, 19.0, r.Turns[0].Dur, 1e-9)
	assert.Len(t, c1.Hooks, 1, "the hook on the job's result is its call's")
}

func TestModelJobEnds(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	job := func(typ toolloop.EventType, id string, status toolloop.JobStatus, res *toolloop.ToolResult, reason string) toolloop.Event {
		return toolloop.Event{Type: typ, Time: at, RunID: "r", Turn: 1, CallID: "c" + id, Tool: "exec_shell",
			Job: &toolloop.Job{ID: id, CallID: "c" + id, Tool: "exec_shell", Turn: 1, Status: status, Result: res, Reason: reason}}
	}
	failed := &toolloop.ToolResult{Status: toolloop.StatusError, Error: &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "exit status 2"},
		Meta: toolloop.ResultMeta{Extra: map[string]any{"exit_code": 2.0}}}
	canceled := &toolloop.ToolResult{Status: toolloop.StatusError, Error: &toolloop.ToolError{Kind: toolloop.KindCanceled, Message: "canceled"}}
	msg := func(text string) toolloop.Event {
		return toolloop.Event{Type: toolloop.EventUserMessage, Time: at, RunID: "r", Turn: 1, Origin: toolloop.OriginJob,
			Messages: []toolloop.Message{toolloop.UserMessage(text)}}
	}
	p, err := build(events(
		job(toolloop.EventJobStarted, "job_1", toolloop.JobRunning, nil, ""),
		job(toolloop.EventJobStarted, "job_12", toolloop.JobRunning, nil, ""),
		job(toolloop.EventJobStarted, "job_3", toolloop.JobRunning, nil, ""),
		toolloop.Event{Type: toolloop.EventJobOutput, Time: at, RunID: "r", CallID: "c_unknown", Text: "no job to show it under"},
		job(toolloop.EventJobFinished, "job_12", toolloop.JobError, failed, ""),
		job(toolloop.EventJobFinished, "job_1", toolloop.JobCanceled, canceled, "the model canceled it"),
		msg("[Job job_12 (exec_shell) ended: error]"),
		job(toolloop.EventJobFinished, "job_3", "lost", nil, ""),
		job(toolloop.EventJobStarted, "job_4", toolloop.JobRunning, nil, ""),
		toolloop.Event{Type: toolloop.EventJobFinished, Time: at, RunID: "r", Turn: 1, CallID: "cjob_4"}, // no Job
		msg("a job ended"), // names none: the one job not told
	), &Options{})
	require.NoError(t, err)
	jobs := p.Runs[0].Jobs
	require.Len(t, jobs, 4)
	j1, j12, j3, j4 := jobs[0], jobs[1], jobs[2], jobs[3]
	assert.Equal(t, statusError, j4.Status, "an end that does not say how")
	assert.Equal(t, statusError, j12.Status)
	assert.Equal(t, "execution_failed", j12.Kind)
	assert.Equal(t, "exit status 2", j12.Message.S)
	require.NotNil(t, j12.Exit)
	assert.EqualValues(t, 2, *j12.Exit, "an exit code as decoded from JSON")
	assert.Equal(t, 1, j12.Told, "job_12 is named; job_1 is not, though its ID is in job_12's")
	assert.Equal(t, statusCanceled, j1.Status)
	assert.Equal(t, "the model canceled it", j1.Reason.S)
	assert.Zero(t, j1.Told)
	assert.Equal(t, statusError, j3.Status, "an end the page does not know")
	notes := p.Runs[0].Turns[0].Notes
	require.Len(t, notes, 2)
	assert.Equal(t, []string{"job_12"}, notes[0].Jobs)
	assert.Nil(t, notes[1].Jobs, "three jobs were not told: the message names none")
	assert.Equal(t, "job ended", notes[1].Title)
}

// suiteTool stands for a slow test suite run in the background: it
// reports a line of output, waits to be released, and ends with exit
// code 0.
type suiteTool struct{ release, returned chan struct{} }

func (s *suiteTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "suite", Description: "Runs the tests.", Background: true,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (s *suiteTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	call.ReportPartial("=== RUN TestA\n")
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.release:
	}
	defer close(s.returned)
	return &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent("ok ./...")},
		Meta: toolloop.ResultMeta{Extra: map[string]any{"exit_code": 0}}}, nil
}

// turnModel answers each turn with reply(turn, request).
type turnModel struct {
	mu    sync.Mutex
	n     int
	reply func(int, *toolloop.Request) *toolloop.Response
}

func (m *turnModel) Generate(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	m.mu.Lock()
	m.n++
	n := m.n
	m.mu.Unlock()
	return m.reply(n, req), nil
}

// recordJob returns the log of a real AgentLoop whose model starts a job
// in turn 1 and goes on working while it runs; the job is released in
// turn 3, and the model answers once it is told the job ended.
func recordJob(t *testing.T) []byte {
	suite := &suiteTool{release: make(chan struct{}), returned: make(chan struct{})}
	var reg toolloop.ToolRegistry
	reg.MustRegister(suite)
	reg.MustRegister(toolloop.NewTool("echo", "Echoes.", func(_ context.Context, in struct {
		S string `json:"s"`
	}) (any, error) {
		return in.S, nil
	}))
	told := func(req *toolloop.Request) bool {
		for _, m := range req.Messages {
			if m.Role == toolloop.RoleUser && strings.Contains(m.Text(), "[Job job_1") {
				return true
			}
		}
		return false
	}
	m := &turnModel{reply: func(n int, req *toolloop.Request) *toolloop.Response {
		switch {
		case n == 1:
			return looptest.Calls(looptest.Call("c1", "suite", `{"background":true}`))
		case n == 3:
			close(suite.release)
			<-suite.returned
		case told(req):
			return looptest.Text("The tests pass.")
		case n > 3:
			time.Sleep(5 * time.Millisecond) // the job is ending
		}
		return looptest.Calls(looptest.Call("e"+strconv.Itoa(n), "echo", `{"s":"other work"}`))
	}}
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	loop := &toolloop.AgentLoop{Model: m, Tools: &reg, OnEvent: w.Record}
	res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("Test it.")})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestModelRecordedJob: with the events the loop sends (which name the
// turn the job started in), the job starts in turn 1 and ends in the turn
// it ended in, and does not stretch turn 1.
func TestModelRecordedJob(t *testing.T) {
	p := buildLog(t, recordJob(t), Options{})
	r := p.Runs[0]
	require.Len(t, r.Jobs, 1)
	j := r.Jobs[0]
	assert.Equal(t, "job_1", j.ID)
	assert.Equal(t, "suite", j.Tool)
	assert.Equal(t, statusOK, j.Status)
	assert.Equal(t, 1, j.Turn)
	assert.GreaterOrEqual(t, j.EndTurn, 3, "released in turn 3")
	require.NotNil(t, j.Exit)
	assert.EqualValues(t, 0, *j.Exit)
	require.NotEmpty(t, j.Output)
	assert.Equal(t, "=== RUN TestA\n", j.Output[0].Text.S)
	assert.Equal(t, "job_1", callsByID(p.Runs)["c1"].Job)
	t1 := r.Turns[0]
	assert.Less(t, t1.At+t1.Dur, j.At+j.Dur, "the job outlives turn 1, which it does not stretch")
	assert.Greater(t, j.Told, j.Turn)
	var linked []string
	for _, tn := range r.Turns {
		for _, n := range tn.Notes {
			if n.Kind == "job" {
				linked = append(linked, n.Jobs...)
			}
		}
	}
	assert.Equal(t, []string{"job_1"}, linked, "the end message is linked to the job")
}
