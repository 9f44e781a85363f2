package toolloop

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// report is one step of a tool's reporting schedule: wait, then report
// progress or partial output.
type report struct {
	wait    time.Duration
	partial bool
}

// timedEvent is an event and the bubble's time when it was emitted.
type timedEvent struct {
	Event
	at time.Time
}

// reportingRun runs, inside the caller's synctest bubble, one call of a
// tool that reports on schedule and then waits tail before it returns,
// and returns the call's events with the time each was emitted.
func reportingRun(t *testing.T, interval time.Duration, schedule []report, tail time.Duration) []timedEvent {
	t.Helper()
	tool := plainTool{spec: ToolSpec{Name: "reporter", Description: "Reports.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		run: func(_ context.Context, c *Call) (*ToolResult, error) {
			for i, r := range schedule {
				time.Sleep(r.wait)
				if r.partial {
					c.ReportPartial("line\n")
				} else {
					c.ReportProgress(Progress{Done: float64(i + 1), Total: float64(len(schedule))})
				}
			}
			time.Sleep(tail)
			return TextResult("ok"), nil
		}}
	var reg ToolRegistry
	require.NoError(t, reg.Register(tool))
	var mu sync.Mutex
	var events []timedEvent
	l := &AgentLoop{Tools: &reg, Limits: Limits{ReportInterval: interval},
		OnEvent: func(e Event) {
			mu.Lock()
			events = append(events, timedEvent{e, time.Now()})
			mu.Unlock()
		}}
	res, _ := l.RunCall(context.Background(), "r", 1, ToolCall{ID: "c", Name: "reporter", Arguments: json.RawMessage(`{}`)}, nil)
	require.False(t, res.IsError(), res.Text())
	mu.Lock()
	defer mu.Unlock()
	return events
}

// assertSpaced checks that no two progress events and no two
// partial-output events are closer than interval, except, if finalFlush,
// the last of each kind when it is sent with the completion event; and
// that every report is counted once.
func assertSpaced(t *testing.T, events []timedEvent, interval time.Duration, schedule []report, finalFlush bool) {
	t.Helper()
	kind := func(e Event) int {
		switch e.Type {
		case EventProgress:
			return 0
		case EventPartialResult:
			return 1
		}
		return -1
	}
	var done time.Time
	lastOf := [2]int{-1, -1}
	for i, e := range events {
		if e.Type == EventComplete {
			done = e.at
		} else if k := kind(e.Event); k >= 0 {
			require.True(t, done.IsZero(), "event %d (%s) after the completion", i, e.Type)
			lastOf[k] = i
		}
	}
	require.False(t, done.IsZero(), "no completion event")
	var last [2]time.Time
	var seen [2]bool
	var counted [2]int
	for i, e := range events {
		k := kind(e.Event)
		if k < 0 {
			continue
		}
		counted[k] += max(e.Coalesced, 1)
		final := finalFlush && i == lastOf[k] && e.at.Equal(done)
		if gap := e.at.Sub(last[k]); seen[k] && !final {
			assert.GreaterOrEqual(t, gap, interval, "event %d (%s) came %v after the one before", i, e.Type, gap)
		}
		seen[k], last[k] = true, e.at
	}
	var want [2]int
	for _, r := range schedule {
		if r.partial {
			want[1]++
		} else {
			want[0]++
		}
	}
	assert.Equal(t, want, counted, "every report is counted once (progress, partial)")
}

// TestReportIntervalHolds: no two progress events (or partial-output
// events) of one call come closer together than Limits.ReportInterval,
// whatever the tool's schedule: the timer that sends what was held back
// waits for the interval since the last event, not since the report that
// armed it. Issue 35 measured pairs 1ms apart.
func TestReportIntervalHolds(t *testing.T) {
	const interval = 100 * time.Millisecond
	ms := time.Millisecond
	t.Run("timer after an early flush", func(t *testing.T) {
		// 0: sent; 50: held, arms the timer; 100: sent (the interval
		// passed); 101: held. The timer armed at 50 must not send it at
		// 150, 50ms after the last event.
		schedule := []report{{0, false}, {50 * ms, false}, {50 * ms, false}, {1 * ms, false}}
		synctest.Test(t, func(t *testing.T) {
			events := reportingRun(t, interval, schedule, time.Second)
			assertSpaced(t, events, interval, schedule, false)
		})
	})
	t.Run("both kinds", func(t *testing.T) {
		schedule := []report{{0, true}, {0, false}, {50 * ms, true}, {50 * ms, false}, {1 * ms, true}, {49 * ms, false}, {ms, true}}
		synctest.Test(t, func(t *testing.T) {
			events := reportingRun(t, interval, schedule, time.Second)
			assertSpaced(t, events, interval, schedule, false)
		})
	})
	for seed := range uint64(20) {
		t.Run("random", func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 35))
			schedule := make([]report, 300)
			for i := range schedule {
				schedule[i] = report{time.Duration(rnd.Int64N(int64(2*interval/ms))) * ms / time.Duration(1+rnd.IntN(4)), rnd.IntN(2) == 0}
			}
			synctest.Test(t, func(t *testing.T) {
				events := reportingRun(t, interval, schedule, time.Second)
				assertSpaced(t, events, interval, schedule, false)
			})
		})
	}
}

// TestReportFinalFlush: what a call reported and the interval held back
// when the tool returns is sent before its completion event, at once
// (the one exception to the interval), and nothing comes after it.
func TestReportFinalFlush(t *testing.T) {
	const interval = 100 * time.Millisecond
	schedule := []report{{0, false}, {0, true}, {10 * time.Millisecond, false}, {0, true}}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		events := reportingRun(t, interval, schedule, 0)
		assertSpaced(t, events, interval, schedule, true)
		var kinds []EventType
		for _, e := range events {
			switch e.Type {
			case EventProgress, EventPartialResult, EventComplete:
				kinds = append(kinds, e.Type)
				if e.Type == EventComplete {
					assert.Equal(t, 10*time.Millisecond, e.at.Sub(start), "the completion is not held back")
				}
			}
		}
		assert.Equal(t, []EventType{EventProgress, EventPartialResult, EventPartialResult, EventProgress, EventComplete}, kinds)
	})
}
