package toolloop

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// schedules is how many random schedules TestRandomSchedules runs; the
// TOOLLOOP_SCHEDULES environment variable overrides it (the stress script
// runs more).
func schedules(t *testing.T) int {
	if s := os.Getenv("TOOLLOOP_SCHEDULES"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "TOOLLOOP_SCHEDULES")
		return n
	}
	if testing.Short() {
		return 300
	}
	return 2000
}

// TestRandomSchedules runs random schedules of slow, stubborn or
// well-behaved guards, approvers, pre-hooks and tools, cancelling the run
// at a random moment, and checks the loop's promise for each: every call
// gets exactly one result and one completion event, a call whose result
// says it did not run never runs (not even after Run returned), and a call
// whose result says it ran did run.
func TestRandomSchedules(t *testing.T) {
	n := schedules(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (set TOOLLOOP_SCHEDULE_SEED to replay)", seed)
	if s := os.Getenv("TOOLLOOP_SCHEDULE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		seed = v
	}
	for i := range n {
		runSchedule(t, rand.New(rand.NewPCG(seed, uint64(i))), fmt.Sprintf("seed %d schedule %d", seed, i))
		if t.Failed() {
			return
		}
	}
}

// stage is one piece of user code in a schedule: how long it takes and
// whether it ignores its context meanwhile.
type stage struct {
	delay    time.Duration
	stubborn bool
}

func randStage(r *rand.Rand) stage {
	return stage{delay: time.Duration(r.IntN(3000)) * time.Microsecond, stubborn: r.IntN(3) == 0}
}

// wait sleeps for the stage's delay; a well-behaved stage stops early
// when ctx is done, a stubborn one also stops when the schedule releases
// it (so every schedule ends).
func (s stage) wait(ctx context.Context, release <-chan struct{}) error {
	tm := time.NewTimer(s.delay)
	defer tm.Stop()
	done := ctx.Done()
	if s.stubborn {
		done = nil
	}
	select {
	case <-tm.C:
		return nil
	case <-done:
		return ctx.Err()
	case <-release:
		return nil
	}
}

type callPlan struct {
	guard, approver, hook, tool stage
	ask, approve, deny          bool
}

func runSchedule(t *testing.T, r *rand.Rand, name string) {
	t.Helper()
	ncalls := 1 + r.IntN(4)
	plans := make(map[string]callPlan, ncalls)
	calls := make([]ToolCall, ncalls)
	for i := range calls {
		id := "c" + strconv.Itoa(i)
		calls[i] = ToolCall{ID: id, Name: "work", Arguments: json.RawMessage(`{"id":"` + id + `"}`)}
		plans[id] = callPlan{
			guard: randStage(r), approver: randStage(r), hook: randStage(r), tool: randStage(r),
			ask: r.IntN(2) == 0, approve: r.IntN(4) != 0, deny: r.IntN(8) == 0,
		}
	}
	release := make(chan struct{})
	var returned atomic.Bool
	var mu sync.Mutex
	started := map[string]bool{}
	lateStart := []string{}

	tool := NewTool("work", "works", func(ctx context.Context, in struct {
		ID string `json:"id"`
	}) (any, error) {
		mu.Lock()
		started[in.ID] = true
		if returned.Load() {
			lateStart = append(lateStart, in.ID)
		}
		mu.Unlock()
		if err := plans[in.ID].tool.wait(ctx, release); err != nil {
			return nil, err
		}
		return "done", nil
	})
	var reg ToolRegistry
	require.NoError(t, reg.Register(tool))

	id := func(c *Call) string {
		var in struct{ ID string }
		_ = json.Unmarshal(c.Arguments, &in)
		return in.ID
	}
	completes := map[string]int{}
	var evMu sync.Mutex
	l := &AgentLoop{
		Tools: &reg,
		Guard: GuardFunc(func(ctx context.Context, c *Call) Verdict {
			p := plans[id(c)]
			_ = p.guard.wait(ctx, release)
			switch {
			case p.deny:
				return Verdict{Decision: Deny, Reason: "random"}
			case p.ask:
				return Verdict{Decision: Ask, Reason: "random"}
			}
			return Verdict{Decision: Allow}
		}),
		Approver: ApproverFunc(func(ctx context.Context, c *Call, _ string) (Approval, error) {
			p := plans[id(c)]
			_ = p.approver.wait(ctx, release)
			return Approval{Approved: p.approve}, nil
		}),
		Hooks: Hooks{PreToolUse: []PreToolUseHook{func(ctx context.Context, c *Call) (PreToolUse, error) {
			return PreToolUse{}, plans[id(c)].hook.wait(ctx, release)
		}}},
		OnEvent: func(e Event) {
			if e.Type == EventComplete {
				evMu.Lock()
				completes[e.CallID]++
				evMu.Unlock()
			}
		},
		grace: time.Millisecond, Limits: Limits{ToolTimeout: time.Duration(1+r.IntN(4)) * time.Millisecond},
	}
	turn := 0
	l.Model = ModelFunc(func(ctx context.Context, _ *Request) (*Response, error) {
		turn++
		if turn == 1 {
			return &Response{Message: Message{Role: RoleAssistant, ToolCalls: calls}}, nil
		}
		return &Response{Message: Message{Role: RoleAssistant, Content: []Content{TextContent("ok")}}}, nil
	})

	ctx, cancel := context.WithCancel(context.Background())
	stop := time.AfterFunc(time.Duration(r.IntN(6000))*time.Microsecond, cancel)
	var results []*ToolResult
	asked := calls      // the calls the model made: none if the run ended first
	if r.IntN(4) == 0 { // the public single-call path
		for _, tc := range calls {
			res, pend := l.RunCall(ctx, "run", 1, tc, nil)
			require.Nil(t, pend, name)
			require.NotNil(t, res, name)
			results = append(results, res)
		}
	} else {
		out, _ := l.Run(ctx, []Message{UserMessage("go")})
		require.NotNil(t, out, name)
		asked = nil
		for _, m := range out.Messages {
			asked = append(asked, m.ToolCalls...)
			if m.Role == RoleTool {
				results = append(results, m.Result)
			}
		}
	}
	returned.Store(true)
	stop.Stop()
	cancel()
	close(release)
	// Wait for every goroutine the schedule started (stubborn user code
	// and the calls left behind) to end, so a late start would be seen.
	deadline := time.Now().Add(10 * time.Second)
	for workers.busy() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}

	mu.Lock()
	defer mu.Unlock()
	// A call answered as having run ("timed out … while it ran") was
	// claimed before the answer: its goroutine may reach the function's
	// first line after Run returned, on a loaded machine. Any other late
	// start breaks the promise.
	ranPerResult := map[string]bool{}
	for _, res := range results {
		ranPerResult[res.CallID] = !saysNotRun(res)
	}
	lateStart = slices.DeleteFunc(lateStart, func(id string) bool { return ranPerResult[id] })
	if len(lateStart) > 0 {
		for _, res := range results {
			t.Logf("result %s: %s %q", res.CallID, res.Status, res.Text())
		}
		t.Logf("plans %+v runcall=%v", plans, asked != nil)
	}
	require.Empty(t, lateStart, "%s: tools started after the run returned", name)
	require.Len(t, results, len(asked), "%s: one result per call", name)
	seen := map[string]bool{}
	for _, res := range results {
		require.False(t, seen[res.CallID], "%s: %s answered twice", name, res.CallID)
		seen[res.CallID] = true
		ran := started[res.CallID]
		if saysNotRun(res) {
			require.False(t, ran, "%s: %s ran although its result says it did not: %s", name, res.CallID, res.Text())
		} else {
			require.True(t, ran, "%s: %s says it ran but never started: %s %s", name, res.CallID, res.Status, res.Text())
		}
	}
	evMu.Lock()
	defer evMu.Unlock()
	for _, tc := range asked {
		require.Equal(t, 1, completes[tc.ID], "%s: completion events of %s", name, tc.ID)
	}
}

// saysNotRun reports whether a result tells the model its tool did not run.
func saysNotRun(r *ToolResult) bool {
	if r.Error == nil {
		return false
	}
	switch r.Error.Kind {
	case KindDenied, KindNotFound, KindInvalidArgs:
		return true
	}
	return strings.HasPrefix(r.Error.Message, "not run") || strings.Contains(r.Error.Message, "did not run")
}
