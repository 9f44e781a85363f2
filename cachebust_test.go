package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// busts returns the cache.bust events of rec.
func busts(rec *looptest.Recorder) []toolloop.Event { return rec.Of(toolloop.EventCacheBust) }

// bigCalls scripts n turns that each call the tool big, then a text
// answer.
func bigCalls(n int) []looptest.Turn {
	turns := make([]looptest.Turn, 0, n+1)
	for i := range n {
		turns = append(turns, looptest.Turn{Reply: looptest.Calls(looptest.Call(fmt.Sprintf("c%d", i+1), "big", `{}`))})
	}
	return append(turns, looptest.Turn{Reply: looptest.Text("done")})
}

func TestCacheBust(t *testing.T) {
	type want struct {
		turn   int
		reason toolloop.CacheBustReason
		detail string
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn
		input []toolloop.Message
		want  []want
	}{{
		name: "a plain run of many turns busts nothing",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			l.Tools = bigTools(2000)
			return bigCalls(5)
		},
	}, {
		name: "a tool filter that offers another set on turn 3",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			var reg toolloop.ToolRegistry
			counted(t, &reg, "read", "reads")
			counted(t, &reg, "write", "writes")
			l.Tools = &reg
			l.ToolFilter = func(st *toolloop.TurnState, ti *toolloop.ToolInfo) bool {
				return ti.Name == "read" || st.Turn >= 3
			}
			return []looptest.Turn{
				{Reply: looptest.Calls(looptest.Call("c1", "read", `{}`))},
				{Reply: looptest.Calls(looptest.Call("c2", "read", `{}`))},
				{Reply: looptest.Calls(looptest.Call("c3", "write", `{}`))},
				{Reply: looptest.Text("done")},
			}
		},
		want: []want{{3, toolloop.BustTools, "added write"}},
	}, {
		name: "a tool search loads a deferred tool",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			l.Tools, _ = deferredRegistry(t)
			l.Deferred = deferredTools
			return []looptest.Turn{
				{Reply: looptest.Calls(looptest.Call("s1", toolloop.ToolSearchName, `{"query":"weather forecast","max_results":1}`))},
				{Reply: looptest.Calls(looptest.Call("w1", "get_weather", `{}`))},
				{Reply: looptest.Text("sunny")},
			}
		},
		want: []want{{2, toolloop.BustTools, "added get_weather"}},
	}, {
		name: "cleared results",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			l.Tools = bigTools(2000)
			l.ContextManagers = []toolloop.ContextManager{&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1}, KeepTurns: 1}}
			return bigCalls(3)
		},
		// Before turn 3 the results of turn 1 are cleared, before turn 4
		// those of turn 2.
		want: []want{{3, toolloop.BustEdit, "clear_tool_results"}, {4, toolloop.BustEdit, "clear_tool_results"}},
	}, {
		name: "a compaction",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			l.Tools = bigTools(2000)
			l.ContextManagers = []toolloop.ContextManager{&toolloop.Compactor{
				Model:     looptest.Script(looptest.Text("the summary")),
				When:      toolloop.Threshold{Tokens: 1500},
				KeepTurns: 1,
			}}
			return bigCalls(3)
		},
		input: []toolloop.Message{toolloop.SystemMessage("sys"), toolloop.UserMessage("go")},
		want:  []want{{4, toolloop.BustEdit, "compact"}},
	}, {
		name: "the wrap-up turn forbids tools",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			l.Tools = bigTools(10)
			l.Budget = toolloop.Budget{MaxTurns: 2, WrapUp: true}
			return bigCalls(2)
		},
		want: []want{{3, toolloop.BustToolChoice, "auto → none"}},
	}, {
		name: "a system prompt that changes every turn",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			l.Tools = bigTools(10)
			l.Hooks.BeforeModel = []toolloop.BeforeModelHook{func(_ context.Context, turn *toolloop.ModelTurn) error {
				sys := toolloop.SystemMessage(fmt.Sprintf("It is turn %d.", turn.Turn))
				turn.Request.Messages = append([]toolloop.Message{sys}, turn.Request.Messages...)
				return nil
			}}
			return bigCalls(2)
		},
		want: []want{{2, toolloop.BustSystem, ""}, {3, toolloop.BustSystem, ""}},
	}, {
		name: "a hook that sends an equal copy of the transcript busts nothing",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			l.Tools = bigTools(10)
			l.Hooks.BeforeModel = []toolloop.BeforeModelHook{func(_ context.Context, turn *toolloop.ModelTurn) error {
				b, err := json.Marshal(turn.Request.Messages)
				if err != nil {
					return err
				}
				var msgs []toolloop.Message
				if err := json.Unmarshal(b, &msgs); err != nil {
					return err
				}
				sys := toolloop.SystemMessage("You are terse.")
				turn.Request.Messages = append([]toolloop.Message{sys}, msgs...)
				return nil
			}}
			return bigCalls(3)
		},
	}, {
		name: "a hook that rewrites an old message",
		setup: func(t *testing.T, l *toolloop.AgentLoop) []looptest.Turn {
			l.Tools = bigTools(10)
			l.Hooks.BeforeModel = []toolloop.BeforeModelHook{func(_ context.Context, turn *toolloop.ModelTurn) error {
				msgs := append([]toolloop.Message(nil), turn.Request.Messages...)
				msgs[0] = toolloop.UserMessage(fmt.Sprintf("go (turn %d)", turn.Turn))
				turn.Request.Messages = msgs
				return nil
			}}
			return bigCalls(1)
		},
		want: []want{{2, toolloop.BustMessages, ""}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &looptest.Recorder{}
			l := &toolloop.AgentLoop{OnEvent: rec.Record}
			l.Model = looptest.NewModel(t, tt.setup(t, l)...)
			in := tt.input
			if in == nil {
				in = []toolloop.Message{toolloop.UserMessage("go")}
			}
			_, err := l.Run(context.Background(), in)
			if l.Budget.WrapUp {
				require.ErrorIs(t, err, toolloop.ErrBudget)
			} else {
				require.NoError(t, err)
			}
			var got []want
			for _, e := range busts(rec) {
				require.NotNil(t, e.CacheBust)
				got = append(got, want{e.Turn, e.CacheBust.Reason, e.CacheBust.Detail})
			}
			assert.Equal(t, tt.want, got)
			// Each bust comes just before its turn's request.
			types := rec.Types()
			for i, typ := range types {
				if typ == toolloop.EventCacheBust {
					require.Less(t, i+1, len(types))
					assert.Equal(t, toolloop.EventModelRequest, types[i+1])
				}
			}
		})
	}
}

// TestCacheBustKept checks what a bust says of the prefix kept: the
// index of the first message that differs and the previous request's
// length.
func TestCacheBustKept(t *testing.T) {
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Tools: bigTools(2000), OnEvent: rec.Record,
		ContextManagers: []toolloop.ContextManager{&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1}, KeepTurns: 1}}}
	m := looptest.NewModel(t, bigCalls(2)...)
	l.Model = m
	_, err := l.Run(context.Background(), []toolloop.Message{toolloop.SystemMessage("sys"), toolloop.UserMessage("go")})
	require.NoError(t, err)
	bs := busts(rec)
	require.Len(t, bs, 1)
	b := bs[0].CacheBust
	// Turn 2 sent sys, go, call c1, result c1; turn 3 has c1's result
	// (index 3) cleared.
	assert.Equal(t, toolloop.CacheBust{Reason: toolloop.BustEdit, Detail: "clear_tool_results", Kept: 3, Previous: 4}, *b)
	reqs := m.Requests()
	require.Len(t, reqs, 3)
	assert.Len(t, reqs[1].Messages, b.Previous)
}

// TestCacheBustUnobserved: a run nobody observes compares nothing.
func TestCacheBustUnobserved(t *testing.T) {
	var reg toolloop.ToolRegistry
	counted(t, &reg, "read", "reads")
	counted(t, &reg, "write", "writes")
	l := &toolloop.AgentLoop{Tools: &reg, ToolFilter: func(st *toolloop.TurnState, ti *toolloop.ToolInfo) bool {
		return ti.Name == "read" || st.Turn >= 2
	}}
	l.Model = looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "read", `{}`))},
		looptest.Turn{Reply: looptest.Text("done")})
	_, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	// And a stream sees the same events as OnEvent.
	l.Model = looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "read", `{}`))},
		looptest.Turn{Reply: looptest.Text("done")})
	var got []toolloop.CacheBust
	for e := range l.RunStream(context.Background(), []toolloop.Message{toolloop.UserMessage("go")}).Events() {
		if e.Type == toolloop.EventCacheBust {
			got = append(got, *e.CacheBust)
		}
	}
	assert.Equal(t, []toolloop.CacheBust{{Reason: toolloop.BustTools, Detail: "added write", Kept: 1, Previous: 1}}, got)
}

// TestCacheBustNotAfterResume: the first request of a resumed run has
// nothing to compare with, so it busts nothing, whatever changed.
func TestCacheBustNotAfterResume(t *testing.T) {
	l, st, _ := pausedRun(t)
	rec := &looptest.Recorder{}
	l.OnEvent = rec.Record
	l.Hooks.BeforeModel = []toolloop.BeforeModelHook{func(_ context.Context, turn *toolloop.ModelTurn) error {
		turn.Request.Tools = nil // another set of tools after the pause
		return nil
	}}
	_, err := l.Resume(context.Background(), st, map[string]toolloop.Approval{"w1": {Approved: true}})
	require.NoError(t, err)
	require.Len(t, rec.Of(toolloop.EventModelRequest), 1)
	assert.Empty(t, busts(rec))
}

func TestCacheHitRatio(t *testing.T) {
	tests := []struct {
		name string
		u    toolloop.Usage
		want float64
	}{
		{"no input", toolloop.Usage{}, 0},
		{"no input but output", toolloop.Usage{OutputTokens: 10, CacheReadTokens: 5}, 0},
		{"nothing cached", toolloop.Usage{InputTokens: 1000}, 0},
		{"a tenth", toolloop.Usage{InputTokens: 1000, CacheReadTokens: 100, CacheWriteTokens: 900}, 0.1},
		{"all of it", toolloop.Usage{InputTokens: 1000, CacheReadTokens: 1000}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, tt.u.CacheHitRatio(), 1e-12)
		})
	}
	t.Run("a run's ratio is of its summed usage", func(t *testing.T) {
		reply := func(r *toolloop.Response, in, cached int64) *toolloop.Response {
			r.Usage = toolloop.Usage{InputTokens: in, OutputTokens: 10, CacheReadTokens: cached}
			return r
		}
		l := &toolloop.AgentLoop{Tools: bigTools(10), Model: looptest.NewModel(t,
			looptest.Turn{Reply: reply(looptest.Calls(looptest.Call("c1", "big", `{}`)), 1000, 0)},
			looptest.Turn{Reply: reply(looptest.Text("done"), 1200, 1000)})}
		res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
		require.NoError(t, err)
		assert.InDelta(t, 1000.0/2200, res.Usage.CacheHitRatio(), 1e-12)
	})
}

// TestClearToolResultsBatches measures how often ClearToolResults edits
// the transcript, and so busts the prompt cache, over a long run: by
// default rarely, in batches that free at least half the threshold, never
// on every turn.
func TestClearToolResultsBatches(t *testing.T) {
	const turns = 40 // each turn adds a result of about 1,000 tokens
	tests := []struct {
		name   string
		clear  *toolloop.ClearToolResults
		window int
		// edits is how many clearings the run makes; threshold and
		// minFreed are what each must have passed and freed.
		edits, threshold, minFreed int
	}{
		// Half the window, 10,000 tokens, is passed before turn 11; a
		// clearing must free 5,000 tokens and keeps the last 3 turns,
		// so the next waits until 5 more results are old enough: the
		// clearings come before turns 11, 18, 25, 32 and 38.
		{"the default, a window of 20,000", &toolloop.ClearToolResults{}, 20_000, 5, 10_000, 5_000},
		// 100,000 tokens is never reached: nothing is cleared.
		{"the default, a window of 1,000,000", &toolloop.ClearToolResults{}, 1_000_000, 0, 100_000, 50_000},
		{"the default, a window unknown", &toolloop.ClearToolResults{}, 0, 0, 100_000, 50_000},
		{"a threshold and MinFreed of its own", &toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 8_000}, MinFreed: 6_000}, 20_000, 5, 8_000, 6_000},
		{"every turn, keeping 1", &toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1}, KeepTurns: 1}, 0, turns - 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &looptest.Recorder{}
			l := &toolloop.AgentLoop{Tools: bigTools(4000), OnEvent: rec.Record, Model: looptest.NewModel(t, bigCalls(turns)...),
				ContextManagers: []toolloop.ContextManager{tt.clear}, Budget: toolloop.Budget{MaxTurns: turns + 1}}
			if tt.window > 0 {
				l.ModelTable = toolloop.ModelTable{"": {ContextWindow: tt.window}}
			}
			res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
			require.NoError(t, err)
			assert.Equal(t, tt.edits, countEdits(rec, "clear_tool_results"))
			assert.Len(t, busts(rec), tt.edits, "each clearing busts the cache once")
			for _, e := range rec.Of(toolloop.EventTranscriptEdited) {
				assert.GreaterOrEqual(t, e.Edit.TokensBefore, tt.threshold, "a clearing before the threshold")
				assert.GreaterOrEqual(t, e.Edit.TokensBefore-e.Edit.TokensAfter, tt.minFreed, "a clearing that frees too little")
			}
			keep := tt.clear.KeepTurns
			if keep == 0 {
				keep = toolloop.DefaultKeepTurns
			}
			intact := 0
			for _, r := range looptest.Results(res.Messages) {
				if !r.Meta.Cleared {
					intact++
				}
			}
			assert.GreaterOrEqual(t, intact, keep, "a kept turn's result was cleared")
		})
	}
}

// TestCompactorRarely measures how often a Compactor edits the
// transcript over a long run: a compaction leaves the KeepTurns most
// recent turns, and the next waits until the transcript has grown back
// to the threshold, several turns later.
func TestCompactorRarely(t *testing.T) {
	const turns = 30
	rec := &looptest.Recorder{}
	summarizer := looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("the summary"), Times: looptest.Forever})
	l := &toolloop.AgentLoop{Tools: bigTools(2000), OnEvent: rec.Record, Model: looptest.NewModel(t, bigCalls(turns)...),
		ContextManagers: []toolloop.ContextManager{&toolloop.Compactor{Model: summarizer, When: toolloop.Threshold{Tokens: 4000}}},
		Budget:          toolloop.Budget{MaxTurns: turns + 1}}
	_, err := l.Run(context.Background(), []toolloop.Message{toolloop.SystemMessage("sys"), toolloop.UserMessage("go")})
	require.NoError(t, err)
	n := countEdits(rec, "compact")
	t.Logf("%d compactions in %d turns", n, turns+1)
	assert.Positive(t, n)
	assert.LessOrEqual(t, n, turns/4, "at most one compaction every four turns")
	assert.Len(t, busts(rec), n, "each compaction busts the cache once")
}

// TestCacheBustSteering: messages sent into a run, and follow-ups, are
// appended to its transcript, which busts nothing.
func TestCacheBustSteering(t *testing.T) {
	in := &toolloop.Inbox{}
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("step", "Takes a step.", func(context.Context, struct{}) (any, error) {
		in.Send(toolloop.UserMessage("and mind the tests"))
		return "stepped", nil
	}))
	in.FollowUp(toolloop.UserMessage("and then?"))
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Tools: &reg, OnEvent: rec.Record, Model: looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "step", `{}`))},
		looptest.Turn{Reply: looptest.Text("first")},
		looptest.Turn{Reply: looptest.Text("done")})}
	res, err := l.Run(toolloop.WithInbox(context.Background(), in), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Turns)
	assert.Len(t, rec.Of(toolloop.EventUserMessage), 2, "both messages were delivered")
	assert.Empty(t, busts(rec))
}
