package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// TestJobRandomSchedules runs background jobs on random schedules, each
// in a testing/synctest bubble (fake time; the bubble fails the test if
// a goroutine is left blocked): random turns that start jobs (quick or
// slow, failing or not, some ignoring their context), call job_wait,
// job_cancel, job_output and job_list on random jobs, and ask for
// approval (PauseForApproval, then Resume); meanwhile steering messages
// and interrupts arrive, and sometimes the caller cancels. For every
// schedule it checks:
//
//   - every call has exactly one result (looptest.AssertValid);
//   - each job's end is told to the model at most once (a user message
//     with OriginJob, or a job_wait or job_cancel result), and exactly
//     once when RunResult.Jobs says Reported, unless it was told through
//     a pause whose resumed run ended before delivering it;
//   - every job.started has one job.finished, and no job.output comes
//     after it; no event comes after run.end;
//   - no job message is returned undelivered, and every job a run
//     started is in its RunResult.Jobs, ended;
//   - a job canceled or ended with its run had its context ended.
func TestJobRandomSchedules(t *testing.T) {
	n, seed := scheduleRun(t, 100, 300)
	for i := range n {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		p := newJobPlan(r)
		synctest.Test(t, func(t *testing.T) { p.run(t) })
		if t.Failed() {
			t.Logf("seed %d schedule %d: %+v", seed, i, p)
			return
		}
	}
}

type jobPlan struct {
	turns     [][]string // per turn, the calls' arguments, as "tool args"
	max       int
	waitAtEnd bool
	maxDur    time.Duration
	steer     []time.Duration // when messages are sent
	interrupt time.Duration   // 0: none
	intr      toolloop.Interrupt
	cancelAt  time.Duration // 0: none
}

func newJobPlan(r *rand.Rand) *jobPlan {
	p := &jobPlan{max: 1 + r.IntN(3), waitAtEnd: r.IntN(2) == 0, maxDur: time.Duration(100+r.IntN(3000)) * time.Millisecond}
	nj := 0
	for range 1 + r.IntN(5) {
		var calls []string
		for range 1 + r.IntN(3) {
			switch k := r.IntN(10); {
			case k < 4:
				nj++
				calls = append(calls, fmt.Sprintf(`job {"ms":%d,"fail":%v,"stubborn":%v,"background":true}`,
					r.IntN(2000), r.IntN(4) == 0, r.IntN(6) == 0))
			case k == 4:
				calls = append(calls, fmt.Sprintf(`%s {"job":"job_%d","timeout_seconds":%d}`, toolloop.JobWaitName, 1+r.IntN(max(nj, 1)), 1+r.IntN(2)))
			case k == 5:
				calls = append(calls, fmt.Sprintf(`%s {"job":"job_%d"}`, toolloop.JobCancelName, 1+r.IntN(max(nj, 1))))
			case k == 6:
				calls = append(calls, fmt.Sprintf(`%s {"job":"job_%d"}`, toolloop.JobOutputName, 1+r.IntN(max(nj, 1))))
			case k == 7:
				calls = append(calls, toolloop.JobListName+` {}`)
			case k == 8:
				calls = append(calls, `ask {}`)
			default:
				calls = append(calls, `job {"ms":0}`) // in the foreground
			}
		}
		p.turns = append(p.turns, calls)
	}
	for range r.IntN(3) {
		p.steer = append(p.steer, time.Duration(r.IntN(3000))*time.Millisecond)
	}
	if r.IntN(3) == 0 {
		p.interrupt = time.Duration(1+r.IntN(3000)) * time.Millisecond
		modes := []toolloop.InterruptMode{toolloop.InterruptNow, toolloop.InterruptAfterModel, toolloop.InterruptAfterTools}
		p.intr = toolloop.Interrupt{Mode: modes[r.IntN(3)], Continue: r.IntN(3) > 0}
	}
	if r.IntN(6) == 0 {
		p.cancelAt = time.Duration(1+r.IntN(4000)) * time.Millisecond
	}
	return p
}

// jobTool is the schedule's background tool: it prints, sleeps, and ends
// ok or failed; a stubborn one ignores its context.
type schedJobTool struct {
	running  atomic.Int32
	canceled sync.Map // call ID → true once its context ended
}

func (*schedJobTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "job", Background: true, InputSchema: json.RawMessage(
		`{"type":"object","properties":{"ms":{"type":"integer"},"fail":{"type":"boolean"},"stubborn":{"type":"boolean"}},"additionalProperties":false}`)}
}

func (j *schedJobTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in struct {
		Ms             int
		Fail, Stubborn bool
	}
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	j.running.Add(1)
	defer j.running.Add(-1)
	end := time.Now().Add(time.Duration(in.Ms) * time.Millisecond)
	for time.Now().Before(end) {
		call.ReportPartial("tick\n")
		select {
		case <-ctx.Done():
			j.canceled.Store(call.ID, true)
			if !in.Stubborn {
				return nil, ctx.Err()
			}
			time.Sleep(time.Until(end))
		case <-time.After(100 * time.Millisecond):
		}
	}
	if ctx.Err() != nil {
		j.canceled.Store(call.ID, true)
	}
	if in.Fail {
		return nil, errors.New("the suite failed")
	}
	return &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent("passed")}}, nil
}

// schedModel answers turn k (counted by the assistant messages of the
// request) with the plan's calls, then with a final answer.
type schedModel struct{ p *jobPlan }

func (m schedModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	k := 0
	for _, msg := range req.Messages {
		if msg.Role == toolloop.RoleAssistant {
			k++
		}
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(50 * time.Millisecond):
	}
	if k >= len(m.p.turns) {
		return looptest.Text("done"), nil
	}
	var calls []toolloop.ToolCall
	for i, c := range m.p.turns[k] {
		name, args, _ := strings.Cut(c, " ")
		calls = append(calls, looptest.Call(fmt.Sprintf("t%dc%d", k, i), name, args))
	}
	return looptest.Calls(calls...), nil
}

func (p *jobPlan) run(t *testing.T) {
	tool := &schedJobTool{}
	ask := toolloop.NewTool("ask", "asks", func(context.Context, struct{}) (any, error) { return "asked", nil })
	reg := registry(t, tool, ask)
	var (
		mu     sync.Mutex
		events []toolloop.Event
	)
	l := &toolloop.AgentLoop{Model: schedModel{p}, Tools: reg, PauseForApproval: true,
		Guard:  &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "ask", Tools: []string{"ask"}, Decision: toolloop.Ask}}},
		Limits: toolloop.Limits{Jobs: toolloop.JobLimits{Max: p.max, WaitAtEnd: p.waitAtEnd, MaxDuration: p.maxDur, MaxOutputBytes: 256}},
		OnEvent: func(e toolloop.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &toolloop.Inbox{}
	ctx = toolloop.WithInbox(ctx, in)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, d := range p.steer {
		wg.Go(func() {
			select {
			case <-time.After(d):
				in.Send(toolloop.UserMessage("steer"))
			case <-stop:
			}
		})
	}
	if p.interrupt > 0 {
		wg.Go(func() {
			select {
			case <-time.After(p.interrupt):
				in.Interrupt(p.intr)
			case <-stop:
			}
		})
	}
	if p.cancelAt > 0 {
		wg.Go(func() {
			select {
			case <-time.After(p.cancelAt):
				cancel()
			case <-stop:
			}
		})
	}

	var results []*toolloop.RunResult
	res, err := l.Run(ctx, []toolloop.Message{toolloop.UserMessage("go")})
	results = append(results, res)
	for i := 0; errors.Is(err, toolloop.ErrPaused) && i < 10; i++ {
		approve := map[string]toolloop.Approval{}
		for _, pc := range res.Paused.Pending {
			approve[pc.CallID] = toolloop.Approval{Approved: true}
		}
		res, err = l.Resume(ctx, res.Paused, approve)
		results = append(results, res)
	}
	close(stop)
	wg.Wait()
	for tool.running.Load() > 0 { // stubborn tools the loop let go
		time.Sleep(100 * time.Millisecond)
	}
	synctest.Wait()
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	looptest.AssertValid(t, res.Messages)

	mu.Lock()
	defer mu.Unlock()
	// Events: one job.finished per job.started, no output after it, and
	// nothing after a run.end but the next phase's start.
	started, finished := map[string]int{}, map[string]int{}
	ended := false
	for _, e := range events {
		switch e.Type {
		case toolloop.EventRunStart, toolloop.EventRunResumed:
			ended = false
			continue
		case toolloop.EventRunEnd:
			ended = true
			continue
		}
		if ended {
			t.Errorf("event %s after run.end: %+v", e.Type, e.Job)
		}
		switch e.Type {
		case toolloop.EventJobStarted:
			started[e.CallID]++
		case toolloop.EventJobFinished:
			finished[e.CallID]++
			if e.Job == nil || e.Job.Status == toolloop.JobRunning {
				t.Errorf("job.finished of %s says it still runs", e.CallID)
			}
		case toolloop.EventJobOutput:
			if finished[e.CallID] > 0 {
				t.Errorf("job.output of %s after its job.finished", e.CallID)
			}
		}
	}
	for id, n := range started {
		if n != 1 || finished[id] != 1 {
			t.Errorf("job of call %s: %d job.started, %d job.finished", id, n, finished[id])
		}
	}
	for id := range finished {
		if started[id] == 0 {
			t.Errorf("job.finished of %s without job.started", id)
		}
	}

	// Every job's end is told at most once, and once when reported.
	told := map[string]int{}
	for _, m := range res.Messages {
		text := m.Text()
		if m.Role == toolloop.RoleTool && m.Result != nil {
			if m.Result.Name != toolloop.JobWaitName && m.Result.Name != toolloop.JobCancelName {
				continue
			}
			text = m.Result.Text()
		} else if m.Role != toolloop.RoleUser {
			continue
		}
		for _, line := range strings.Split(text, "\n") {
			if rest, ok := strings.CutPrefix(line, "[Job "); ok {
				id, _, _ := strings.Cut(rest, " ")
				told[id]++
			}
		}
	}
	for id, n := range told {
		if n > 1 {
			t.Errorf("the end of %s was told %d times", id, n)
			for _, m := range res.Messages {
				if strings.Contains(m.Text(), id) || m.Result != nil && strings.Contains(m.Result.Text(), id) {
					t.Logf("%s %q %v", m.Role, m.Text(), m.Result)
				}
			}
		}
	}
	listed := 0
	for phase, r := range results {
		if r == nil {
			continue
		}
		for _, m := range r.Undelivered {
			if strings.HasPrefix(m.Text(), "[Job ") {
				t.Errorf("phase %d: a job's end returned undelivered: %q", phase, m.Text())
			}
		}
		for _, j := range r.Jobs {
			if j.Status == toolloop.JobRunning {
				t.Errorf("phase %d: %s still running when its run returned", phase, j.ID)
			}
			if j.Reported && err == nil && told[j.ID] != 1 {
				t.Errorf("phase %d: %s reported, but told %d times", phase, j.ID, told[j.ID])
			}
			if !j.Reported && told[j.ID] != 0 {
				t.Errorf("phase %d: %s not reported, but told %d times", phase, j.ID, told[j.ID])
			}
			if j.Status == toolloop.JobCanceled {
				if _, ok := tool.canceled.Load(j.CallID); !ok && !strings.Contains(j.Reason, "did not stop") {
					t.Errorf("phase %d: %s canceled (%s) but its tool's context did not end", phase, j.ID, j.Reason)
				}
			}
		}
		listed += len(r.Jobs)
	}
	if listed != len(started) {
		t.Errorf("%d jobs started, %d listed in the runs' results", len(started), listed)
	}
}
