package toolloop_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// suite is a background tool standing for a slow test suite: it prints
// a line, waits to be released (or for its context), and says how it
// went. It records the job ID it ran as and whether its context ended.
type suite struct {
	started  chan string
	release  chan string
	canceled atomic.Int32
	running  atomic.Int32
	lines    int
}

func newSuite() *suite { return &suite{started: make(chan string, 8), release: make(chan string, 8)} }

func (s *suite) tool() toolloop.Tool { return s }

func (s *suite) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "suite", Description: "runs the test suite", Background: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pkg":{"type":"string"}},"required":["pkg"],"additionalProperties":false}`)}
}

func (s *suite) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in struct {
		Pkg string `json:"pkg"`
	}
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	s.running.Add(1)
	defer s.running.Add(-1)
	for i := range max(s.lines, 1) {
		call.ReportPartial("=== RUN Test" + strings.Repeat("x", i%3) + "\n")
	}
	s.started <- call.Job
	select {
	case <-ctx.Done():
		s.canceled.Add(1)
		return nil, ctx.Err()
	case verdict := <-s.release:
		if verdict == "FAIL" {
			return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "FAIL %s", in.Pkg)
		}
		return &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent("ok " + in.Pkg)}}, nil
	}
}

// argTool records the arguments and job ID it was called with.
type argTool struct {
	spec toolloop.ToolSpec
	got  atomic.Value
}

func (a *argTool) Spec() toolloop.ToolSpec { return a.spec }

func (a *argTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	a.got.Store(string(call.Arguments) + "|" + call.Job)
	return &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent("ran")}}, nil
}

func jobEvents(rec *looptest.Recorder, typ toolloop.EventType) []toolloop.Event {
	var out []toolloop.Event
	for _, e := range rec.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func originMessages(rec *looptest.Recorder, o toolloop.Origin) []string {
	var out []string
	for _, e := range rec.Events() {
		if e.Type == toolloop.EventUserMessage && e.Origin == o {
			out = append(out, e.Messages[0].Text())
		}
	}
	return out
}

func toolNames(specs []toolloop.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

func TestJobRunsWhileTheModelGoesOnAndItsEndIsDeliveredOnce(t *testing.T) {
	s := newSuite()
	s.lines = 3
	echo := toolloop.NewTool("echo", "echoes", func(ctx context.Context, in struct {
		S string `json:"s"`
	}) (any, error) {
		return in.S, nil
	})
	var reqs []*toolloop.Request
	var mu sync.Mutex
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		mu.Lock()
		reqs = append(reqs, req)
		mu.Unlock()
		if turn == 1 {
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"./...","background":true}`))
		}
		if turn == 3 {
			<-s.started
			s.release <- "ok"
			waitJobEnd(t, req) // the end comes at a safe point, never before the job ends
		}
		if turn < 3 || !hasJobEnd(req) {
			if turn > 3 {
				time.Sleep(20 * time.Millisecond) // the job is ending
			}
			return looptest.Calls(looptest.Call("e"+string(rune('0'+turn)), "echo", `{"s":"other work"}`))
		}
		return looptest.Text("tests passed")
	}}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool(), echo), OnEvent: rec.Record}
	res, err := l.Run(context.Background(), user("test it"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)

	// The model saw the background argument, and the job tools once a
	// job had started.
	var schema map[string]any
	for _, sp := range reqs[0].Tools {
		if sp.Name == "suite" {
			require.NoError(t, json.Unmarshal(sp.InputSchema, &schema))
		}
	}
	assert.Contains(t, schema["properties"], toolloop.BackgroundArg)
	assert.NotContains(t, toolNames(reqs[0].Tools), toolloop.JobWaitName)
	assert.Subset(t, toolNames(reqs[1].Tools), []string{toolloop.JobOutputName, toolloop.JobWaitName, toolloop.JobCancelName, toolloop.JobListName})

	// The starting call's result came at once and names the job.
	start := res.Messages[2].Result
	require.NotNil(t, start)
	assert.Equal(t, toolloop.StatusOK, start.Status)
	assert.Contains(t, start.Text(), "job_1")

	ends := originMessages(rec, toolloop.OriginJob)
	require.Len(t, ends, 1, "the job's end is delivered once")
	for _, e := range jobEvents(rec, toolloop.EventUserMessage) {
		if e.Origin == toolloop.OriginJob {
			require.NotNil(t, e.Job, "the event names the job")
			assert.Equal(t, "job_1", e.Job.ID)
			assert.True(t, e.Job.Reported)
		}
	}
	assert.Contains(t, ends[0], "[Job job_1 (suite")
	assert.Contains(t, ends[0], "ok ./...")
	require.Len(t, jobEvents(rec, toolloop.EventJobStarted), 1)
	fin := jobEvents(rec, toolloop.EventJobFinished)
	require.Len(t, fin, 1)
	assert.Equal(t, toolloop.JobOK, fin[0].Job.Status)
	assert.NotEmpty(t, jobEvents(rec, toolloop.EventJobOutput))

	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobOK, res.Jobs[0].Status)
	assert.True(t, res.Jobs[0].Reported)
	assert.Equal(t, "c1", res.Jobs[0].CallID)
	assert.Equal(t, int64(len("=== RUN Test\n=== RUN Testx\n=== RUN Testxx\n")), res.Jobs[0].OutputBytes)
	assert.Empty(t, res.Undelivered)
	assert.Equal(t, "tests passed", res.FinalText)
}

func hasJobEnd(req *toolloop.Request) bool {
	for _, m := range req.Messages {
		if m.Role == toolloop.RoleUser && strings.HasPrefix(m.Text(), "[Job ") {
			return true
		}
	}
	return false
}

// waitJobEnd is a marker: a model turn cannot see a job's end before
// the safe point after it.
func waitJobEnd(t *testing.T, req *toolloop.Request) {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == toolloop.RoleUser && strings.HasPrefix(m.Text(), "[Job ") {
			t.Errorf("the job's end reached the model before it ended")
		}
	}
}

func TestJobsEndWithTheRun(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"a","background":true}`))
		}
		<-s.started
		return looptest.Text("started the tests")
	}}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool()), OnEvent: rec.Record}
	res, err := l.Run(context.Background(), user("test it"))
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobCanceled, res.Jobs[0].Status)
	assert.Equal(t, "the run ended", res.Jobs[0].Reason)
	assert.False(t, res.Jobs[0].Reported)
	assert.Equal(t, int32(1), s.canceled.Load(), "the tool saw its context end")
	assert.Equal(t, int32(0), s.running.Load(), "the tool returned before Run did")
	assert.Empty(t, res.Undelivered, "a job's end is not a message for the next run")
	evs := rec.Events()
	require.Equal(t, toolloop.EventRunEnd, evs[len(evs)-1].Type)
	assert.Equal(t, toolloop.EventJobFinished, evs[len(evs)-2].Type, "job.finished comes before run.end")
}

func TestJobLimitRefusesTheNext(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"a","background":true}`),
				looptest.Call("c2", "suite", `{"pkg":"b","background":true}`))
		}
		return looptest.Text("done")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool()), Limits: toolloop.Limits{Jobs: toolloop.JobLimits{Max: 1}}}
	res, err := l.Run(context.Background(), user("test it"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	var ok, refused int
	for _, msg := range res.Messages {
		if r := msg.Result; r != nil {
			if r.Status == toolloop.StatusOK {
				ok++
			} else {
				refused++
				assert.Contains(t, r.Text(), "at most 1 run at once")
			}
		}
	}
	assert.Equal(t, 1, ok)
	assert.Equal(t, 1, refused)
	assert.Len(t, res.Jobs, 1)
}

func TestJobCancelReportsTheEndOnce(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		switch turn {
		case 1:
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"a","background":true}`))
		case 2:
			<-s.started
			return looptest.Calls(looptest.Call("k", toolloop.JobCancelName, `{"job":"job_1"}`))
		}
		return looptest.Text("canceled")
	}}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool()), OnEvent: rec.Record}
	res, err := l.Run(context.Background(), user("x"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	cancel := res.Messages[4].Result
	require.NotNil(t, cancel)
	assert.Equal(t, toolloop.JobCancelName, cancel.Name)
	assert.Contains(t, cancel.Text(), "[Job job_1 (suite, started by call c1) ended: canceled")
	assert.Equal(t, int32(0), s.running.Load(), "the tool had returned when the cancel was reported")
	assert.Empty(t, originMessages(rec, toolloop.OriginJob), "job_cancel reported the end; no message follows")
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobCanceled, res.Jobs[0].Status)
	assert.True(t, res.Jobs[0].Reported)
	assert.Len(t, jobEvents(rec, toolloop.EventJobFinished), 1)
}

func TestJobWaitTakesTheEnd(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		switch turn {
		case 1:
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"a","background":true}`))
		case 2:
			go func() { <-s.started; time.Sleep(10 * time.Millisecond); s.release <- "FAIL" }()
			return looptest.Calls(looptest.Call("w", toolloop.JobWaitName, `{"job":"job_1","timeout_seconds":60}`))
		}
		return looptest.Text("it failed")
	}}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool()), OnEvent: rec.Record}
	res, err := l.Run(context.Background(), user("x"))
	require.NoError(t, err)
	wait := res.Messages[4].Result
	require.NotNil(t, wait)
	assert.Contains(t, wait.Text(), "ended: error")
	assert.Contains(t, wait.Text(), "FAIL a")
	assert.Empty(t, originMessages(rec, toolloop.OriginJob))
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobError, res.Jobs[0].Status)
	assert.True(t, res.Jobs[0].Reported)
}

func TestJobOutputKeepsHeadAndTail(t *testing.T) {
	s := newSuite()
	s.lines = 5000 // about 70 KB
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		switch turn {
		case 1:
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"a","background":true}`))
		case 2:
			<-s.started
			return looptest.Calls(looptest.Call("o", toolloop.JobOutputName, `{"job":"job_1"}`),
				looptest.Call("o2", toolloop.JobOutputName, `{"job":"job_1","offset":69990}`),
				looptest.Call("o3", toolloop.JobOutputName, `{"job":"job_9"}`),
				looptest.Call("l", toolloop.JobListName, `{}`))
		}
		return looptest.Text("done")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool()),
		Limits: toolloop.Limits{Jobs: toolloop.JobLimits{MaxOutputBytes: 4096}}}
	res, err := l.Run(context.Background(), user("x"))
	require.NoError(t, err)
	out := res.Messages[4].Result.Text()
	assert.Contains(t, out, "job_1 (suite): running")
	assert.True(t, strings.Contains(out, "=== RUN Test\n=== RUN Testx\n"), "the head is kept")
	assert.Contains(t, out, "of the output were dropped")
	assert.Less(t, len(out), 5000)
	assert.Contains(t, res.Messages[5].Result.Text(), "next_offset")
	assert.Equal(t, toolloop.StatusError, res.Messages[6].Result.Status)
	assert.Contains(t, res.Messages[6].Result.Text(), `no job "job_9"`)
	assert.Contains(t, res.Messages[7].Result.Text(), "job_1\tsuite\trunning")
}

func TestJobArgumentDeclaredByTheToolIsKept(t *testing.T) {
	tool := &argTool{spec: toolloop.ToolSpec{Name: "sh", Background: true, InputSchema: json.RawMessage(
		`{"type":"object","properties":{"cmd":{"type":"string"},"background":{"type":"boolean"}},"additionalProperties":false}`)}}
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return looptest.Calls(looptest.Call("c1", "sh", `{"cmd":"make","background":true}`))
		}
		return looptest.Text("done")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, tool)}
	res, err := l.Run(context.Background(), user("x"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, `{"cmd":"make","background":true}|job_1`, tool.got.Load())
}

func TestJobsOffRunInTheForeground(t *testing.T) {
	tool := &argTool{spec: toolloop.ToolSpec{Name: "t", Background: true, InputSchema: json.RawMessage(
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)}}
	var schema string
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			schema = string(req.Tools[0].InputSchema)
			return looptest.Calls(looptest.Call("c1", "t", `{"a":"x","background":true}`))
		}
		return looptest.Text("done")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, tool), Limits: toolloop.Limits{Jobs: toolloop.JobLimits{Max: -1}}}
	res, err := l.Run(context.Background(), user("x"))
	require.NoError(t, err)
	assert.NotContains(t, schema, toolloop.BackgroundArg)
	assert.Equal(t, `{"a":"x"}|`, tool.got.Load(), "the argument is taken out and the call runs in the foreground")
	assert.Equal(t, "ran", res.Messages[2].Result.Text())
	assert.Empty(t, res.Jobs)
}

func TestJobsEndAtPauseAndTheirEndIsDeliveredOnResume(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		switch turn {
		case 1:
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"a","background":true}`))
		case 2:
			<-s.started
			return looptest.Calls(looptest.Call("c2", "rm", `{}`))
		}
		return looptest.Text("done")
	}}
	rm := toolloop.NewTool("rm", "removes", func(context.Context, struct{}) (any, error) { return "gone", nil })
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool(), rm), PauseForApproval: true, OnEvent: rec.Record,
		Guard: &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "rm", Tools: []string{"rm"}, Decision: toolloop.Ask}}}}
	res, err := l.Run(context.Background(), user("x"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	assert.Equal(t, int32(0), s.running.Load(), "the job ended at the pause")
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobCanceled, res.Jobs[0].Status)
	assert.Equal(t, "the run paused for approval", res.Jobs[0].Reason)
	require.Len(t, res.Paused.Queued, 1)
	assert.Equal(t, toolloop.OriginJob, res.Paused.Queued[0].Origin)
	assert.Contains(t, res.Paused.Queued[0].Message.Text(), "[Job job_1 (suite, started by call c1) ended when the run paused: canceled")

	var rp eventlog.Replay
	for _, e := range rec.Events() {
		rp.Add(e)
	}
	require.NotNil(t, rp.Paused)
	assert.Equal(t, res.Paused.Queued, rp.Paused.Queued)

	rec2 := &looptest.Recorder{}
	l.OnEvent = rec2.Record
	res, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c2": {Approved: true}})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	ends := originMessages(rec2, toolloop.OriginJob)
	require.Len(t, ends, 1, "the paused job's end is delivered once, on resume")
	assert.Contains(t, ends[0], "when the run paused")
	assert.Empty(t, res.Jobs, "the resumed run started no job")
}

func TestJobsWaitAtEnd(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		switch turn {
		case 1:
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"a","background":true}`))
		case 2:
			go func() { <-s.started; time.Sleep(20 * time.Millisecond); s.release <- "ok" }()
			return looptest.Text("the tests are running; I will report")
		}
		require.True(t, hasJobEnd(req), "asked again only with the job's end")
		return looptest.Text("the tests passed")
	}}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool()), OnEvent: rec.Record,
		Limits: toolloop.Limits{Jobs: toolloop.JobLimits{WaitAtEnd: true}}}
	res, err := l.Run(context.Background(), user("x"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "the tests passed", res.FinalText)
	assert.Equal(t, 3, res.Turns)
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobOK, res.Jobs[0].Status)
	assert.True(t, res.Jobs[0].Reported)
}

func TestJobsEndWhenTheCallerCancels(t *testing.T) {
	s := newSuite()
	ctx, cancel := context.WithCancel(context.Background())
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		if turn == 1 {
			return looptest.Calls(looptest.Call("c1", "suite", `{"pkg":"a","background":true}`))
		}
		<-s.started
		cancel()
		return nil // waits for the context
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool())}
	res, err := l.Run(ctx, user("x"))
	require.ErrorIs(t, err, context.Canceled)
	looptest.AssertValid(t, res.Messages)
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobCanceled, res.Jobs[0].Status)
	assert.Equal(t, int32(0), s.running.Load())
}

func TestJobIDsFollowTheTranscripts(t *testing.T) {
	s := newSuite()
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		if turn%2 == 1 {
			return looptest.Calls(looptest.Call("c"+string(rune('0'+turn)), "suite", `{"pkg":"a","background":true}`))
		}
		<-s.started
		s.release <- "ok"
		return looptest.Calls(looptest.Call("w"+string(rune('0'+turn)), toolloop.JobWaitName, `{"job":"job_`+string(rune('0'+turn/2))+`"}`))
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, s.tool()), Budget: toolloop.Budget{MaxTurns: 2}}
	res, err := l.Run(context.Background(), user("x"))
	require.ErrorIs(t, err, toolloop.ErrBudget)
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, "job_1", res.Jobs[0].ID)
	// A second run that goes on from the first numbers its jobs after.
	m.turn = 2
	res2, err := l.Run(context.Background(), res.Messages)
	require.ErrorIs(t, err, toolloop.ErrBudget)
	require.Len(t, res2.Jobs, 1)
	assert.Equal(t, "job_2", res2.Jobs[0].ID)
}

func TestAgentToolRunsAsAJob(t *testing.T) {
	child := &toolloop.AgentLoop{Model: looptest.Script(
		looptest.Calls(looptest.Call("k1", "rm", `{}`)),
		looptest.Text("cleaned"),
	), Tools: registry(t, toolloop.NewTool("rm", "removes", func(context.Context, struct{}) (any, error) { return "gone", nil }))}
	agent := toolloop.NewAgentTool("cleaner", "cleans", child)
	agent.Background = true
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		switch turn {
		case 1:
			return looptest.Calls(looptest.Call("c1", "cleaner", `{"task":"clean","background":true}`))
		case 2:
			return looptest.Calls(looptest.Call("w", toolloop.JobWaitName, `{"job":"job_1"}`))
		}
		return looptest.Text("done")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, agent)}
	res, err := l.Run(context.Background(), user("x"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Contains(t, jobEndTold(res), "ended: ok")
	assert.Contains(t, jobEndTold(res), "cleaned")
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobOK, res.Jobs[0].Status)
}

func TestAgentJobThatAsksEndsWithAClearError(t *testing.T) {
	child := &toolloop.AgentLoop{Model: looptest.Script(
		looptest.Calls(looptest.Call("k1", "rm", `{}`)),
	), Tools: registry(t, toolloop.NewTool("rm", "removes", func(context.Context, struct{}) (any, error) { return "gone", nil })),
		PauseForApproval: true, Guard: &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "rm", Tools: []string{"rm"}, Decision: toolloop.Ask}}}}
	agent := toolloop.NewAgentTool("cleaner", "cleans", child)
	agent.Background = true
	m := &stepModel{reply: func(turn int, req *toolloop.Request) *toolloop.Response {
		switch turn {
		case 1:
			return looptest.Calls(looptest.Call("c1", "cleaner", `{"task":"clean","background":true}`))
		case 2:
			return looptest.Calls(looptest.Call("w", toolloop.JobWaitName, `{"job":"job_1"}`))
		}
		return looptest.Text("done")
	}}
	l := &toolloop.AgentLoop{Model: m, Tools: registry(t, agent)}
	res, err := l.Run(context.Background(), user("x"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Contains(t, jobEndTold(res), "a background job cannot wait for")
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobError, res.Jobs[0].Status)
}

// jobEndTold returns the text that told the model a job ended: a user
// message, or a job tool's result, whichever came first.
func jobEndTold(res *toolloop.RunResult) string {
	for _, m := range res.Messages {
		text := m.Text()
		if m.Result != nil {
			text = m.Result.Text()
		}
		if strings.HasPrefix(text, "[Job ") {
			return text
		}
	}
	return ""
}
