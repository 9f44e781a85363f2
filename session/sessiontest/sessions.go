package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
	"github.com/toolloop/toolloop/session"
)

// TestSessions runs the conformance suite of [session.Sessions] (runs,
// pause and resume, fork, rewind, caps, compaction, failures) against
// the stores newBacking makes: what the package promises on top of any
// Store that passes [TestStore].
func TestSessions(t *testing.T, newBacking NewBacking) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"RunsAcrossHandles", testRunsAcrossHandles},
		{"Busy", testBusy},
		{"Stream", testStream},
		{"PauseResumeElsewhere", testPauseResumeElsewhere},
		{"CrashRecovery", testCrashRecovery},
		{"Fork", testFork},
		{"Rewind", testRewind},
		{"SessionCap", testSessionCap},
		{"TenantCapConcurrent", testTenantCapConcurrent},
		{"CompactionLoad", testCompactionLoad},
		{"StoreFailure", testStoreFailure},
		{"Corrupt", testCorrupt},
		{"Redact", testRedact},
		{"LoadedTools", testLoadedTools},
		{"Sealed", testSealed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newBacking(t))
		})
	}
}

func texts(msgs []toolloop.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch {
		case m.Result != nil:
			fmt.Fprintf(&b, "[%s %s]", m.Role, m.Result.Text())
		case len(m.ToolCalls) > 0:
			fmt.Fprintf(&b, "[%s call %s]", m.Role, m.ToolCalls[0].Name)
		default:
			fmt.Fprintf(&b, "[%s %s]", m.Role, m.Text())
		}
	}
	return b.String()
}

func user(text string) toolloop.Message { return toolloop.UserMessage(text) }

func testRunsAcrossHandles(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	one := session.New(open(t), session.Options{Holder: "one"})
	s, err := one.Create(ctx, session.Info{ID: "chat", User: "ana", Tenant: "acme", Title: "a chat"})
	must(t, err, "Create")
	res, err := s.Run(ctx, a.loop(false), user("first"))
	must(t, err, "Run")
	if res.FinalText != "done: first" || a.ran("first") != 1 {
		t.Fatalf("first run: %q, act ran %d times", res.FinalText, a.ran("first"))
	}
	st := s.State()
	if st.Info.Status != session.StatusEnded || st.Info.Head == 0 || st.Info.Spent.InputTokens != 200 || st.StopReason != toolloop.StopEnd {
		t.Fatalf("after a run: %+v", st.Info)
	}
	must(t, s.Close(), "Close")
	must(t, s.Close(), "a second Close")
	if _, err := s.Run(ctx, a.loop(false), user("x")); err == nil {
		t.Fatalf("Run on a closed session succeeded")
	}

	// Another handle (another process) carries on with the whole transcript.
	two := session.New(open(t), session.Options{Holder: "two"})
	s2, err := two.Open(ctx, "chat")
	must(t, err, "Open")
	defer s2.Close()
	want := "[user first][assistant call act][tool did first][assistant done: first]"
	if got := texts(s2.State().Messages); got != want {
		t.Fatalf("loaded transcript %s, want %s", got, want)
	}
	res, err = s2.Run(ctx, a.loop(false), user("second"))
	must(t, err, "Run")
	if got, want := texts(res.Messages), want+"[user second][assistant call act][tool did second][assistant done: second]"; got != want {
		t.Fatalf("second run's transcript %s, want %s", got, want)
	}
	loaded, err := two.Load(ctx, "chat")
	must(t, err, "Load")
	if texts(loaded.Messages) != texts(res.Messages) || loaded.Info.Spent.InputTokens != 400 || loaded.Info.User != "ana" {
		t.Fatalf("Load: %s, %+v", texts(loaded.Messages), loaded.Info)
	}
	if texts(s2.State().Messages) != texts(res.Messages) {
		t.Fatalf("State after the run %s, want the run's transcript", texts(s2.State().Messages))
	}
	list, err := two.List(ctx, session.Filter{User: "ana"})
	must(t, err, "List")
	if len(list) != 1 || list[0].ID != "chat" || list[0].Title != "a chat" {
		t.Fatalf("List: %+v", list)
	}
	n := 0
	for e, err := range two.History(ctx, "chat") {
		must(t, err, "History")
		if e.Type.Transient() {
			t.Fatalf("a transient %s event was stored", e.Type)
		}
		n++
	}
	if int64(n) != loaded.Info.Head {
		t.Fatalf("History yields %d events, Head is %d", n, loaded.Info.Head)
	}
	_, err = two.Open(ctx, "missing")
	wantErr(t, err, session.ErrNotFound, "Open of a missing session")
	_, err = two.Create(ctx, session.Info{ID: "chat"})
	wantErr(t, err, session.ErrExists, "Create of a taken ID")
}

func testStream(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	ss := session.New(open(t), session.Options{})
	s, err := ss.Create(ctx, session.Info{ID: "st"})
	must(t, err, "Create")
	defer s.Close()
	r, err := s.Start(ctx, a.loop(false), user("streamed"))
	must(t, err, "Start")
	if _, err := s.Start(ctx, a.loop(false)); err == nil {
		t.Fatalf("a second Start while a run is under way succeeded")
	}
	stream := r.Loop.RunStream(r.Context(), r.Messages)
	types := 0
	for range stream.Events() {
		types++
	}
	res, err := r.End(stream.Result())
	must(t, err, "a streamed run")
	_, _ = r.End(res, err) // a second End does nothing
	if res.FinalText != "done: streamed" || types == 0 {
		t.Fatalf("streamed run: %q, %d events", res.FinalText, types)
	}
	st, err := ss.Load(ctx, "st")
	must(t, err, "Load")
	if texts(st.Messages) != texts(res.Messages) || st.Info.Status != session.StatusEnded {
		t.Fatalf("stored after a streamed run: %s, %q", texts(st.Messages), st.Info.Status)
	}
	// The paused state a Start hands over resumes with the stream too.
	r, err = s.Start(ctx, a.loop(true), user("ask it"))
	must(t, err, "Start")
	_, err = r.End(r.Loop.Run(r.Context(), r.Messages))
	wantErr(t, err, toolloop.ErrPaused, "a run that asks")
	r, err = s.Start(ctx, a.loop(true))
	must(t, err, "Start")
	if r.Paused == nil {
		t.Fatalf("Start of a paused session has no Paused")
	}
	decisions := map[string]toolloop.Approval{r.Paused.Pending[0].CallID: {Approved: true}}
	rs := r.Loop.ResumeStream(r.Context(), r.Paused, decisions)
	for range rs.Events() {
	}
	res, err = r.End(rs.Result())
	must(t, err, "a streamed resume")
	if a.ran("ask it") != 1 || res.FinalText != "done: ask it" {
		t.Fatalf("streamed resume: %q, ran %d", res.FinalText, a.ran("ask it"))
	}
}

func testBusy(t *testing.T, open Opener) {
	ctx := ctxOf(t)
	one := session.New(open(t), session.Options{Holder: "one"})
	two := session.New(open(t), session.Options{Holder: "two"})
	s, err := one.Create(ctx, session.Info{ID: "s"})
	must(t, err, "Create")
	start := time.Now()
	_, err = two.Open(ctx, "s")
	wantErr(t, err, session.ErrSessionBusy, "Open of an open session")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("ErrSessionBusy took %v: it must come at once", d)
	}
	wantErr(t, two.Rewind(ctx, "s", 0), session.ErrSessionBusy, "Rewind of an open session")
	wantErr(t, two.Delete(ctx, "s"), session.ErrSessionBusy, "Delete of an open session")
	must(t, s.Close(), "Close")
	s2, err := two.Open(ctx, "s")
	must(t, err, "Open after Close")
	must(t, s2.Close(), "Close")
	must(t, two.Delete(ctx, "s"), "Delete")
	_, err = one.Load(ctx, "s")
	wantErr(t, err, session.ErrNotFound, "Load after Delete")
}

func testPauseResumeElsewhere(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	one := session.New(open(t), session.Options{Holder: "one"})
	s, err := one.Create(ctx, session.Info{ID: "p"})
	must(t, err, "Create")
	sealed := a.loop(true)
	sealed.Sealing = toolloop.Sealing{Key: sealKey}
	res, err := s.Run(ctx, sealed, user("ask deploy"))
	wantErr(t, err, toolloop.ErrPaused, "a run that asks")
	if res.Paused == nil || a.ran("ask deploy") != 0 {
		t.Fatalf("paused run: %+v, ran %d", res.Paused, a.ran("ask deploy"))
	}
	_, err = s.Run(ctx, a.loop(true), user("more"))
	wantErr(t, err, session.ErrPending, "Run of a paused session")
	must(t, s.Close(), "Close")

	two := session.New(open(t), session.Options{Holder: "two"})
	st, err := two.Load(ctx, "p")
	must(t, err, "Load")
	if st.Info.Status != session.StatusPaused || st.Paused == nil || len(st.Paused.Pending) != 1 {
		t.Fatalf("a paused session loads as %+v, paused %+v", st.Info, st.Paused)
	}
	id := st.Paused.Pending[0].CallID
	s2, err := two.Open(ctx, "p")
	must(t, err, "Open")
	defer s2.Close()
	// A missing decision runs nothing and leaves the session paused.
	_, err = s2.Resume(ctx, a.loop(true), nil)
	wantErr(t, err, toolloop.ErrMissingDecision, "Resume with no decision")
	// The loop seals states: the seal stored as the run paused is checked.
	l := a.loop(true)
	l.Sealing = toolloop.Sealing{Key: sealKey}
	res, err = s2.Resume(ctx, l, map[string]toolloop.Approval{id: {Approved: true}})
	must(t, err, "Resume")
	if res.FinalText != "done: ask deploy" || a.ran("ask deploy") != 1 {
		t.Fatalf("resumed: %q, ran %d", res.FinalText, a.ran("ask deploy"))
	}
	_, err = s2.Resume(ctx, l, map[string]toolloop.Approval{id: {Approved: true}})
	wantErr(t, err, session.ErrNotPaused, "a second Resume")
	if a.ran("ask deploy") != 1 {
		t.Fatalf("the approved call ran %d times", a.ran("ask deploy"))
	}
	if st := s2.State(); st.Info.Status != session.StatusEnded || st.Paused != nil {
		t.Fatalf("after Resume: %+v", st.Info)
	}
}

func testCrashRecovery(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	base := open(t)
	// The process dies after the model's response is stored, while its
	// call runs: the store gets nothing more from it.
	dying := &failingStore{Store: base}
	dying.left.Store(1)
	s, err := session.New(dying, session.Options{}).Create(ctx, session.Info{ID: "c"})
	must(t, err, "Create")
	_, err = s.Run(ctx, a.loop(false), user("go"))
	wantErr(t, err, errStoreDown, "the dying run")
	if a.ran("go") != 1 {
		t.Fatalf("the call ran %d times before the crash", a.ran("go"))
	}
	_ = s.Close()
	// Whatever the dying run stored, a new run runs no call twice and
	// leaves a whole transcript.
	ss := session.New(base, session.Options{})
	st, err := ss.Load(ctx, "c")
	must(t, err, "Load")
	if st.Info.Status != session.StatusRunning {
		t.Fatalf("a session whose run died is %q, want running", st.Info.Status)
	}
	s2, err := ss.Open(ctx, "c")
	must(t, err, "Open")
	defer s2.Close()
	res, err := s2.Run(ctx, a.loop(false), user("again"))
	must(t, err, "Run after the crash")
	if a.ran("go") != 1 || a.ran("again") != 1 {
		t.Fatalf("after recovery the interrupted call ran %d times, the new one %d", a.ran("go"), a.ran("again"))
	}
	if err := validate(res.Messages); err != nil {
		t.Fatalf("transcript after recovery: %v", err)
	}
}

// validate checks that every call has one result.
func validate(msgs []toolloop.Message) error {
	open := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			open[tc.ID] = true
		}
		if m.Result != nil {
			if !open[m.Result.CallID] {
				return fmt.Errorf("a result for %s, which is not open", m.Result.CallID)
			}
			delete(open, m.Result.CallID)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("calls without a result: %v", open)
	}
	return nil
}

// converse makes session id with three runs.
func converse(t *testing.T, ss *session.Sessions, a *agent, id string) {
	ctx := ctxOf(t)
	s, err := ss.Create(ctx, session.Info{ID: id, User: "u", Tenant: "t"})
	must(t, err, "Create")
	defer s.Close()
	for _, q := range []string{"one", "two", "three"} {
		_, err := s.Run(ctx, a.loop(false), user(q))
		must(t, err, "Run")
	}
}

func testFork(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	ss := session.New(open(t), session.Options{})
	converse(t, ss, a, "base")
	for _, at := range []int{-1, 13, 2} {
		_, err := ss.Fork(ctx, "base", at, session.Info{ID: "bad"})
		wantErr(t, err, session.ErrInvalid, fmt.Sprintf("Fork at %d", at))
	}
	_, err := ss.Fork(ctx, "missing", 0, session.Info{ID: "f"})
	wantErr(t, err, session.ErrNotFound, "Fork of a missing session")
	info, err := ss.Fork(ctx, "base", 4, session.Info{ID: "fork", Title: "retry"})
	must(t, err, "Fork")
	if info.Parent != "base" || info.ForkedAt != 4 || info.User != "u" || info.Tenant != "t" || info.Title != "retry" {
		t.Fatalf("fork: %+v", info)
	}
	_, err = ss.Fork(ctx, "base", 4, session.Info{ID: "fork"})
	wantErr(t, err, session.ErrExists, "Fork onto a taken ID")
	s, err := ss.Open(ctx, "fork")
	must(t, err, "Open the fork")
	defer s.Close()
	if got := texts(s.State().Messages); got != "[user one][assistant call act][tool did one][assistant done: one]" {
		t.Fatalf("fork's transcript %s", got)
	}
	res, err := s.Run(ctx, a.loop(false), user("other"))
	must(t, err, "Run the fork")
	if got := texts(res.Messages); got != "[user one][assistant call act][tool did one][assistant done: one][user other][assistant call act][tool did other][assistant done: other]" {
		t.Fatalf("fork's run %s", got)
	}
	base, err := ss.Load(ctx, "base")
	must(t, err, "Load")
	if len(base.Messages) != 12 {
		t.Fatalf("the parent has %d messages after its fork ran, want 12", len(base.Messages))
	}
	// A fork of zero messages is an empty conversation.
	_, err = ss.Fork(ctx, "base", 0, session.Info{ID: "empty"})
	must(t, err, "Fork at 0")
	st, err := ss.Load(ctx, "empty")
	must(t, err, "Load")
	if len(st.Messages) != 0 {
		t.Fatalf("fork at 0 has %d messages", len(st.Messages))
	}
}

func testRewind(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	ss := session.New(open(t), session.Options{})
	converse(t, ss, a, "r")
	before, err := ss.Load(ctx, "r")
	must(t, err, "Load")
	wantErr(t, ss.Rewind(ctx, "r", 6), session.ErrInvalid, "Rewind between a call and its result")
	wantErr(t, ss.Rewind(ctx, "missing", 0), session.ErrNotFound, "Rewind of a missing session")
	must(t, ss.Rewind(ctx, "r", 4), "Rewind")
	st, err := ss.Load(ctx, "r")
	must(t, err, "Load")
	if got := texts(st.Messages); got != "[user one][assistant call act][tool did one][assistant done: one]" {
		t.Fatalf("rewound transcript %s", got)
	}
	if st.Info.Spent != before.Info.Spent || st.Info.Status != session.StatusEnded {
		t.Fatalf("rewind changed spend or status: %+v", st.Info)
	}
	n := 0
	for _, err := range ss.History(ctx, "r") {
		must(t, err, "History")
		n++
	}
	if int64(n) <= before.Info.Head {
		t.Fatalf("History has %d records after a rewind, want all %d before it and the checkpoint", n, before.Info.Head)
	}
	s, err := ss.Open(ctx, "r")
	must(t, err, "Open")
	res, err := s.Run(ctx, a.loop(false), user("redo"))
	must(t, err, "Run")
	if got := texts(res.Messages); !strings.HasPrefix(got, "[user one][assistant call act][tool did one][assistant done: one][user redo]") {
		t.Fatalf("the run after a rewind sent %s", got)
	}
	// A paused session rewound to before its calls is paused no more.
	_, err = s.Run(ctx, a.loop(true), user("ask x"))
	wantErr(t, err, toolloop.ErrPaused, "a run that asks")
	must(t, s.Close(), "Close")
	must(t, ss.Rewind(ctx, "r", 8), "Rewind of a paused session")
	st, err = ss.Load(ctx, "r")
	must(t, err, "Load")
	if st.Paused != nil || len(st.Messages) != 8 {
		t.Fatalf("after rewinding a paused session: paused %v, %d messages", st.Paused != nil, len(st.Messages))
	}
	if a.ran("ask x") != 0 {
		t.Fatalf("the rewound call ran")
	}
}

func testSessionCap(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	// Each turn spends 110 tokens and $0.11; each run two turns.
	ss := session.New(open(t), session.Options{Caps: session.Caps{Session: session.Cap{Tokens: 500}}})
	s, err := ss.Create(ctx, session.Info{ID: "capped", Tenant: "t"})
	must(t, err, "Create")
	defer s.Close()
	for i := range 2 {
		_, err := s.Run(ctx, a.loop(false), user(fmt.Sprint("q", i)))
		must(t, err, "a run within the cap")
	}
	// 440 tokens spent: the next run takes one turn (crossing the cap),
	// then stops.
	res, err := s.Run(ctx, a.loop(false), user("q2"))
	var be *toolloop.BudgetError
	var ce *session.CapError
	if !errors.As(err, &be) || be.Limit != toolloop.LimitShared || !errors.As(err, &ce) || !errors.Is(err, session.ErrCapReached) {
		t.Fatalf("a run past the session cap: %v, want a BudgetError of LimitShared wrapping a CapError", err)
	}
	if ce.Scope != "session" || ce.Name != "capped" || ce.Spent.Tokens() != 550 || ce.Cap.Tokens != 500 {
		t.Fatalf("CapError %+v", ce)
	}
	if !strings.Contains(err.Error(), `session "capped" has spent 550 tokens of its 500-token cap`) {
		t.Fatalf("error %q does not say which cap and how much", err)
	}
	if err := validate(res.Messages); err != nil {
		t.Fatalf("the stopped run's transcript: %v", err)
	}
	// The next run stops before its first turn.
	turns := a.turns
	_, err = s.Run(ctx, a.loop(false), user("q3"))
	wantErr(t, err, session.ErrCapReached, "a run of a session over its cap")
	if a.turns != turns {
		t.Fatalf("a session over its cap took %d more turns", a.turns-turns)
	}
	// A cost cap on a model with no price refuses to spend uncounted.
	ss2 := session.New(ss.Store(), session.Options{Caps: session.Caps{Tenants: map[string]session.Cap{"t": {Cost: 100}}}})
	s2, err := ss2.Create(ctx, session.Info{ID: "unpriced", Tenant: "t"})
	must(t, err, "Create")
	defer s2.Close()
	l := a.loop(false)
	l.ModelTable = toolloop.ModelTable{}
	_, err = s2.Run(ctx, l, user("q"))
	wantErr(t, err, toolloop.ErrUnknownPrice, "a cost cap with an unpriced model")
}

func testTenantCapConcurrent(t *testing.T, open Opener) {
	ctx := ctxOf(t)
	const runs = 4
	// Each turn costs $0.11; the tenant's cap is $2.
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	agents := make([]*agent, runs)
	for i := range runs {
		agents[i] = newAgent()
		ss := session.New(open(t), session.Options{Caps: session.Caps{Tenant: session.Cap{Cost: 2}}})
		wg.Go(func() {
			id := fmt.Sprint("s", i)
			s, err := ss.Create(ctx, session.Info{ID: id, Tenant: "acme"})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			l := agents[i].loop(false)
			l.Budget.MaxTurns = 1000
			for q := 0; ; q++ {
				_, err := s.Run(ctx, l, user(fmt.Sprint(id, "-", q)))
				if errors.Is(err, session.ErrCapReached) {
					errs <- nil
					return
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err, "a run of the tenant")
	}
	spent, err := session.New(open(t), session.Options{}).Store().TenantSpend(ctx, "acme")
	must(t, err, "TenantSpend")
	turns := 0
	for _, a := range agents {
		turns += a.turns
	}
	if float64(turns)*0.11 < spent.Cost-1e-9 || spent.Cost > 2+runs*0.11+1e-9 || spent.Cost < 2 {
		t.Fatalf("%d runs of a tenant capped at $2 spent $%.2f in %d turns: want at least $2 and at most one turn each over", runs, spent.Cost, turns)
	}
}

// compactor removes all but the last two messages once the transcript
// is longer than 6 messages, keeping a summary.
type compactor struct{}

func (compactor) ManageContext(_ context.Context, in *toolloop.ContextInput) (*toolloop.TranscriptEdit, error) {
	n := len(in.Messages)
	if n <= 6 {
		return nil, nil
	}
	// Keep the last user message and what follows it.
	keep := n - 1
	for keep > 0 && in.Messages[keep].Role != toolloop.RoleUser {
		keep--
	}
	if keep <= 1 {
		return nil, nil
	}
	return &toolloop.TranscriptEdit{Strategy: "compact", Reason: "threshold", Splices: []toolloop.Splice{{Start: 0, End: keep,
		Messages: []toolloop.Message{toolloop.UserMessage(fmt.Sprintf("summary of %d messages", keep))}}}}, nil
}

// countingStore counts the records read.
type countingStore struct {
	session.Store
	read atomic.Int64
}

func (c *countingStore) Records(ctx context.Context, id string, from int64) iter.Seq2[session.Record, error] {
	return func(yield func(session.Record, error) bool) {
		for r, err := range c.Store.Records(ctx, id, from) {
			c.read.Add(1)
			if !yield(r, err) {
				return
			}
		}
	}
}

func testCompactionLoad(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	cs := &countingStore{Store: open(t)}
	ss := session.New(cs, session.Options{})
	s, err := ss.Create(ctx, session.Info{ID: "long"})
	must(t, err, "Create")
	l := a.loop(false)
	l.ContextManagers = []toolloop.ContextManager{compactor{}}
	// One run of many turns: the user's messages come through the inbox.
	for i := range 6 {
		_, err := s.Run(ctx, l, user(fmt.Sprint("q", i)))
		must(t, err, "Run")
	}
	want := texts(s.State().Messages)
	must(t, s.Close(), "Close")
	info, err := cs.Stat(ctx, "long")
	must(t, err, "Stat")
	if info.Base <= 1 {
		t.Fatalf("Base %d: a compacted session should load from its last checkpoint", info.Base)
	}
	cs.read.Store(0)
	st, err := ss.Load(ctx, "long")
	must(t, err, "Load")
	if got := texts(st.Messages); got != want {
		t.Fatalf("loaded from the checkpoint: %s\nwant %s", got, want)
	}
	if !strings.HasPrefix(texts(st.Messages), "[user summary of") {
		t.Fatalf("the loaded transcript does not start with the summary: %s", texts(st.Messages))
	}
	if read := cs.read.Load(); read != info.Head-info.Base+1 {
		t.Fatalf("Load read %d records; want only the %d from the checkpoint on", read, info.Head-info.Base+1)
	}
	// The whole history stays queryable.
	n, users, checkpoints := 0, 0, 0
	for e, err := range ss.History(ctx, "long") {
		must(t, err, "History")
		n++
		switch e.Type {
		case toolloop.EventRunStart:
			users++
		case session.EventCheckpoint:
			checkpoints++
			if e.Text != "compact" || e.RunID == "" {
				t.Fatalf("a compaction's checkpoint: %+v", e)
			}
		}
	}
	if int64(n) != info.Head || users != 6 || checkpoints == 0 {
		t.Fatalf("History: %d records (Head %d), %d run starts, %d checkpoints", n, info.Head, users, checkpoints)
	}
}

// failingStore fails appends after a number of them.
type failingStore struct {
	session.Store
	left atomic.Int64
}

var errStoreDown = errors.New("the store is down")

func (f *failingStore) Append(ctx context.Context, l session.Lease, b session.Batch) error {
	if f.left.Add(-1) < 0 {
		return errStoreDown
	}
	return f.Store.Append(ctx, l, b)
}

func testStoreFailure(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	fs := &failingStore{Store: open(t)}
	fs.left.Store(1 << 30)
	ss := session.New(fs, session.Options{})
	s, err := ss.Create(ctx, session.Info{ID: "f"})
	must(t, err, "Create")
	defer s.Close()
	_, err = s.Run(ctx, a.loop(false), user("ok"))
	must(t, err, "Run")
	// The store fails as the next turn's response is stored: the call it
	// asks for must not run.
	fs.left.Store(0)
	_, err = s.Run(ctx, a.loop(false), user("lost"))
	wantErr(t, err, errStoreDown, "a run whose store fails")
	if a.ran("lost") != 0 {
		t.Fatalf("a call ran although its model response was not stored")
	}
	// The session carries on from what the store has.
	fs.left.Store(1 << 30)
	res, err := s.Run(ctx, a.loop(false), user("after"))
	must(t, err, "Run after the store came back")
	if got := texts(res.Messages); !strings.HasPrefix(got, "[user ok][assistant call act][tool did ok][assistant done: ok]") || a.ran("after") != 1 {
		t.Fatalf("after a failed run: %s", got)
	}
}

func testCorrupt(t *testing.T, open Opener) {
	ctx := ctxOf(t)
	st := open(t)
	must(t, st.Create(ctx, session.Info{ID: "bad"}), "Create")
	l, err := st.Acquire(ctx, "bad", "w", ttl)
	must(t, err, "Acquire")
	must(t, st.Append(ctx, l, session.Batch{Records: []session.Record{
		{Seq: 1, Base: true, Data: []byte(`{"type":"run.start","run_id":"r","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)},
		{Seq: 2, Data: []byte(`{"type":"model.response","response":{"message":{"role":"assistant","content":7}}}`)},
		{Seq: 3, Data: []byte(`{"no_type":true}`)},
	}}), "Append")
	must(t, st.Release(ctx, l), "Release")
	ss := session.New(st, session.Options{})
	_, err = ss.Open(ctx, "bad")
	wantErr(t, err, session.ErrCorrupt, "Open of a session with a corrupt record")
	if !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("the error %q does not name the session and record", err)
	}
	// The lease was not kept: the session can be opened once repaired.
	_, err = st.Acquire(ctx, "bad", "w", ttl)
	must(t, err, "Acquire after a failed Open")
	// History yields the good records and an error for each bad one.
	good, bad := 0, 0
	for _, err := range ss.History(ctx, "bad") {
		if errors.Is(err, session.ErrCorrupt) {
			bad++
		} else if err == nil {
			good++
		}
	}
	if good != 1 || bad != 2 {
		t.Fatalf("History: %d good, %d corrupt, want 1 and 2", good, bad)
	}
}

func testRedact(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	secret := "ghp_" + strings.Repeat("aB3dE5", 6)
	var red sanitize.Redactor
	ss := session.New(open(t), session.Options{Redact: red.RedactEvent})
	s, err := ss.Create(ctx, session.Info{ID: "r"})
	must(t, err, "Create")
	defer s.Close()
	_, err = s.Run(ctx, a.loop(false), user("use "+secret))
	must(t, err, "Run")
	n := 0
	for r, err := range ss.Store().Records(ctx, "r", 1) {
		must(t, err, "Records")
		n++
		if strings.Contains(string(r.Data), secret) {
			t.Fatalf("record %d holds the secret: %s", r.Seq, r.Data)
		}
	}
	if n == 0 {
		t.Fatalf("no records")
	}
}

func testLoadedTools(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	ss := session.New(open(t), session.Options{})
	s, err := ss.Create(ctx, session.Info{ID: "lt"})
	must(t, err, "Create")
	l := a.loop(false)
	l.Deferred = toolloop.SelectNames("ask")
	l.Model = toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		if len(req.Messages) == 1 {
			return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: "s1", Name: toolloop.ToolSearchName, Arguments: []byte(`{"query":"ask"}`)}}}}, nil
		}
		return &toolloop.Response{Message: assistant("found")}, nil
	})
	_, err = s.Run(ctx, l, user("find a tool"))
	must(t, err, "Run")
	must(t, s.Close(), "Close")
	st, err := ss.Load(ctx, "lt")
	must(t, err, "Load")
	if fmt.Sprint(st.LoadedTools) != "[ask]" {
		t.Fatalf("LoadedTools = %v, want [ask]", st.LoadedTools)
	}
}

var sealKey = []byte("0123456789abcdef0123456789abcdef")

// forgingStore rewrites what its records say, as someone who can write
// to the store would.
type forgingStore struct {
	session.Store
	from, to string
}

func (f *forgingStore) Records(ctx context.Context, id string, from int64) iter.Seq2[session.Record, error] {
	return func(yield func(session.Record, error) bool) {
		for r, err := range f.Store.Records(ctx, id, from) {
			r.Data = []byte(strings.ReplaceAll(string(r.Data), f.from, f.to))
			if !yield(r, err) {
				return
			}
		}
	}
}

func testSealed(t *testing.T, open Opener) {
	ctx, a := ctxOf(t), newAgent()
	st := open(t)
	ss := session.New(st, session.Options{})
	sealed := a.loop(true)
	sealed.Sealing = toolloop.Sealing{Key: sealKey}
	pause := func(id string, l *toolloop.AgentLoop) {
		s, err := ss.Create(ctx, session.Info{ID: id})
		must(t, err, "Create")
		defer s.Close()
		_, err = s.Run(ctx, l, user("ask deploy"))
		wantErr(t, err, toolloop.ErrPaused, "a run that asks")
	}
	resume := func(ss *session.Sessions, id string) error {
		s, err := ss.Open(ctx, id)
		must(t, err, "Open")
		defer s.Close()
		p := s.State().Paused
		if p == nil {
			t.Fatalf("session %s is not paused", id)
		}
		_, err = s.Resume(ctx, sealed, map[string]toolloop.Approval{p.Pending[0].CallID: {Approved: true}})
		return err
	}
	// Paused by a loop that does not seal: a loop that does refuses it.
	pause("unsealed", a.loop(true))
	wantErr(t, resume(ss, "unsealed"), toolloop.ErrTampered, "resuming an unsealed state with a key")
	// Paused and sealed, then changed in the store: refused, nothing runs.
	pause("forged", sealed)
	forged := session.New(&forgingStore{Store: st, from: "ask deploy", to: "ask destroy"}, session.Options{})
	wantErr(t, resume(forged, "forged"), toolloop.ErrTampered, "resuming a state changed in the store")
	if a.ran("ask destroy") != 0 || a.ran("ask deploy") != 0 {
		t.Fatalf("a forged state ran its call")
	}
	fs, err := forged.Open(ctx, "forged")
	must(t, err, "Open")
	wantErr(t, fs.Verify(sealKey), toolloop.ErrTampered, "Verify of a forged state")
	must(t, fs.Close(), "Close")
	gs, err := ss.Open(ctx, "forged")
	must(t, err, "Open")
	must(t, gs.Verify(sealKey), "Verify of the sealed state")
	must(t, gs.Close(), "Close")
	// The same state, unchanged, resumes.
	must(t, resume(ss, "forged"), "resuming the sealed state")
	gs, err = ss.Open(ctx, "forged")
	must(t, err, "Open")
	wantErr(t, gs.Verify(sealKey), session.ErrNotPaused, "Verify of a session no longer paused")
	must(t, gs.Close(), "Close")
	if a.ran("ask deploy") != 1 {
		t.Fatalf("the sealed state's call ran %d times", a.ran("ask deploy"))
	}
}
