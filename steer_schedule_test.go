package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// TestSteerRandomSchedules steers runs at random points, each schedule in
// a testing/synctest bubble (fake time, so slow tools, approvers, models
// and readers cost nothing, and the bubble fails the test if a goroutine
// is left blocked when the schedule ends). A schedule is a run of random
// turns of parallel calls (MaxConcurrency 1 to 4) to slow or stubborn
// tools, exclusive tools and a sub-agent (AgentTool), some asking for
// approval (an Approver that takes time, or PauseForApproval and a Resume
// that goes on, carrying PauseState.Queued), with a streaming model that
// takes time, read through Run or RunStream (with a slow reader); into
// it, messages (Send, FollowUp) and interrupts (every mode, with and
// without Continue) arrive at random times and at random events, and
// sometimes the caller cancels. For each schedule it checks:
//
//   - every message sent is in exactly one place, once: delivered (a user
//     message of the transcript, with one user.message event of its
//     origin), returned (RunResult.Undelivered), kept (the final
//     PauseState.Queued) or left in the inbox (sent after the run ended);
//     steering messages and follow-ups each keep the order they were sent
//     in, and a follow-up is delivered only when the run would otherwise
//     have ended (or an interrupt goes on);
//   - every call has exactly one result and one completion event; a tool
//     whose result says it did not run never ran (not even after the run
//     returned), and one whose result says it ran did run;
//   - the transcript is valid (looptest.AssertValid) and valid for each
//     provider's rules: no assistant message without content or calls, an
//     interrupted assistant message has no calls, and every request the
//     models were sent ends with a user or tool message (Claude 4.6 and
//     later refuse a request that ends with an assistant message);
//   - every request of the top run is what its transcript held then;
//   - the run.interrupted events are the interrupts that acted: each is
//     the merge of consecutive interrupts the inbox accepted in that run,
//     the run ends with ErrInterrupted exactly when the last says not to
//     go on, interrupts that did not act only ever trail, and a result
//     that says the run was interrupted comes with an event that says so.
//
// Two things keep fake time
// moving: a call waiting for the Approver, or an emitter waiting for a
// stream's reader, waits on a sync.Mutex of the run, which a bubble does
// not count as durably blocked, so an Approver only ever has one call to
// answer, and a slow stream reader yields instead of sleeping.
//
// The default count suits CI under -race (a few seconds); set
// TOOLLOOP_SCHEDULES to run tens of thousands.
func TestSteerRandomSchedules(t *testing.T) {
	n, seed := scheduleRun(t, 150, 600)
	st := map[string]int{}
	for i := range n {
		p := newSteerPlan(rand.New(rand.NewPCG(seed, uint64(i))))
		name := fmt.Sprintf("seed %d schedule %d", seed, i)
		synctest.Test(t, func(t *testing.T) {
			(&steerRun{plan: p, name: name, stats: st}).run(t)
		})
		if t.Failed() {
			t.Logf("%s: plan %s", name, p)
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

type steerPlan struct {
	concurrency int
	approval    int // 0 none, 1 an Approver, 2 PauseForApproval
	stream      bool
	generate    bool // the model does not stream
	reader      int  // how many times a stream reader yields per event
	toolTimeout time.Duration
	turns       []steerTurn           // the top model's turns, by its call count
	children    map[string]steerChild // a sub-agent's plan, by the parent's call ID
	actions     []steerAction
	cancelAt    time.Duration // the caller cancels then; 0: never
	pauses      []steerPause  // what the program does at each pause
}

type steerTurn struct {
	chunks []string
	delays []time.Duration // before each chunk, and before the response
	calls  []steerCall
}

type steerCall struct {
	id, tool   string
	ms         int // the tool's time
	stubborn   bool
	ask        bool
	approve    bool
	approverMS int
}

type steerChild struct {
	turns []steerTurn
}

type steerAction struct {
	at      time.Duration // when the driver acts; or
	onEvent int           // >0: at the n-th event of the top run
	kind    int           // 0 send, 1 follow-up, 2 interrupt
	count   int           // messages sent at once
	intr    toolloop.Interrupt
}

type steerPause struct {
	abandon   bool // the program never resumes
	roundTrip bool // the state goes through JSON
	queue     int  // 0 none; 1 a steering message, 2 a follow-up added to Queued
	wait      time.Duration
}

func (p *steerPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "conc=%d approval=%d stream=%v generate=%v reader=%v timeout=%v cancel=%v\n",
		p.concurrency, p.approval, p.stream, p.generate, p.reader, p.toolTimeout, p.cancelAt)
	for i, tr := range p.turns {
		fmt.Fprintf(&b, "  turn %d: chunks=%q delays=%v calls=%+v\n", i+1, tr.chunks, tr.delays, tr.calls)
	}
	for _, a := range p.actions {
		fmt.Fprintf(&b, "  action %+v\n", a)
	}
	fmt.Fprintf(&b, "  pauses %+v", p.pauses)
	return b.String()
}

func randDelays(r *rand.Rand, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(r.IntN(4000)) * time.Microsecond
	}
	return out
}

func randChunks(r *rand.Rand, prefix string, min int) []string {
	n := min + r.IntN(3)
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + "." + strconv.Itoa(i) + " "
	}
	return out
}

func newSteerPlan(r *rand.Rand) *steerPlan {
	p := &steerPlan{
		concurrency: 1 + r.IntN(4),
		approval:    r.IntN(3),
		stream:      r.IntN(3) == 0,
		generate:    r.IntN(6) == 0,
		children:    map[string]steerChild{},
	}
	if p.stream && r.IntN(2) == 0 {
		p.reader = r.IntN(20)
	}
	if r.IntN(4) == 0 {
		p.toolTimeout = time.Duration(2+r.IntN(8)) * time.Millisecond
	}
	if r.IntN(10) == 0 {
		p.cancelAt = time.Duration(r.IntN(30000)) * time.Microsecond
	}
	nturns := r.IntN(5)
	for k := 1; k <= nturns; k++ {
		tr := steerTurn{}
		if r.IntN(2) == 0 {
			tr.chunks = randChunks(r, "m"+strconv.Itoa(k), 1)
		}
		tr.delays = randDelays(r, len(tr.chunks)+1)
		for i := range 1 + r.IntN(4) {
			c := steerCall{id: fmt.Sprintf("t%dc%d", k, i), tool: "work", ms: r.IntN(8), stubborn: r.IntN(3) == 0}
			switch r.IntN(6) {
			case 0:
				c.tool = "excl"
			case 1:
				c.tool = "agent"
				ch := steerChild{}
				for range r.IntN(3) {
					ct := steerTurn{chunks: randChunks(r, "child", 0)}
					ct.delays = randDelays(r, len(ct.chunks)+1)
					for j := range 1 + r.IntN(2) {
						ct.calls = append(ct.calls, steerCall{
							id: fmt.Sprintf("%s-%d-%d", c.id, len(ch.turns), j), tool: "work", ms: r.IntN(6), stubborn: r.IntN(3) == 0})
					}
					ch.turns = append(ch.turns, ct)
				}
				p.children[c.id] = ch
			}
			// The Approver sees one call at a time, behind a sync.Mutex
			// of the run (runState.approveMu): a call waiting there is not
			// durably blocked, so fake time would stop while an approver
			// takes time. With an Approver, a turn has at most one call
			// that asks, and the approver does not outlive its call.
			if c.tool != "agent" && p.approval > 0 && r.IntN(2) == 0 &&
				(p.approval == 2 || !slices.ContainsFunc(tr.calls, func(c steerCall) bool { return c.ask })) {
				c.ask, c.approve = true, r.IntN(4) != 0
				if p.approval == 1 {
					c.approverMS = r.IntN(5)
				}
			}
			tr.calls = append(tr.calls, c)
		}
		p.turns = append(p.turns, tr)
	}
	modes := []toolloop.InterruptMode{"", toolloop.InterruptNow, toolloop.InterruptAfterModel, toolloop.InterruptAfterTools}
	for range r.IntN(7) {
		a := steerAction{kind: r.IntN(3), count: 1 + r.IntN(2)}
		if r.IntN(3) == 0 {
			a.onEvent = 1 + r.IntN(30)
		} else {
			a.at = time.Duration(r.IntN(25000)) * time.Microsecond
		}
		if a.kind == 2 {
			a.intr = toolloop.Interrupt{Mode: modes[r.IntN(len(modes))], Continue: r.IntN(2) == 0}
		}
		p.actions = append(p.actions, a)
	}
	for range 6 {
		p.pauses = append(p.pauses, steerPause{
			abandon: r.IntN(8) == 0, roundTrip: r.IntN(2) == 0, queue: r.IntN(4) % 3,
			wait: time.Duration(r.IntN(5000)) * time.Microsecond,
		})
	}
	return p
}

// steerRun is one schedule running in its bubble.
type steerRun struct {
	plan  *steerPlan
	name  string
	stats map[string]int // what the schedules did, for the log
	in    toolloop.Inbox

	// actMu orders every use of the inbox, so that the order recorded is
	// the order the inbox saw.
	actMu    sync.Mutex
	seq      int
	sent     map[string]steerSent
	accepted []steerAccepted // the interrupts a run took
	phase    int             // the runs (Run, then each Resume) that have returned

	evMu     sync.Mutex
	events   []toolloop.Event
	topSeen  int
	answered map[string]bool // calls whose completion event came

	mu      sync.Mutex
	started map[string]int // tool bodies (and sub-agents) that started, by call ID
	late    []string       // started after their completion event
	reqs    [][]toolloop.Message
	turn    int // the top model's calls
}

type steerSent struct {
	origin toolloop.Origin
	seq    int
	group  byte // s, f, or q and Q (added to a PauseState, steering and follow-up)
}

type steerAccepted struct {
	phase int
	intr  toolloop.Interrupt
}

// act performs one of the plan's actions on the inbox.
func (s *steerRun) act(a steerAction) {
	s.actMu.Lock()
	defer s.actMu.Unlock()
	switch a.kind {
	case 0, 1:
		msgs := make([]toolloop.Message, a.count)
		for i := range msgs {
			s.seq++
			origin, group := toolloop.OriginSteer, byte('s')
			if a.kind == 1 {
				origin, group = toolloop.OriginFollowUp, 'f'
			}
			label := string(group) + strconv.Itoa(s.seq)
			s.sent[label] = steerSent{origin: origin, seq: s.seq, group: group}
			msgs[i] = toolloop.UserMessage(label)
		}
		if a.kind == 0 {
			s.in.Send(msgs...)
		} else {
			s.in.FollowUp(msgs...)
		}
	case 2:
		if s.in.Interrupt(a.intr) {
			i := a.intr
			if i.Mode == "" {
				i.Mode = toolloop.InterruptNow
			}
			s.accepted = append(s.accepted, steerAccepted{phase: s.phase, intr: i})
		}
	}
}

// onTopEvent acts on the actions due at the n-th event of the top run.
func (s *steerRun) onTopEvent(n int) {
	for _, a := range s.plan.actions {
		if a.onEvent == n {
			s.act(a)
		}
	}
}

func (s *steerRun) record(e toolloop.Event) {
	s.evMu.Lock()
	s.events = append(s.events, e)
	n := 0
	if e.ParentRunID == "" {
		s.topSeen++
		n = s.topSeen
	}
	if e.Type == toolloop.EventComplete {
		s.answered[e.CallID] = true
	}
	s.evMu.Unlock()
	if n > 0 && !s.plan.stream {
		s.onTopEvent(n)
	}
}

func (s *steerRun) toolStarted(id string) {
	s.evMu.Lock()
	late := s.answered[id]
	s.evMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started[id]++
	if late {
		s.late = append(s.late, id)
	}
}

// sleep waits d, or until ctx is done unless stubborn.
func sleep(ctx context.Context, d time.Duration, stubborn bool) error {
	if stubborn {
		time.Sleep(d)
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// steerModel streams the plan's turns, taking time between chunks; the
// top model answers by its count of calls, a sub-agent's by its task and
// the turns of its transcript.
type steerModel struct {
	s     *steerRun
	child bool
}

type steerGenerator struct{ m *steerModel }

func (g steerGenerator) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	var resp *toolloop.Response
	for ch, err := range g.m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		resp = ch.Response
	}
	return resp, nil
}

func (m *steerModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	return steerGenerator{m}.Generate(ctx, req)
}

func (m *steerModel) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	s := m.s
	var tr steerTurn
	var label string
	s.mu.Lock()
	s.reqs = append(s.reqs, slices.Clone(req.Messages))
	if m.child {
		task := req.Messages[0].Text()
		k := 0
		for _, msg := range req.Messages {
			if msg.Role == toolloop.RoleAssistant {
				k++
			}
		}
		if turns := s.plan.children[task].turns; k < len(turns) {
			tr = turns[k]
		}
		label = task + " answer " + strconv.Itoa(k)
	} else {
		s.turn++
		if s.turn <= len(s.plan.turns) {
			tr = s.plan.turns[s.turn-1]
		}
		label = "answer " + strconv.Itoa(s.turn)
	}
	s.mu.Unlock()
	if len(tr.calls) == 0 && len(tr.chunks) == 0 {
		tr.chunks = []string{label + " ", "done"}
		tr.delays = []time.Duration{time.Millisecond, time.Millisecond, 0}
	}
	return func(yield func(toolloop.Chunk, error) bool) {
		var text strings.Builder
		for i, c := range tr.chunks {
			if err := sleep(ctx, tr.delays[i], false); err != nil {
				yield(toolloop.Chunk{}, err)
				return
			}
			text.WriteString(c)
			if !yield(toolloop.Chunk{Text: c}, nil) {
				return
			}
		}
		if err := sleep(ctx, tr.delays[len(tr.delays)-1], false); err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		msg := toolloop.Message{Role: toolloop.RoleAssistant}
		if text.Len() > 0 {
			msg.Content = []toolloop.Content{toolloop.TextContent(text.String())}
		}
		for _, c := range tr.calls {
			args := fmt.Sprintf(`{"id":%q,"ms":%d,"stubborn":%v}`, c.id, c.ms, c.stubborn)
			if c.tool == "agent" {
				args = fmt.Sprintf(`{"task":%q}`, c.id)
			}
			msg.ToolCalls = append(msg.ToolCalls, toolloop.ToolCall{ID: c.id, Name: c.tool, Arguments: json.RawMessage(args)})
		}
		yield(toolloop.Chunk{Response: &toolloop.Response{Message: msg}}, nil)
	}
}

type workIn struct {
	ID       string `json:"id"`
	MS       int    `json:"ms"`
	Stubborn bool   `json:"stubborn"`
}

// calls indexes the plan's calls (the top run's and the sub-agents') by ID.
func (p *steerPlan) calls() map[string]steerCall {
	out := map[string]steerCall{}
	for _, tr := range p.turns {
		for _, c := range tr.calls {
			out[c.id] = c
		}
	}
	for _, ch := range p.children {
		for _, tr := range ch.turns {
			for _, c := range tr.calls {
				out[c.id] = c
			}
		}
	}
	return out
}

func (s *steerRun) loop() *toolloop.AgentLoop {
	p := s.plan
	plan := p.calls()
	work := func(ctx context.Context, in workIn) (any, error) {
		s.toolStarted(in.ID)
		if err := sleep(ctx, time.Duration(in.MS)*time.Millisecond, in.Stubborn); err != nil {
			return nil, err
		}
		return "worked " + in.ID, nil
	}
	excl := toolloop.NewTool("excl", "works alone", work)
	excl.Exclusive = true
	var childTools toolloop.ToolRegistry
	childTools.MustRegister(toolloop.NewTool("work", "works", work))
	var childModel toolloop.Model = &steerModel{s: s, child: true}
	if p.generate {
		childModel = steerGenerator{&steerModel{s: s, child: true}}
	}
	agent := toolloop.NewAgentTool("agent", "a sub-agent", &toolloop.AgentLoop{
		Model: childModel, Tools: &childTools, Limits: toolloop.Limits{MaxConcurrency: 2},
	})
	agent.Prompt = func(c *toolloop.Call) ([]toolloop.Message, error) {
		s.toolStarted(c.ID)
		return []toolloop.Message{toolloop.UserMessage(c.ID)}, nil
	}
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("work", "works", work), excl, agent)
	var model toolloop.Model = &steerModel{s: s}
	if p.generate {
		model = steerGenerator{&steerModel{s: s}}
	}
	l := &toolloop.AgentLoop{
		Model: model, Tools: &reg, OnEvent: s.record,
		Limits: toolloop.Limits{MaxConcurrency: p.concurrency, ToolTimeout: p.toolTimeout},
	}
	if p.approval > 0 {
		l.Guard = toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if plan[c.ID].ask {
				return toolloop.Verdict{Decision: toolloop.Ask, Reason: "the plan asks"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		})
	}
	switch p.approval {
	case 1:
		l.Approver = toolloop.ApproverFunc(func(ctx context.Context, c *toolloop.Call, _ string) (toolloop.Approval, error) {
			pc := plan[c.ID]
			_ = sleep(ctx, time.Duration(pc.approverMS)*time.Millisecond, false)
			return toolloop.Approval{Approved: pc.approve, Reason: "the plan says so"}, nil
		})
	case 2:
		l.PauseForApproval = true
	}
	return l
}

type steerPhase struct {
	res *toolloop.RunResult
	err error
}

func (s *steerRun) run(t *testing.T) {
	p := s.plan
	s.sent = map[string]steerSent{}
	s.answered = map[string]bool{}
	s.started = map[string]int{}
	l := s.loop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = toolloop.WithInbox(ctx, &s.in)
	if p.cancelAt > 0 {
		stop := time.AfterFunc(p.cancelAt, cancel)
		defer stop.Stop()
	}
	driverDone := make(chan struct{})
	go func() { // the person at the keyboard
		defer close(driverDone)
		timed := slices.DeleteFunc(slices.Clone(p.actions), func(a steerAction) bool { return a.onEvent > 0 })
		sort.SliceStable(timed, func(i, j int) bool { return timed[i].at < timed[j].at })
		begin := time.Now()
		for _, a := range timed {
			time.Sleep(a.at - time.Since(begin))
			s.act(a)
		}
	}()

	// drive reads a streamed run's events, acting on the plan's actions
	// as a program steering from its range loop does.
	drive := func(st *toolloop.Stream) (*toolloop.RunResult, error) {
		n := 0
		for e := range st.Events() {
			if e.ParentRunID == "" {
				n++
				s.onTopEvent(n)
			}
			// A slow reader, without fake time: while the reader holds
			// an event, other emitters wait on the run's emitMu, a
			// sync.Mutex, which is not durably blocking, so the bubble's
			// clock would stop.
			for range p.reader {
				runtime.Gosched()
			}
		}
		return st.Result()
	}
	input := []toolloop.Message{toolloop.UserMessage("go")}
	var phases []steerPhase
	var res *toolloop.RunResult
	var err error
	if p.stream {
		res, err = drive(l.RunStream(ctx, input))
	} else {
		res, err = l.Run(ctx, input)
	}
	for {
		s.actMu.Lock()
		s.phase++
		s.actMu.Unlock()
		phases = append(phases, steerPhase{res, err})
		if res == nil {
			t.Fatalf("%s: no result: %v", s.name, err)
		}
		if !errors.Is(err, toolloop.ErrPaused) {
			break
		}
		k := len(phases) - 1
		if k >= len(p.pauses) || p.pauses[k].abandon || ctx.Err() != nil {
			break
		}
		pp := p.pauses[k]
		st := res.Paused
		// An interrupt the paused run had taken and not acted on, should
		// the pause state keep it (as the fix proposed for the bug
		// TestSteerInterruptBeforePauseIsKept shows does, in a field
		// "interrupt"), is the resumed run's first.
		var carried struct {
			Interrupt *toolloop.Interrupt `json:"interrupt"`
		}
		if b, jerr := json.Marshal(st); jerr == nil && json.Unmarshal(b, &carried) == nil && carried.Interrupt != nil {
			s.actMu.Lock()
			s.accepted = append(s.accepted, steerAccepted{phase: s.phase, intr: *carried.Interrupt})
			s.actMu.Unlock()
		}
		if pp.roundTrip {
			b, jerr := json.Marshal(st)
			if jerr != nil {
				t.Fatal(jerr)
			}
			st = &toolloop.PauseState{}
			if jerr := json.Unmarshal(b, st); jerr != nil {
				t.Fatal(jerr)
			}
		}
		if pp.queue > 0 { // the program adds to the paused run's queue
			s.actMu.Lock()
			s.seq++
			label := "q" + strconv.Itoa(s.seq)
			origin := toolloop.OriginSteer
			if pp.queue == 2 {
				origin = toolloop.OriginFollowUp
			}
			group := byte('q')
			if origin == toolloop.OriginFollowUp {
				group = 'Q' // delivered at the end: its order is the follow-ups'
			}
			s.sent[label] = steerSent{origin: origin, seq: s.seq, group: group}
			st.Queued = append(st.Queued, toolloop.QueuedMessage{Origin: origin, Message: toolloop.UserMessage(label)})
			s.actMu.Unlock()
		}
		plan := p.calls()
		decisions := map[string]toolloop.Approval{}
		for _, pc := range st.Pending {
			decisions[pc.CallID] = toolloop.Approval{Approved: plan[pc.CallID].approve, Reason: "decided while paused"}
		}
		time.Sleep(pp.wait)
		if p.stream {
			res, err = drive(l.ResumeStream(ctx, st, decisions))
		} else {
			res, err = l.Resume(ctx, st, decisions)
		}
	}
	<-driverDone
	cancel()
	leftover := s.in.Take()
	// Let every goroutine the schedule started (stubborn tools, calls
	// left behind) end, so that a late start is seen.
	time.Sleep(time.Hour)
	synctest.Wait()
	s.check(t, phases, leftover)
}

// steerSaysNotRun reports whether a result tells the model its tool did
// not run (as saysNotRun of schedule_test.go does).
func steerSaysNotRun(r *toolloop.ToolResult) bool {
	if r.Error == nil {
		return false
	}
	switch r.Error.Kind {
	case toolloop.KindDenied, toolloop.KindNotFound, toolloop.KindInvalidArgs:
		return true
	}
	return strings.HasPrefix(r.Error.Message, "not run") || strings.Contains(r.Error.Message, "did not run")
}

func (s *steerRun) check(t *testing.T, phases []steerPhase, leftover []toolloop.Message) {
	t.Helper()
	name := s.name
	final := phases[len(phases)-1]
	res, err := final.res, final.err
	msgs := res.Messages
	paused := errors.Is(err, toolloop.ErrPaused)

	// The transcript: valid, and valid for each provider's rules.
	valid := msgs
	if paused { // it ends with the turn that waits for decisions
		valid = msgs[:len(msgs)-1]
	}
	if !looptest.AssertValid(t, valid) {
		t.Fatalf("%s: invalid transcript", name)
	}
	ids := map[string]bool{}
	for i, m := range msgs {
		if m.Role != toolloop.RoleAssistant {
			continue
		}
		if len(m.Content) == 0 && len(m.ToolCalls) == 0 {
			t.Fatalf("%s: message %d: an assistant message with neither content nor calls", name, i)
		}
		if m.StopReason == toolloop.StopInterrupted && len(m.ToolCalls) > 0 {
			t.Fatalf("%s: message %d: an interrupted assistant message has calls", name, i)
		}
		for _, tc := range m.ToolCalls {
			if ids[tc.ID] {
				t.Fatalf("%s: call %s made twice", name, tc.ID)
			}
			ids[tc.ID] = true
		}
	}
	s.evMu.Lock()
	events := slices.Clone(s.events)
	s.evMu.Unlock()
	var top []toolloop.Event
	for _, e := range events {
		if e.ParentRunID == "" {
			top = append(top, e)
		}
	}
	// Each request of the top run is what the transcript held then: the
	// model saw nothing that was later taken back or moved.
	s.mu.Lock()
	for i, req := range s.reqs {
		if req[0].Text() != "go" {
			continue
		}
		if len(req) > len(msgs) {
			t.Fatalf("%s: request %d is longer than the transcript", name, i)
		}
		for j := range req {
			if a, b := fingerprint(req[j]), fingerprint(msgs[j]); a != b {
				t.Fatalf("%s: request %d message %d is %s; the transcript has %s", name, i, j, a, b)
			}
		}
	}
	for i, req := range s.reqs {
		n := len(req)
		if n == 0 || req[n-1].Role != toolloop.RoleAssistant {
			continue
		}
		t.Fatalf("%s: request %d ends with an assistant message (%q, %s): Claude 4.6 and later refuse it, and earlier models take it as a prefill to continue",
			name, i, req[n-1].Text(), req[n-1].StopReason)
	}
	s.mu.Unlock()

	s.checkCalls(t, msgs, paused, res, top, events)
	s.checkMessages(t, phases, leftover, top)
	s.checkInterrupts(t, phases, top)

	st := s.stats
	st["runs"] += len(phases)
	st["pauses"] += len(phases) - 1
	switch {
	case err == nil:
		st["ended ok"]++
	case errors.Is(err, toolloop.ErrInterrupted):
		st["ended interrupted"]++
	case errors.Is(err, toolloop.ErrPaused):
		st["ended paused"]++
	case errors.Is(err, context.Canceled):
		st["ended canceled"]++
	default:
		st["ended "+err.Error()]++
	}
	for _, e := range top {
		switch e.Type {
		case toolloop.EventRunInterrupted:
			st[fmt.Sprintf("interrupted %s continue=%v", e.Interrupt.Mode, e.Interrupt.Continue)]++
		case toolloop.EventUserMessage:
			st["delivered "+string(e.Origin)]++
		case toolloop.EventComplete:
			st["calls"]++
			if steerSaysNotRun(e.Result) {
				st["calls not run"]++
			} else if e.Result.Error != nil {
				st["calls failed "+string(e.Result.Error.Kind)]++
			}
		}
	}
	for _, m := range msgs {
		if m.StopReason == toolloop.StopInterrupted {
			st["cut assistant messages"]++
		}
	}
	st["returned"] += len(res.Undelivered)
	if res.Paused != nil {
		st["kept queued"] += len(res.Paused.Queued)
	}
	st["left in inbox"] += len(leftover)
	for _, e := range events {
		if e.ParentRunID != "" && e.Type == toolloop.EventRunInterrupted {
			st["sub-agents interrupted"]++
		}
	}
}

func (s *steerRun) checkCalls(t *testing.T, msgs []toolloop.Message, paused bool, res *toolloop.RunResult, top, all []toolloop.Event) {
	t.Helper()
	name := s.name
	results := looptest.Results(msgs)
	completes := map[string][]*toolloop.ToolResult{}
	for _, e := range top {
		if e.Type == toolloop.EventComplete {
			completes[e.CallID] = append(completes[e.CallID], e.Result)
		}
	}
	var pending map[string]bool
	if paused { // the paused turn's finished calls are in its state
		pending = map[string]bool{}
		for _, pc := range res.Paused.Pending {
			pending[pc.CallID] = true
		}
		last := msgs[len(msgs)-1]
		for i, r := range res.Paused.Results {
			if r != nil {
				results[last.ToolCalls[i].ID] = r
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			r := results[tc.ID]
			if pending[tc.ID] {
				if r != nil || len(completes[tc.ID]) != 0 || s.started[tc.ID] != 0 {
					t.Fatalf("%s: pending call %s has a result, a completion or a start", name, tc.ID)
				}
				continue
			}
			if r == nil {
				t.Fatalf("%s: call %s has no result", name, tc.ID)
			}
			if n := len(completes[tc.ID]); n != 1 {
				t.Fatalf("%s: call %s has %d completion events", name, tc.ID, n)
			}
			if c := completes[tc.ID][0]; c.Status != r.Status || (c.Error == nil) != (r.Error == nil) {
				t.Fatalf("%s: call %s: the completion event says %s, the transcript %s", name, tc.ID, c.Status, r.Status)
			}
			n := s.started[tc.ID]
			switch {
			case n > 1:
				t.Fatalf("%s: call %s ran %d times", name, tc.ID, n)
			case steerSaysNotRun(r) && n > 0:
				t.Fatalf("%s: call %s ran although its result says it did not (late=%v): %s", name, tc.ID, slices.Contains(s.late, tc.ID), r.Text())
			case !steerSaysNotRun(r) && n == 0:
				t.Fatalf("%s: call %s says it ran but never started: %s %s", name, tc.ID, r.Status, r.Text())
			}
		}
	}
	for id := range completes {
		if !ids(msgs)[id] {
			t.Fatalf("%s: a completion event for %s, which no message calls", name, id)
		}
	}
	// The sub-agents' calls: at most one completion per run and call, and
	// none ran that was answered as not run.
	type key struct{ run, call string }
	child := map[key]int{}
	for _, e := range all {
		if e.ParentRunID == "" || e.Type != toolloop.EventComplete {
			continue
		}
		k := key{e.RunID, e.CallID}
		if child[k]++; child[k] > 1 {
			t.Fatalf("%s: sub-agent call %s has two completion events", name, e.CallID)
		}
		if steerSaysNotRun(e.Result) && s.started[e.CallID] > 0 {
			t.Fatalf("%s: sub-agent call %s ran although its result says it did not: %s", name, e.CallID, e.Result.Text())
		}
	}
}

func ids(msgs []toolloop.Message) map[string]bool {
	out := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			out[tc.ID] = true
		}
	}
	return out
}

func (s *steerRun) checkMessages(t *testing.T, phases []steerPhase, leftover []toolloop.Message, top []toolloop.Event) {
	t.Helper()
	name := s.name
	final := phases[len(phases)-1]
	res := final.res
	s.actMu.Lock()
	sent := s.sent
	s.actMu.Unlock()

	type place struct {
		where string
		label string
	}
	var places []place
	for i, m := range res.Messages[1:] {
		if m.Role != toolloop.RoleUser {
			continue
		}
		if m.Text() == toolloop.InterruptedNote {
			// The loop's own note: only right after a cut turn.
			if prev := res.Messages[i]; prev.Role != toolloop.RoleAssistant || prev.StopReason != toolloop.StopInterrupted {
				t.Fatalf("%s: the interrupted note follows %s %q (%s), not a cut turn", name, prev.Role, prev.Text(), prev.StopReason)
			}
			continue
		}
		places = append(places, place{"delivered", m.Text()})
	}
	for _, ph := range phases[:len(phases)-1] {
		if len(ph.res.Undelivered) > 0 {
			t.Fatalf("%s: a paused run returned messages as undelivered: %v", name, userTexts(ph.res.Undelivered))
		}
	}
	for _, m := range res.Undelivered {
		places = append(places, place{"undelivered", m.Text()})
	}
	if res.Paused != nil {
		for _, q := range res.Paused.Queued {
			if q.Origin != sent[q.Message.Text()].origin {
				t.Fatalf("%s: %s queued as %s, sent as %s", name, q.Message.Text(), q.Origin, sent[q.Message.Text()].origin)
			}
			places = append(places, place{"queued", q.Message.Text()})
		}
	}
	for _, m := range leftover {
		places = append(places, place{"inbox", m.Text()})
	}
	where := map[string]string{}
	last := map[byte]int{}
	for _, pl := range places {
		snt, ok := sent[pl.label]
		if !ok {
			t.Fatalf("%s: %s %q, which was never sent", name, pl.where, pl.label)
		}
		if w, twice := where[pl.label]; twice {
			t.Fatalf("%s: %s is %s and %s", name, pl.label, w, pl.where)
		}
		where[pl.label] = pl.where
		if snt.seq < last[snt.group] {
			t.Fatalf("%s: %s (%s) out of the order sent: %v", name, pl.label, pl.where, places)
		}
		last[snt.group] = snt.seq
	}
	for label := range sent {
		if where[label] == "" {
			t.Fatalf("%s: %s was lost: %v", name, label, places)
		}
	}

	// One user.message event per delivered message, of its origin; a
	// follow-up only where the run would have ended, or an interrupt went
	// on.
	seen := map[string]bool{}
	var lastTurnEnd *toolloop.Event
	for i := range top {
		e := &top[i]
		switch e.Type {
		case toolloop.EventModelResponse, toolloop.EventRunInterrupted, toolloop.EventRunStart, toolloop.EventRunResumed:
			lastTurnEnd = e
		case toolloop.EventUserMessage:
			if len(e.Messages) != 1 {
				t.Fatalf("%s: a user.message event with %d messages", name, len(e.Messages))
			}
			label := e.Messages[0].Text()
			if e.Origin == toolloop.OriginInterrupt && label == toolloop.InterruptedNote {
				if lastTurnEnd == nil || lastTurnEnd.Type != toolloop.EventRunInterrupted || !lastTurnEnd.Interrupt.Continue {
					t.Fatalf("%s: the interrupted note delivered with no interrupt going on before it", name)
				}
				continue
			}
			if seen[label] || where[label] != "delivered" {
				t.Fatalf("%s: user.message %s, %s (seen before: %v)", name, label, where[label], seen[label])
			}
			seen[label] = true
			if e.Origin != sent[label].origin {
				t.Fatalf("%s: %s delivered as %s, sent as %s", name, label, e.Origin, sent[label].origin)
			}
			if e.Origin != toolloop.OriginFollowUp {
				continue
			}
			ok := lastTurnEnd != nil && (lastTurnEnd.Type == toolloop.EventRunInterrupted && lastTurnEnd.Interrupt.Continue ||
				lastTurnEnd.Type == toolloop.EventModelResponse && len(lastTurnEnd.Response.Message.ToolCalls) == 0 &&
					lastTurnEnd.Response.StopReason != toolloop.StopInterrupted)
			if !ok {
				t.Fatalf("%s: follow-up %s delivered after %s, before the run would have ended", name, label, lastTurnEnd.Type)
			}
		}
	}
	for label, w := range where {
		if w == "delivered" && !seen[label] {
			t.Fatalf("%s: %s is in the transcript without a user.message event", name, label)
		}
	}
	// A run that ended well showed the model every message it delivered.
	if final.err == nil {
		s.mu.Lock()
		var lastReq []toolloop.Message
		for _, r := range s.reqs {
			if r[0].Text() == "go" {
				lastReq = r
			}
		}
		s.mu.Unlock()
		got := map[string]bool{}
		for _, m := range lastReq {
			if m.Role == toolloop.RoleUser {
				got[m.Text()] = true
			}
		}
		for label, w := range where {
			if w == "delivered" && !got[label] {
				t.Fatalf("%s: %s was delivered and the model never saw it", name, label)
			}
		}
	}
}

// merge is what a run sees of interrupts sent one after another before
// it takes them: the earliest mode, and the last one's Continue.
func merge(is []toolloop.Interrupt) toolloop.Interrupt {
	rank := map[toolloop.InterruptMode]int{toolloop.InterruptNow: 0, toolloop.InterruptAfterModel: 1, toolloop.InterruptAfterTools: 2}
	out := is[0]
	for _, i := range is[1:] {
		if rank[i.Mode] < rank[out.Mode] {
			out.Mode = i.Mode
		}
		out.Continue = i.Continue
	}
	return out
}

// explains reports whether the interrupts a run accepted, in order, split
// into consecutive groups each merging into the next of its
// run.interrupted events, with a trailing rest that never acted.
func explains(accepted, acted []toolloop.Interrupt) bool {
	if len(acted) == 0 {
		return true // the rest trails: taken at the end, or never taken
	}
	for k := 1; k <= len(accepted); k++ {
		if merge(accepted[:k]) == acted[0] && explains(accepted[k:], acted[1:]) {
			return true
		}
	}
	return false
}

func (s *steerRun) checkInterrupts(t *testing.T, phases []steerPhase, top []toolloop.Event) {
	t.Helper()
	name := s.name
	s.actMu.Lock()
	accepted := slices.Clone(s.accepted)
	s.actMu.Unlock()
	phase := -1
	acted := make([][]toolloop.Interrupt, len(phases))
	said := make([]string, len(phases)) // a result of the run that names an interrupt
	for _, e := range top {
		switch e.Type {
		case toolloop.EventRunStart, toolloop.EventRunResumed:
			phase++
		case toolloop.EventRunInterrupted:
			acted[phase] = append(acted[phase], *e.Interrupt)
		case toolloop.EventComplete:
			if text := e.Result.Text(); strings.Contains(text, "the run was interrupted while it ran") ||
				strings.HasPrefix(text, "not run: the run was interrupted") {
				said[phase] = e.CallID + ": " + text
			}
		}
	}
	if phase != len(phases)-1 {
		t.Fatalf("%s: %d runs started, %d returned", name, phase+1, len(phases))
	}
	for k, ph := range phases {
		var took []toolloop.Interrupt
		for _, a := range accepted {
			if a.phase == k {
				took = append(took, a.intr)
			}
		}
		if said[k] != "" && !slices.ContainsFunc(took, func(i toolloop.Interrupt) bool { return i.Mode != toolloop.InterruptAfterTools }) {
			t.Fatalf("%s: run %d: a result says the run was interrupted, and it took no interrupt now or after the model (%+v): %s", name, k, took, said[k])
		}
		if !explains(took, acted[k]) {
			t.Fatalf("%s: run %d: the run.interrupted events %+v are not the interrupts it accepted %+v", name, k, acted[k], took)
		}
		if said[k] != "" && len(acted[k]) == 0 && !errors.Is(ph.err, context.Canceled) {
			t.Fatalf("%s: run %d (err %v): a result says the run was interrupted, and no run.interrupted event says so: %s", name, k, ph.err, said[k])
		}
		ended := errors.Is(ph.err, toolloop.ErrInterrupted)
		n := len(acted[k])
		for j, i := range acted[k] {
			if !i.Continue && (j != n-1 || !ended) {
				t.Fatalf("%s: run %d: an interrupt that does not go on, and the run went on (err %v)", name, k, ph.err)
			}
		}
		if ended && (n == 0 || acted[k][n-1].Continue || ph.res.StopReason != toolloop.StopInterrupted) {
			t.Fatalf("%s: run %d ended interrupted, stop reason %s, after %+v", name, k, ph.res.StopReason, acted[k])
		}
	}
}

// fingerprint is what a message says, to compare requests with the
// transcript.
func fingerprint(m toolloop.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", m.Role, m.Text())
	for _, tc := range m.ToolCalls {
		b.WriteString(" call " + tc.ID)
	}
	if m.Result != nil {
		fmt.Fprintf(&b, " result %s %s", m.Result.CallID, m.Result.Status)
	}
	return b.String()
}
