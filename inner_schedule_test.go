package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// TestInnerRandomSchedules runs programs that make inner calls (see
// toolloop.Inner) on random schedules, each in a testing/synctest bubble
// (fake time; the bubble fails the test if a goroutine is left blocked).
// A schedule is one or two turns of program calls, each making 0 to 12
// inner calls in random groups, one after another or all at once, to a
// tool that answers, fails, panics, is slow, hangs ignoring its context,
// reports progress, or to a tool that does not exist, or with arguments
// that do not validate; a guard allows, denies, rewrites or asks about
// each, asks settled by an Approver or by pausing the run, its state
// through JSON and a Resume with random decisions (several rounds);
// random MaxConcurrency, MaxCallsPerTurn, Budget.MaxToolCalls and tool
// timeouts; the caller's cancel and an InterruptNow at random times;
// programs that keep their Inner and call it after they returned, and
// programs that return without waiting for their inner calls. For each
// schedule it checks:
//
//   - the transcript is valid and every call has one result;
//   - every inner call's Run gives a result or an error, never both or
//     neither, and its result carries its ID;
//   - no inner call's tool runs twice, across the run and its resumes,
//     and each process run emits at most one completion event per inner
//     call, under its program's call;
//   - an inner call whose result says it did not run never started its
//     tool (not even after the run returned), and one that says ok ran;
//   - the tools that ran are within Budget.MaxToolCalls, and counted in
//     the program's ResultMeta.InnerCalls and RunResult.ToolCalls;
//   - no goroutine is left once the hanging tools are released.
//
// The default count suits CI under -race (about a second); set
// TOOLLOOP_SCHEDULES to run thousands, and TOOLLOOP_SCHEDULE_SEED to
// replay a seed.
func TestInnerRandomSchedules(t *testing.T) {
	n, seed := scheduleRun(t, 60, 200)
	st := map[string]int{}
	for i := range n {
		p := newInnerPlan(rand.New(rand.NewPCG(seed, uint64(i))), seed, i)
		synctest.Test(t, func(t *testing.T) { (&innerRun{plan: p, stats: st}).run(t) })
		if t.Failed() {
			return
		}
	}
	keys := slices.Sorted(maps.Keys(st))
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, st[k])
	}
	t.Logf("%d schedules:%s", n, b.String())
}

// The plan of a schedule, drawn before its bubble starts.

type innerPlan struct {
	seed        uint64
	index       int
	concurrency int
	perTurn     int           // Limits.MaxCallsPerTurn; 0: none
	budget      int           // Budget.MaxToolCalls; 0: none
	timeout     time.Duration // work's
	progTimeout time.Duration // prog's
	approver    bool          // asks go to an Approver; otherwise the run pauses
	turns       [][]string
	progs       map[string]*innerProg // by the program's call ID
	cancelAt    time.Duration         // 0: never
	interruptAt time.Duration         // 0: never
}

// innerProg is what one program does: its inner calls, in groups run one
// after another or all at once.
type innerProg struct {
	steps  []innerStep
	groups []innerGroup
	keep   bool // calls its Inner again after it returned
	noWait bool // returns without waiting for its last group
}

type innerGroup struct {
	from, to int
	parallel bool
}

var innerBehaviours = []string{"ok", "error", "panic", "slow", "hang", "progress", "unknown", "invalid"}

func newInnerPlan(r *rand.Rand, seed uint64, index int) *innerPlan {
	p := &innerPlan{seed: seed, concurrency: r.IntN(5), approver: r.IntN(3) == 0,
		timeout: time.Duration(1+r.IntN(5)) * time.Second, progTimeout: time.Hour, progs: map[string]*innerProg{}}
	if r.IntN(4) == 0 {
		p.progTimeout = time.Duration(1+r.IntN(8)) * time.Second
	}
	if r.IntN(3) == 0 {
		p.perTurn = 1 + r.IntN(8)
	}
	if r.IntN(3) == 0 {
		p.budget = 2 + r.IntN(14)
	}
	for k := range 1 + r.IntN(2) {
		var calls []string
		for i := range 1 + r.IntN(2) {
			id := fmt.Sprintf("t%dc%d", k, i)
			if r.IntN(5) == 0 {
				calls = append(calls, `work {"b":"ok","g":"allow"}`)
				continue
			}
			calls = append(calls, `prog {}`)
			pr := &innerProg{keep: r.IntN(6) == 0, noWait: r.IntN(6) == 0}
			for range r.IntN(13) {
				b := innerBehaviours[r.IntN(len(innerBehaviours))]
				g := []string{"allow", "allow", "deny", "modify", "ask", "ask"}[r.IntN(6)]
				name, args := "work", fmt.Sprintf(`{"b":%q,"g":%q,"ms":%d,"a":%v}`, b, g, r.IntN(3000), r.IntN(3) > 0)
				switch b {
				case "unknown":
					name = "nowork"
				case "invalid":
					args = fmt.Sprintf(`{"b":5,"g":%q}`, g)
				}
				pr.steps = append(pr.steps, innerStep{Name: name, Args: json.RawMessage(args)})
			}
			for from := 0; from < len(pr.steps); {
				to := min(from+1+r.IntN(4), len(pr.steps))
				pr.groups = append(pr.groups, innerGroup{from, to, r.IntN(2) == 0})
				from = to
			}
			p.progs[id] = pr
		}
		p.turns = append(p.turns, calls)
	}
	p.index = index
	if r.IntN(5) == 0 {
		p.cancelAt = time.Duration(1+r.IntN(5000)) * time.Millisecond
	}
	if r.IntN(5) == 0 {
		p.interruptAt = time.Duration(1+r.IntN(5000)) * time.Millisecond
	}
	return p
}

func (p *innerPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule %d: concurrency=%d perTurn=%d budget=%d timeout=%v prog timeout=%v approver=%v cancel=%v interrupt=%v",
		p.index, p.concurrency, p.perTurn, p.budget, p.timeout, p.progTimeout, p.approver, p.cancelAt, p.interruptAt)
	for k, calls := range p.turns {
		for i, c := range calls {
			id := fmt.Sprintf("t%dc%d", k, i)
			fmt.Fprintf(&b, "\n  %s %s", id, c)
			if pr := p.progs[id]; pr != nil {
				fmt.Fprintf(&b, " keep=%v noWait=%v groups=%v", pr.keep, pr.noWait, pr.groups)
				for j, s := range pr.steps {
					fmt.Fprintf(&b, "\n    %s/%d %s %s", id, j+1, s.Name, s.Args)
				}
			}
		}
	}
	return b.String()
}

// innerRun is one schedule running in its bubble.
type innerRun struct {
	plan    *innerPlan
	release chan struct{} // hanging tools return when it closes

	mu      sync.Mutex
	phase   int
	events  [][]toolloop.Event         // by phase
	starts  map[string]int             // tool runs of work, by call ID
	began   map[string]int             // the phase each work call started in
	got     map[string][]innerGot      // the results each inner call's Runs gave
	kept    map[string]*toolloop.Inner // by the program's call ID
	progs   atomic.Int32               // programs running
	running atomic.Int32               // work tools running
	late    sync.WaitGroup             // inner calls a program left running
	progRun map[string]int             // runs of each program
	errs    []string                   // what went wrong inside tools
	stats   map[string]int             // what the schedules did, for the log
}

func (s *innerRun) failf(format string, args ...any) {
	s.mu.Lock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

type innerGot struct {
	phase int
	r     *toolloop.ToolResult
}

// work is the inner calls' tool.
type innerWork struct{ s *innerRun }

func (w innerWork) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "work", Timeout: w.s.plan.timeout, InputSchema: json.RawMessage(
		`{"type":"object","properties":{"b":{"type":"string"},"g":{"type":"string"},"ms":{"type":"integer"},"a":{"type":"boolean"}},"required":["b"]}`)}
}

func (w innerWork) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	s := w.s
	s.mu.Lock()
	s.starts[call.ID]++
	s.began[call.ID] = s.phase
	s.mu.Unlock()
	s.running.Add(1)
	defer s.running.Add(-1)
	var in struct {
		B  string
		Ms int
	}
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	d := time.Duration(in.Ms) * time.Millisecond
	switch in.B {
	case "error":
		return nil, errors.New("it failed")
	case "panic":
		panic("work panicked")
	case "slow":
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
	case "hang":
		<-s.release // ignores its context
	case "progress":
		for i := range 3 {
			call.ReportProgress(toolloop.Progress{Message: "step", Done: float64(i), Total: 3})
			call.ReportPartial("line\n")
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(d / 3):
			}
		}
	}
	return &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent("worked " + in.B)}}, nil
}

// prog is the program tool: it makes the inner calls its plan lists.
type innerProgTool struct{ s *innerRun }

func (pt innerProgTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "prog", Timeout: pt.s.plan.progTimeout, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (pt innerProgTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	s := pt.s
	pr := s.plan.progs[call.ID]
	in := call.Inner()
	if in == nil || pr == nil {
		s.failf("%s: no Inner (%v) or no plan", call.ID, in == nil)
		return nil, errors.New("no inner calls")
	}
	s.mu.Lock()
	s.progRun[call.ID]++
	s.progs.Add(1)
	defer s.progs.Add(-1)
	if pr.keep {
		s.kept[call.ID] = in
	}
	s.mu.Unlock()
	ics := make([]*toolloop.InnerCall, len(pr.steps))
	for i, st := range pr.steps {
		ics[i] = in.Prepare(st.Name, st.Args)
		if want := fmt.Sprintf("%s/%d", call.ID, i+1); ics[i].ID() != want {
			s.failf("inner call %d of %s has ID %s", i+1, call.ID, ics[i].ID())
		}
	}
	errs := make([]error, len(ics))
	do := func(i int) {
		r, err := ics[i].Run(ctx)
		errs[i] = err
		s.mu.Lock()
		defer s.mu.Unlock()
		id := ics[i].ID()
		switch {
		case (r == nil) == (err == nil):
			s.errs = append(s.errs, fmt.Sprintf("%s: Run gave result %v and error %v", id, r, err))
		case err != nil:
			if !errors.Is(err, toolloop.ErrPaused) && !innerLimitStop(err) {
				s.errs = append(s.errs, fmt.Sprintf("%s: Run failed: %v", id, err))
			}
		default:
			s.got[id] = append(s.got[id], innerGot{s.phase, r})
			if r.CallID != id {
				s.errs = append(s.errs, fmt.Sprintf("%s: its result is %s's", id, r.CallID))
			}
		}
	}
	for gi, g := range pr.groups {
		last := gi == len(pr.groups)-1
		if last && pr.noWait {
			for i := g.from; i < g.to; i++ {
				s.late.Go(func() { do(i) })
			}
			return &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent("did not wait")}}, nil
		}
		if g.parallel {
			var wg sync.WaitGroup
			for i := g.from; i < g.to; i++ {
				wg.Go(func() { do(i) })
			}
			wg.Wait()
		} else {
			for i := g.from; i < g.to && errs[max(i-1, g.from)] == nil; i++ {
				do(i)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	}
	return &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent(fmt.Sprintf("made %d calls", len(ics)))}}, nil
}

// model answers turn k (counted by the assistant messages of the
// request) with the plan's calls, then with a final answer.
type innerModel struct{ p *innerPlan }

func (m innerModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	k := 0
	for _, msg := range req.Messages {
		if msg.Role == toolloop.RoleAssistant {
			k++
		}
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(20 * time.Millisecond):
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

// innerArgs reads the guard's and approver's fields of a call.
func innerArgs(call *toolloop.Call) (g string, approve bool) {
	var a struct {
		G string
		A bool
	}
	_ = json.Unmarshal(call.Arguments, &a)
	return a.G, a.A
}

func (s *innerRun) run(t *testing.T) {
	p := s.plan
	s.release = make(chan struct{})
	s.events = [][]toolloop.Event{nil}
	s.starts, s.began, s.got = map[string]int{}, map[string]int{}, map[string][]innerGot{}
	s.kept, s.progRun = map[string]*toolloop.Inner{}, map[string]int{}
	reg := registry(t, innerWork{s}, innerProgTool{s})
	l := &toolloop.AgentLoop{Model: innerModel{p}, Tools: reg,
		Limits: toolloop.Limits{MaxConcurrency: p.concurrency, MaxCallsPerTurn: p.perTurn},
		Guard: toolloop.GuardFunc(func(_ context.Context, call *toolloop.Call) toolloop.Verdict {
			switch g, _ := innerArgs(call); g {
			case "deny":
				return toolloop.Verdict{Decision: toolloop.Deny, Reason: "no"}
			case "modify":
				args := strings.Replace(string(call.Arguments), `"modify"`, `"modified"`, 1)
				return toolloop.Verdict{Decision: toolloop.Modify, Arguments: json.RawMessage(args), Reason: "rewritten"}
			case "ask":
				return toolloop.Verdict{Decision: toolloop.Ask, Reason: "asks"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		}),
		OnEvent: func(e toolloop.Event) {
			s.mu.Lock()
			s.events[s.phase] = append(s.events[s.phase], e)
			s.mu.Unlock()
		}}
	l.Budget.MaxToolCalls = p.budget
	if p.approver {
		l.Approver = toolloop.ApproverFunc(func(_ context.Context, call *toolloop.Call, _ string) (toolloop.Approval, error) {
			_, a := innerArgs(call)
			return toolloop.Approval{Approved: a}, nil
		})
	} else {
		l.PauseForApproval = true
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inbox := &toolloop.Inbox{}
	ctx = toolloop.WithInbox(ctx, inbox)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if p.cancelAt > 0 {
		wg.Go(func() {
			select {
			case <-time.After(p.cancelAt):
				cancel()
			case <-stop:
			}
		})
	}
	if p.interruptAt > 0 {
		wg.Go(func() {
			select {
			case <-time.After(p.interruptAt):
				inbox.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow})
			case <-stop:
			}
		})
	}

	decide := rand.New(rand.NewPCG(p.seed, uint64(p.index)<<8|7))
	var results []*toolloop.RunResult
	res, err := l.Run(ctx, user("go"))
	results = append(results, res)
	for round := 0; errors.Is(err, toolloop.ErrPaused) && round < 30; round++ {
		b, merr := json.Marshal(res.Paused)
		if merr != nil {
			t.Fatalf("marshal: %v", merr)
		}
		var st toolloop.PauseState
		if merr := json.Unmarshal(b, &st); merr != nil {
			t.Fatalf("unmarshal: %v", merr)
		}
		decisions := map[string]toolloop.Approval{}
		for _, pc := range st.Pending {
			decisions[pc.CallID] = toolloop.Approval{Approved: decide.IntN(3) > 0}
		}
		s.mu.Lock()
		s.phase++
		s.events = append(s.events, nil)
		s.mu.Unlock()
		res, err = l.Resume(ctx, &st, decisions)
		results = append(results, res)
	}
	close(stop)
	wg.Wait()
	// Let the calls left behind end, and see whether anything starts late.
	close(s.release)
	time.Sleep(time.Hour)
	synctest.Wait()
	for s.running.Load() > 0 || s.progs.Load() > 0 {
		time.Sleep(time.Hour)
	}
	s.late.Wait()
	// Kept Inners, called after their calls ended: answered as not run
	// (or told the program paused), never run.
	for id, in := range s.kept {
		ic := in.Prepare("work", json.RawMessage(`{"b":"ok","g":"allow"}`))
		r, kerr := ic.Run(context.Background())
		switch {
		case kerr != nil && r == nil && (errors.Is(kerr, toolloop.ErrPaused) || innerLimitStop(kerr)):
		case kerr == nil && r != nil && r.Error != nil && r.Error.Kind == toolloop.KindCanceled && innerSaysNotRun(r):
		default:
			t.Errorf("%s: a kept Inner's call after its call ended: %v %v", id, r, kerr)
		}
		s.mu.Lock()
		if r != nil {
			s.got[ic.ID()] = append(s.got[ic.ID()], innerGot{s.phase, r})
		}
		s.mu.Unlock()
	}
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	s.check(t, results, err)
	if t.Failed() {
		t.Logf("plan: %s", p)
	}
}

// innerLimitStop reports whether err is the stop of a program past
// Limits.MaxCallsPerTurn or Budget.MaxToolCalls (see InnerCall.Run).
func innerLimitStop(err error) bool {
	var te *toolloop.ToolError
	return errors.As(err, &te) && te.Kind == toolloop.KindDenied && strings.HasPrefix(te.Message, "the program was stopped at its call ")
}

// innerLast is the result of the last phase.
func innerLast(results []*toolloop.RunResult) *toolloop.RunResult { return results[len(results)-1] }

// innerSaysNotRun reports whether an inner call's result tells the program
// its tool did not run.
func innerSaysNotRun(r *toolloop.ToolResult) bool {
	return steerSaysNotRun(r)
}

func (s *innerRun) check(t *testing.T, results []*toolloop.RunResult, err error) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats["resumes"] += len(results) - 1
	s.stats["tool runs"] += len(s.starts)
	for _, gots := range s.got {
		for _, g := range gots {
			k := "results ok"
			if g.r.Error != nil {
				k = "results " + string(g.r.Error.Kind)
			}
			s.stats[k]++
		}
	}
	for _, r := range looptest.Results(innerLast(results).Messages) {
		if r.Name == "prog" && r.Error != nil {
			s.stats["programs "+string(r.Error.Kind)]++
		}
	}
	for _, e := range s.errs {
		t.Error(e)
	}
	msgs := innerLast(results).Messages
	if errors.Is(err, toolloop.ErrPaused) { // it ends with the turn that waits
		msgs = msgs[:len(msgs)-1]
	}
	looptest.AssertValid(t, msgs)

	// Each tool ran at most once per call ID, across every phase.
	for id, n := range s.starts {
		if n > 1 {
			t.Errorf("%s: its tool ran %d times", id, n)
		}
	}
	// Completion events: at most one per inner call per phase, under its
	// program's call; nothing after run.end.
	// Across phases, the completions that say the call ran (a call not
	// run in one may run in a later one).
	completed := map[string]int{}
	for phase, evs := range s.events {
		complete := map[string]int{}
		ended := false
		for _, e := range evs {
			if ended {
				t.Errorf("phase %d: event %s of %s after run.end", phase, e.Type, e.CallID)
			}
			ended = e.Type == toolloop.EventRunEnd
			parent, _, inner := strings.Cut(e.CallID, "/")
			if !inner {
				continue
			}
			if complete[e.CallID] > 0 {
				t.Errorf("phase %d: event %s of %s after its completion", phase, e.Type, e.CallID)
			}
			if e.Type != toolloop.EventComplete {
				continue
			}
			complete[e.CallID]++
			if e.Result != nil && !innerSaysNotRun(e.Result) {
				completed[e.CallID]++
			}
			if e.ParentCallID != parent {
				t.Errorf("phase %d: completion of %s under %q", phase, e.CallID, e.ParentCallID)
			}
		}
		for id, n := range complete {
			if n > 1 {
				t.Errorf("phase %d: %d completion events of %s", phase, n, id)
			}
		}
	}
	for id, n := range completed {
		if n > 1 {
			t.Errorf("%s: %d completion events say it ran (its tool ran %d times)", id, n, s.starts[id])
		}
	}
	// What the programs were told agrees with what ran.
	for id, gots := range s.got {
		for _, g := range gots {
			r := g.r
			switch {
			case innerSaysNotRun(r) && s.starts[id] > 0 && s.began[id] == g.phase:
				t.Errorf("%s: its result in phase %d says it did not run (%s: %s), but its tool ran", id, g.phase, r.Error.Kind, r.Error.Message)
			case r.Status == toolloop.StatusOK && r.Name == "work" && s.starts[id] != 1:
				t.Errorf("%s: its result says ok, but its tool ran %d times", id, s.starts[id])
			default:
				continue
			}
			for _, g := range gots {
				t.Logf("%s phase %d: %s %s", id, g.phase, g.r.Status, g.r.Text())
			}
		}
		if r := gots[len(gots)-1].r; r.Error != nil && strings.Contains(r.Error.Message, "another path") {
			t.Errorf("%s: diverged: %s", id, r.Error.Message)
		}
	}
	// The tools that ran are within the budget and counted.
	ran := 0
	for range s.starts {
		ran++
	}
	ran += len(s.progRun)
	if b := s.plan.budget; b > 0 && ran > b {
		t.Errorf("%d tools ran (%v, programs %v); the budget was %d", ran, s.starts, s.progRun, b)
	}
	for _, r := range results {
		if r != nil && r.ToolCalls < 0 {
			t.Errorf("ToolCalls %d", r.ToolCalls)
		}
	}
	if n := innerLast(results).ToolCalls; n < ran && !errors.Is(err, toolloop.ErrPaused) {
		t.Errorf("RunResult.ToolCalls is %d, but %d tools ran (%v, programs %v)", n, ran, s.starts, s.progRun)
	}
	for id, r := range looptest.Results(msgs) {
		if r.Name != "prog" {
			continue
		}
		inner := 0
		for cid := range s.starts {
			if strings.HasPrefix(cid, id+"/") {
				inner++
			}
		}
		if r.Meta.InnerCalls > len(s.plan.progs[id].steps) {
			t.Errorf("%s: %d inner calls counted, %d made", id, r.Meta.InnerCalls, len(s.plan.progs[id].steps))
		}
		if r.Meta.InnerCalls < inner {
			t.Errorf("%s: %d inner calls counted, but %d inner tools ran: %s", id, r.Meta.InnerCalls, inner, r.Text())
		}
	}
}
