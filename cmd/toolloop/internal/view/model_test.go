package view

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/eventlog"
)

func buildLog(t testing.TB, log []byte, opts Options) *page {
	t.Helper()
	p, err := build(eventlog.Events(bytes.NewReader(log)), &opts)
	require.NoError(t, err)
	return p
}

// calls maps the calls of a run and of its children by ID.
func callsByID(runs []*run) map[string]*call {
	out := map[string]*call{}
	var walk func(rs []*run)
	walk = func(rs []*run) {
		for _, r := range rs {
			walk(r.Parts)
			for _, t := range r.Turns {
				for _, c := range t.Calls {
					out[c.ID] = c
					walk(c.Runs)
				}
			}
		}
	}
	walk(runs)
	return out
}

func noteKinds(notes []*note) []string {
	var kinds []string
	for _, n := range notes {
		kinds = append(kinds, n.Kind)
	}
	return kinds
}

func TestModelThreeTurns(t *testing.T) {
	raw, err := os.ReadFile(threeTurnsLog)
	require.NoError(t, err)
	p := buildLog(t, raw, Options{})

	require.Len(t, p.Runs, 1, "the resumed run is the same run")
	r := p.Runs[0]
	assert.True(t, r.Ended)
	assert.False(t, r.Paused, "the pause was resumed")
	assert.Equal(t, "stop", r.Stop)
	require.NotNil(t, r.Acct)
	assert.EqualValues(t, 1200+2600+3900+300+420, r.Acct.Usage.InputTokens, "the run's usage is its own turns' and the sub-agent's")
	require.Len(t, r.Turns, 3)
	assert.Equal(t, 3, p.Turns)
	want := countCalls(t, raw)
	assert.Equal(t, want.total, p.Calls)
	assert.Equal(t, 11, p.Calls, "ten calls and the sub-agent's one")
	assert.Equal(t, map[string]int{"ok": 9, "error": 1, "denied": 1}, p.Counts)
	assert.Equal(t, []string{"delete_tree", "deploy", "edit_file", "get_weather", "researcher", "search_docs", "write_file"}, p.Tools)

	for i, turn := range r.Turns {
		assert.Equal(t, i+1, turn.N)
		require.NotNil(t, turn.Usage, "turn %d", turn.N)
		require.NotNil(t, turn.Cost, "gpt-4.1 has a price")
		assert.Positive(t, *turn.Cost)
		assert.Equal(t, "gpt-4.1-2025-04-14", turn.Model)
		assert.GreaterOrEqual(t, turn.ModelDur, 0.0, "the log has the model's request and response")
		assert.GreaterOrEqual(t, turn.Dur, 0.0)
	}
	t1, t2, t3 := r.Turns[0], r.Turns[1], r.Turns[2]
	assert.Len(t, t1.Calls, 5)
	assert.Len(t, t2.Calls, 5)
	assert.Empty(t, t3.Calls)
	assert.Contains(t, t3.Text.S, "weather-api is deployed")
	assert.Equal(t, "stop", t3.Stop)
	assert.GreaterOrEqual(t, t1.Parallel, 3, "the weather and search calls ran at once")
	assert.GreaterOrEqual(t, t2.Parallel, 2, "the search and the sub-agent ran at once")
	assert.Equal(t, []string{"pause", "pause", "resume"}, noteKinds(t2.Notes))
	assert.Equal(t, []string{"end"}, noteKinds(t3.Notes))
	assert.Equal(t, []string{"start"}, noteKinds(r.Notes))

	calls := callsByID(p.Runs)
	// The parallel calls of turn 1 overlap in time, and each lasted at
	// least its tool's sleep.
	c1, c2 := calls["c1"], calls["c2"]
	assert.GreaterOrEqual(t, c1.Dur, 40.0)
	assert.GreaterOrEqual(t, c2.Dur, 40.0)
	assert.Less(t, c2.At, c1.At+c1.Dur, "c1 and c2 overlap")
	assert.Less(t, c1.At, c2.At+c2.Dur, "c1 and c2 overlap")
	require.Len(t, c1.Hooks, 1)
	assert.Equal(t, "pre_tool_use", c1.Hooks[0].Hook)
	assert.Equal(t, "context", c1.Hooks[0].Effect)

	assert.Equal(t, statusError, calls["c3"].Status)
	assert.Equal(t, "execution_failed", calls["c3"].Kind)
	assert.Contains(t, calls["c3"].Message.S, "connection reset")

	c4 := calls["c4"]
	assert.Equal(t, statusDenied, c4.Status)
	require.NotNil(t, c4.Verdict)
	assert.Equal(t, "deny", c4.Verdict.Decision)
	assert.Equal(t, "no-delete", c4.Verdict.Rule)

	c5 := calls["c5"]
	assert.True(t, c5.Truncated, "the loop cut the result to MaxResultBytes")
	assert.Greater(t, c5.Bytes, 2048)
	assert.LessOrEqual(t, len(c5.Result.S), 2048+200)

	assert.Equal(t, hostile, calls["c8"].Result.S, "the page's data holds the text as it was")

	c6 := calls["c6"]
	require.Len(t, c6.Diff, 1)
	assert.Equal(t, "notes.md", c6.Diff[0].Path)
	assert.Equal(t, "new file", c6.Diff[0].Note)
	assert.Equal(t, []string{"@@ -0,0 +1,4 @@", "+# Notes", "+", "+Paris: sunny", "+Tokyo: sunny"}, c6.Diff[0].Lines)
	c7 := calls["c7"]
	require.Len(t, c7.Diff, 1)
	assert.Equal(t, []string{"@@ edit 1 @@", "-Tokyo: sunny", "+Tokyo: 18°C, sunny", "+London: rain"}, c7.Diff[0].Lines)
	assert.Equal(t, "builtin:workspace", c7.Source)

	c9 := calls["c9"]
	require.Len(t, c9.Runs, 1, "the researcher's run hangs under its call")
	child := c9.Runs[0]
	assert.Equal(t, r.ID, child.ParentRun)
	assert.Equal(t, "c9", child.ParentCall)
	require.Len(t, child.Turns, 2)
	s1 := calls["s1"]
	assert.Equal(t, 1, s1.Depth)
	assert.Equal(t, statusOK, s1.Status)
	assert.Equal(t, 0, c9.Depth)
	assert.Contains(t, child.Turns[1].Text.S, "retries 3 times")

	c10 := calls["c10"]
	assert.Equal(t, statusOK, c10.Status, "approved on resume, then run")
	assert.True(t, c10.Asked)
	require.NotNil(t, c10.Approval)
	assert.True(t, c10.Approval.Approved)
	assert.Equal(t, "ask", c10.Verdict.Decision)
}

func TestModelLongRun(t *testing.T) {
	raw, err := longRun()
	require.NoError(t, err)
	p := buildLog(t, raw, Options{})
	want := countCalls(t, raw)
	require.Len(t, p.Runs, 1)
	assert.Equal(t, longRunTurns, p.Turns)
	assert.Equal(t, want.total, p.Calls)
	assert.Equal(t, want.byStatus, p.Counts)
	for i, turn := range p.Runs[0].Turns {
		n := i + 1
		assert.Equal(t, n, turn.N)
		if n < longRunTurns {
			assert.Len(t, turn.Calls, 1+n%4, "turn %d", n)
		}
		assert.LessOrEqual(t, turn.Parallel, len(turn.Calls))
		for _, c := range turn.Calls {
			assert.GreaterOrEqual(t, c.At, turn.At, "call %s starts within its turn", c.ID)
			assert.LessOrEqual(t, c.At+c.Dur, turn.At+turn.Dur+0.001, "call %s ends within its turn", c.ID)
		}
	}
}
