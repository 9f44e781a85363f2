package view

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// innerIDs lists the IDs and statuses of a program's inner calls, in the
// page's order.
func innerIDs(c *call) []string {
	var out []string
	for _, ic := range c.Inner {
		out = append(out, ic.ID+" "+ic.Tool+" "+ic.Status)
	}
	return out
}

// codeModeEvents reads the recorded code-mode log, keeping the events
// keep accepts.
func codeModeEvents(t testing.TB, keep func(e *toolloop.Event) bool) []byte {
	t.Helper()
	raw, err := os.ReadFile(codeModeLog)
	require.NoError(t, err)
	var out bytes.Buffer
	for e, err := range eventlog.Events(bytes.NewReader(raw)) {
		require.NoError(t, err)
		if keep != nil && !keep(&e) {
			continue
		}
		line, err := json.Marshal(e)
		require.NoError(t, err)
		out.Write(append(line, '\n'))
	}
	return out.Bytes()
}

// untilResumed keeps the events of the code-mode log up to its pause:
// the log of a run that waits for approval.
func untilResumed() func(e *toolloop.Event) bool {
	resumed := false
	return func(e *toolloop.Event) bool {
		resumed = resumed || e.Type == toolloop.EventRunResumed
		return !resumed
	}
}

var wantLargestInner = []string{
	"c1/1 list_files ok", "c1/2 stat ok", "c1/3 stat ok", "c1/4 stat ok", "c1/5 stat ok",
	"c1/6 read_file error", "c1/7 read_file ok", "c1/8 read_file ok", "c1/9 write_file ok",
}

func TestModelCodeMode(t *testing.T) {
	raw, err := os.ReadFile(codeModeLog)
	require.NoError(t, err)
	p := buildLog(t, raw, Options{})
	require.Len(t, p.Runs, 1)
	r := p.Runs[0]
	require.Len(t, r.Turns, 3)
	t1, t2 := r.Turns[0], r.Turns[1]

	// The inner calls are not calls of the turn: they hang under their
	// program's call, in the order of their numbers.
	require.Len(t, t1.Calls, 2, "the program and the plain call beside it")
	c1, c2 := t1.Calls[0], t1.Calls[1]
	assert.Equal(t, "c1", c1.ID)
	assert.Equal(t, "c2", c2.ID)
	assert.Empty(t, c2.Inner)
	assert.Nil(t, c2.Program, "a plain call is no program")
	assert.Equal(t, wantLargestInner, innerIDs(c1), "each inner call once: the re-run on resume added none")

	require.NotNil(t, c1.Program)
	assert.Equal(t, largestProgram, c1.Program.Code.S, "the source as the model wrote it")
	assert.Equal(t, 16, c1.Program.Lines)
	assert.Equal(t, 9, c1.Program.Calls, "the result's ResultMeta.InnerCalls")
	assert.True(t, c1.Program.Paused)
	assert.Equal(t, 8, c1.Program.Served, "eight inner calls were answered from the journal on resume")
	assert.Equal(t, statusOK, c1.Status)
	assert.Equal(t, "gone.go, loop.go, view.go\n\nconsole:\nskipped gone.go: not_found\nwrote REPORT.md", c1.Result.S,
		"the output: the return value, then the console")
	assert.Equal(t, 0, c1.Depth)

	byID := map[string]*call{}
	for _, ic := range c1.Inner {
		byID[ic.ID] = ic
		assert.Equal(t, "c1", ic.Parent)
		assert.Equal(t, 0, ic.Depth, "an inner call is of the same run")
		assert.Nil(t, ic.Program)
		require.NotNil(t, ic.Args, "%s has its arguments", ic.ID)
		require.NotNil(t, ic.Verdict, "%s has its guard's verdict", ic.ID)
		assert.GreaterOrEqual(t, ic.At, c1.At, "%s ran within its program", ic.ID)
		assert.LessOrEqual(t, ic.At+ic.Dur, c1.At+c1.Dur+0.001, "%s ran within its program", ic.ID)
	}
	assert.GreaterOrEqual(t, byID["c1/2"].Dur, 15.0, "each inner call has its own duration")
	gone := byID["c1/6"]
	assert.Equal(t, "not_found", gone.Kind)
	assert.Contains(t, gone.Message.S, "no such file")
	w := byID["c1/9"]
	assert.True(t, w.Asked)
	assert.Equal(t, "ask", w.Verdict.Decision)
	require.NotNil(t, w.Approval, "the decision on resume reached the inner call")
	assert.True(t, w.Approval.Approved)
	assert.Contains(t, w.Result.S, "REPORT.md")
	// The stats ran at once.
	s2, s3 := byID["c1/2"], byID["c1/3"]
	assert.Less(t, s2.At, s3.At+s3.Dur)
	assert.Less(t, s3.At, s2.At+s2.Dur)

	require.Len(t, t2.Calls, 1)
	c3 := t2.Calls[0]
	assert.Equal(t, []string{"c3/1 read_file ok", "c3/2 delete_tree denied"}, innerIDs(c3))
	assert.Equal(t, "no-delete", c3.Inner[1].Verdict.Rule)
	assert.Equal(t, statusError, c3.Status)
	assert.Equal(t, "execution_failed", c3.Kind)
	assert.Contains(t, c3.Message.S, "cleanup failed")
	assert.Equal(t, hostileProgram, c3.Program.Code.S, "the hostile source is data, as it was")
	assert.False(t, c3.Program.Paused)
	assert.Equal(t, 2, c3.Program.Calls)

	// The page counts the inner calls among its calls, as the run's
	// accounting does.
	want := countCalls(t, raw)
	assert.Equal(t, want.total, p.Calls)
	assert.Equal(t, 14, p.Calls, "three calls of the model and eleven inner calls")
	assert.Equal(t, want.byStatus, p.Counts)
	assert.Equal(t, []string{"delete_tree", "list_files", "read_file", "run_code", "stat", "write_file"}, p.Tools)
}

func TestModelCodeModePaused(t *testing.T) {
	p := buildLog(t, codeModeEvents(t, untilResumed()), Options{})
	r := p.Runs[0]
	assert.True(t, r.Paused)
	require.Len(t, r.Turns, 1)
	require.Len(t, r.Turns[0].Calls, 2)
	c1 := r.Turns[0].Calls[0]
	assert.Equal(t, statusPending, c1.Status, "the program waits on its inner call")
	want := append(append([]string{}, wantLargestInner[:8]...), "c1/9 write_file pending")
	assert.Equal(t, want, innerIDs(c1))
	assert.True(t, c1.Inner[8].Asked)
	assert.Equal(t, 8, c1.Program.Served)
	assert.Equal(t, 9, c1.Program.Calls)
	assert.Equal(t, -1.0, c1.Dur)
	assert.Equal(t, map[string]int{"ok": 8, "error": 1, "pending": 2}, p.Counts)
	assert.Equal(t, largestProgram, c1.Program.Code.S)
}

func TestModelCodeModeFromTheJournal(t *testing.T) {
	// A log without the transient events, and without the completions of
	// the inner calls before the pause (a log that was cut and resumed
	// from its pause state): the rows come from the program's journal in
	// run.paused, and the program still lists each inner call once.
	resumed := false
	raw := codeModeEvents(t, func(e *toolloop.Event) bool {
		resumed = resumed || e.Type == toolloop.EventRunResumed
		if e.Type.Transient() {
			return false
		}
		return resumed || e.ParentCallID != "c1"
	})
	p := buildLog(t, raw, Options{})
	c1 := p.Runs[0].Turns[0].Calls[0]
	assert.Equal(t, wantLargestInner, innerIDs(c1))
	assert.Equal(t, largestProgram, c1.Program.Code.S, "from the model's response")
	gone := c1.Inner[5]
	assert.Equal(t, "not_found", gone.Kind, "the journal has the result")
	assert.JSONEq(t, `{"path":"gone.go"}`, string(gone.args))
	for _, ic := range c1.Inner {
		assert.GreaterOrEqual(t, ic.Dur, 0.0, "%s is complete", ic.ID)
	}
}

func TestModelInnerCallOfChildRun(t *testing.T) {
	// An agent used as a tool whose program makes inner calls: its events
	// reach the parent's log with ParentRunID and ParentCallID the
	// parent's, and the inner call is known by its ID.
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(ms int, typ toolloop.EventType, run, id, tool string) toolloop.Event {
		e := toolloop.Event{Type: typ, Time: t0.Add(time.Duration(ms) * time.Millisecond), RunID: run, Turn: 1, CallID: id, Tool: tool}
		if run == "child" {
			e.ParentRunID, e.ParentCallID = "top", "a1"
		}
		if typ == toolloop.EventComplete {
			e.Result = toolloop.TextResult(id + " done")
			e.Result.CallID, e.Result.Name = id, tool
		}
		return e
	}
	prog := ev(1, toolloop.EventStart, "child", "p1", "run_code")
	prog.Arguments = json.RawMessage(`{"code":"return await tools.read({path: \"x\"})"}`)
	progDone := ev(9, toolloop.EventComplete, "child", "p1", "run_code")
	progDone.Result.Meta.InnerCalls = 1
	log := []toolloop.Event{
		ev(0, toolloop.EventStart, "top", "a1", "researcher"),
		prog,
		ev(2, toolloop.EventStart, "child", "p1/1", "read"),
		ev(5, toolloop.EventComplete, "child", "p1/1", "read"),
		ev(6, toolloop.EventComplete, "child", "q/1", "read"), // no call q: not an inner call
		progDone,
		ev(10, toolloop.EventComplete, "top", "a1", "researcher"),
	}
	p, err := build(events(log...), &Options{})
	require.NoError(t, err)
	calls := callsByID(p.Runs)
	a1 := calls["a1"]
	require.Len(t, a1.Runs, 1)
	child := a1.Runs[0]
	require.Len(t, child.Turns, 1)
	var ids []string
	for _, c := range child.Turns[0].Calls {
		ids = append(ids, c.ID)
	}
	assert.Equal(t, []string{"p1", "q/1"}, ids)
	p1 := calls["p1"]
	assert.Equal(t, []string{"p1/1 read ok"}, innerIDs(p1))
	assert.Equal(t, 1, p1.Inner[0].Depth)
	assert.Equal(t, `return await tools.read({path: "x"})`, p1.Program.Code.S)
	assert.Equal(t, 1, p1.Program.Calls)
	assert.Equal(t, 4, p.Calls)
}

func TestModelProgramWithoutInnerCalls(t *testing.T) {
	// A program that made no calls is a program by its arguments alone;
	// a call that has a "code" among other arguments is not.
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	call := func(id, args string) []toolloop.Event {
		start := toolloop.Event{Type: toolloop.EventStart, Time: t0, RunID: "r", Turn: 1, CallID: id, Tool: "t",
			Arguments: json.RawMessage(args)}
		done := toolloop.Event{Type: toolloop.EventComplete, Time: t0.Add(time.Millisecond), RunID: "r", Turn: 1, CallID: id, Tool: "t",
			Result: toolloop.TextResult("42")}
		return []toolloop.Event{start, done}
	}
	log := append(call("c1", `{"code":"return 6 * 7;\n"}`), call("c2", `{"code":"x","language":"go"}`)...)
	p, err := build(events(log...), &Options{})
	require.NoError(t, err)
	calls := callsByID(p.Runs)
	require.NotNil(t, calls["c1"].Program)
	assert.Equal(t, "return 6 * 7;\n", calls["c1"].Program.Code.S)
	assert.Equal(t, 2, calls["c1"].Program.Lines)
	assert.Zero(t, calls["c1"].Program.Calls)
	assert.Nil(t, calls["c2"].Program)
	assert.False(t, strings.Contains(string(mustJSON(t, calls["c2"])), `"program"`))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestRenderProgramEscapes(t *testing.T) {
	// A program's source is model-written text: markup in it, even a
	// closing script tag, stays data.
	raw, err := os.ReadFile(codeModeLog)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Render(&out, eventlog.Events(bytes.NewReader(raw)), Options{}))
	html := out.String()
	assert.Len(t, scriptTags.FindAllStringIndex(html, -1), 2, "the page's own two script elements, and no other")
	assert.NotContains(t, html, "window.pwned=3</script>")
	assert.NotContains(t, html, "<b>bold")

	data := decode(t, out.Bytes())
	var p page
	b, err := json.Marshal(data)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &p))
	c3 := p.Runs[0].Turns[1].Calls[0]
	require.NotNil(t, c3.Program)
	assert.Equal(t, hostileProgram, c3.Program.Code.S, "the source decodes as it was")
}

func TestModelProgramBound(t *testing.T) {
	// A program's source is bounded as any text of the page; its line
	// count is the whole program's.
	raw, err := os.ReadFile(codeModeLog)
	require.NoError(t, err)
	p := buildLog(t, raw, Options{FieldBytes: 64})
	pg := p.Runs[0].Turns[0].Calls[0].Program
	assert.Len(t, pg.Code.S, 64)
	assert.Equal(t, len(largestProgram)-64, pg.Code.More)
	assert.Equal(t, 16, pg.Lines)
}
