package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"html"
	"io"
	"iter"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// scriptTags matches the opening of a script element, as an HTML parser
// would find it.
var scriptTags = regexp.MustCompile(`(?i)<script`)

func TestRenderEscapes(t *testing.T) {
	raw, err := os.ReadFile(threeTurnsLog)
	require.NoError(t, err)
	require.Contains(t, string(raw), "window.pwned", "the log holds hostile output")
	title := `</title><script>alert(1)</script>` + "\u2028"
	var out bytes.Buffer
	require.NoError(t, Render(&out, eventlog.Events(bytes.NewReader(raw)), Options{Title: title}))
	html := out.String()

	assert.Len(t, scriptTags.FindAllStringIndex(html, -1), 2, "the page's own two script elements, and no other")
	assert.NotContains(t, html, "window.pwned=1</script>")
	assert.NotContains(t, html, "<img")
	assert.NotContains(t, html, "<!--", "no text can open a comment in the data")
	assert.Contains(t, html, `\u003c/script\u003e\u003cscript\u003ewindow.pwned=1`)
	assert.Contains(t, html, "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;")

	// The data decodes to the texts as they were.
	data := decode(t, out.Bytes())
	assert.Equal(t, title, data["title"])
	encoded, err := json.Marshal(data)
	require.NoError(t, err)
	assert.Contains(t, string(encoded), `\u003c/script\u003e\u003cscript\u003ewindow.pwned=1`)
}

func TestRenderCSP(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, Render(&out, events(sampleEvents()...), Options{}))
	page := out.String()
	// The policy names the hashes of exactly the style and script the
	// page holds.
	csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(page)
	require.Len(t, csp, 2)
	policy := html.UnescapeString(csp[1])
	assert.Contains(t, policy, "default-src 'none'")
	assert.Contains(t, policy, "script-src "+cspHash(pageJS))
	assert.Contains(t, policy, "style-src "+cspHash(pageCSS))
	assert.Contains(t, page, "<script>"+pageJS+"</script>")
	assert.Contains(t, page, "<style>"+pageCSS+"</style>")
}

func TestRenderBounds(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes
	evs := sampleEvents()
	evs[2].Result.Content = []toolloop.Content{toolloop.TextContent(long)}
	p, err := build(events(evs...), &Options{FieldBytes: 101})
	require.NoError(t, err)
	c := callsByID(p.Runs)["c1"]
	require.NotNil(t, c.Result)
	assert.True(t, utf8.ValidString(c.Result.S), "cut on a character boundary")
	assert.Len(t, c.Result.S, 100)
	assert.Equal(t, 1900, c.Result.More)
	assert.Equal(t, 101, p.Bound)

	// Once the page's budget is spent, every text is cut short.
	p, err = build(events(evs...), &Options{PageBytes: 10})
	require.NoError(t, err)
	c = callsByID(p.Runs)["c1"]
	assert.Len(t, c.Result.S, smallBound)
	assert.Equal(t, 2000-smallBound, c.Result.More)

	p, err = build(events(evs...), &Options{})
	require.NoError(t, err)
	assert.Equal(t, long, callsByID(p.Runs)["c1"].Result.S, "the default bound is 16 KiB")
	assert.Equal(t, 16<<10, p.Bound)
	assert.Equal(t, 3, p.OpenTurns)
}

func TestRenderInput(t *testing.T) {
	raw, err := os.ReadFile(threeTurnsLog)
	require.NoError(t, err)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	errRead := errors.New("disk on fire")
	tests := []struct {
		name     string
		in       io.Reader
		wantErr  error
		problems int
	}{
		{"empty", strings.NewReader(""), ErrNoEvents, 0},
		{"blank lines", strings.NewReader("\n\n"), ErrNoEvents, 0},
		{"a line that is not an event", io.MultiReader(bytes.NewReader(bytes.Join(lines[:5], nil)), strings.NewReader("{not json\n"), bytes.NewReader(bytes.Join(lines[5:], nil))), nil, 1},
		{"a torn last line", io.MultiReader(bytes.NewReader(raw), strings.NewReader(`{"type":"tool.exec`)), nil, 0},
		{"a read error", io.MultiReader(bytes.NewReader(raw), iotestErr{errRead}), errRead, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Render(&out, eventlog.Events(tt.in), Options{})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Zero(t, out.Len(), "nothing is written for a log that fails")
				return
			}
			require.NoError(t, err)
			data := decode(t, out.Bytes())
			problems, _ := data["problems"].([]any)
			assert.Len(t, problems, tt.problems)
			assert.EqualValues(t, 11, data["calls"])
		})
	}
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// TestModelStatuses covers what the recorded runs do not: a call that
// waits on a pause the log does not see resumed, a call the log does not
// see end, a cancelled call, prices from Options.ModelTable, and the notes of
// a limit, a compaction and a retry.
func TestModelStatuses(t *testing.T) {
	p, err := build(events(pausedEvents()...), &Options{ModelTable: toolloop.ModelTable{"house-model": {Price: &toolloop.Price{Input: 2}}}})
	require.NoError(t, err)
	calls := callsByID(p.Runs)
	assert.Equal(t, statusPending, calls["c2"].Status)
	assert.Equal(t, statusCanceled, calls["c3"].Status)
	assert.Equal(t, statusUnfinished, calls["c4"].Status)
	assert.Equal(t, -1.0, calls["c4"].Dur)
	assert.Equal(t, map[string]int{"ok": 1, "pending": 1, "canceled": 1, "unfinished": 1}, p.Counts)
	t2 := p.Runs[0].Turns[1]
	require.NotNil(t, t2.Cost)
	assert.InDelta(t, 2.0, *t2.Cost, 1e-9, "a million input tokens at $2")
	assert.Nil(t, p.Runs[0].Turns[0].Cost, "a model without a price has no cost")
	assert.Equal(t, []string{"retry", "compaction", "limit", "pause"}, noteKinds(t2.Notes))
	assert.Contains(t, t2.Notes[1].Title, "~9000 → ~1200 tokens")
	assert.False(t, p.Runs[0].Ended)
	assert.True(t, p.Runs[0].Paused)

	p, err = build(events(sampleEvents()...), &Options{OpenTurns: -1})
	require.NoError(t, err)
	assert.Zero(t, p.OpenTurns)
	assert.False(t, p.Runs[0].Ended, "the log ends before the run")
	assert.False(t, p.Runs[0].Paused)
}

// pausedEvents is sampleEvents followed by a turn whose calls end in
// every way but success: one waits on a pause, one was cancelled, one has
// no completion; with a retry, a compaction and a limit.
func pausedEvents() []toolloop.Event {
	evs := sampleEvents()
	at := evs[len(evs)-1].Time
	return append(evs, []toolloop.Event{
		{Type: toolloop.EventModelRetry, Time: at, RunID: "r", Turn: 2, Attempt: &toolloop.ModelAttempt{Attempt: 1, Error: "overloaded", Delay: time.Second}},
		{Type: toolloop.EventTranscriptEdited, Time: at, RunID: "r", Turn: 2, Edit: &toolloop.TranscriptEdit{Strategy: "compact", Reason: "threshold", TokensBefore: 9000, TokensAfter: 1200}},
		{Type: toolloop.EventModelResponse, Time: at, RunID: "r", Turn: 2, Response: &toolloop.Response{
			Model: "house-model", Usage: toolloop.Usage{InputTokens: 1_000_000},
			Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				looptest.Call("c2", "deploy", `{}`), looptest.Call("c3", "sleep", `{}`), looptest.Call("c4", "read", `{}`),
			}}}},
		{Type: toolloop.EventComplete, Time: at.Add(time.Millisecond), RunID: "r", Turn: 2, CallID: "c3", Tool: "sleep",
			Result: &toolloop.ToolResult{CallID: "c3", Name: "sleep", Status: toolloop.StatusError, Error: &toolloop.ToolError{Kind: toolloop.KindCanceled, Message: "canceled"}}},
		{Type: toolloop.EventLimit, Time: at, RunID: "r", Turn: 2, Error: "the run reached its cost limit"},
		{Type: toolloop.EventRunPaused, Time: at, RunID: "r", Turn: 2, Pending: []toolloop.PendingCall{{CallID: "c2", Name: "deploy"}}},
	}...)
}

// sampleEvents is a small run: one turn with one call, then an answer.
func sampleEvents() []toolloop.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	return []toolloop.Event{
		{Type: toolloop.EventRunStart, Time: ms(0), RunID: "r", Messages: []toolloop.Message{toolloop.UserMessage("hi")}},
		{Type: toolloop.EventModelResponse, Time: ms(5), RunID: "r", Turn: 1, Response: &toolloop.Response{
			Model: "unknown-model", Usage: toolloop.Usage{InputTokens: 10, OutputTokens: 2},
			Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{looptest.Call("c1", "echo", `{"text":"x"}`)}}}},
		{Type: toolloop.EventComplete, Time: ms(25), RunID: "r", Turn: 1, CallID: "c1", Tool: "echo",
			Result: &toolloop.ToolResult{CallID: "c1", Name: "echo", Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("x")},
				Meta: toolloop.ResultMeta{Bytes: 1, Duration: 15 * time.Millisecond}}},
	}
}

func events(evs ...toolloop.Event) iter.Seq2[toolloop.Event, error] {
	return func(yield func(toolloop.Event, error) bool) {
		for _, e := range evs {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func TestCallTiming(t *testing.T) {
	p, err := build(events(sampleEvents()...), &Options{})
	require.NoError(t, err)
	c := callsByID(p.Runs)["c1"]
	assert.InDelta(t, 10.0, c.At, 1e-9, "without a start event, a call starts its duration before its end")
	assert.InDelta(t, 15.0, c.Dur, 1e-9)
	turn := p.Runs[0].Turns[0]
	assert.InDelta(t, 5.0, turn.At, 1e-9)
	assert.InDelta(t, 20.0, turn.Dur, 1e-9)
	assert.Equal(t, -1.0, turn.ModelDur, "the log has no request")
	assert.Equal(t, 1, turn.Parallel)
}

func FuzzRender(f *testing.F) {
	raw, err := os.ReadFile(threeTurnsLog)
	require.NoError(f, err)
	for _, l := range bytes.Split(raw, []byte("\n"))[:12] {
		f.Add(l)
	}
	f.Add([]byte(`{"type":"tool.execution_complete","run_id":"r","turn":1,"call_id":"</script>","tool":"<!--","result":{"status":"ok","content":[{"type":"text","text":"<script>"}]}}`))
	for _, l := range bytes.Split(jobLog(f), []byte("\n")) {
		if bytes.Contains(l, []byte(`"job.`)) || bytes.Contains(l, []byte(`"origin":"job"`)) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"type":"job.finished","run_id":"r","turn":2,"job":{"id":"</script>","call_id":"<!--","tool":"<b>","turn":1,"status":"ok","result":{"status":"ok","meta":{"extra":{"exit_code":"x"}}}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var out bytes.Buffer
		err := Render(&out, eventlog.Events(bytes.NewReader(line)), Options{})
		if err != nil {
			require.ErrorIs(t, err, ErrNoEvents)
			return
		}
		assert.Len(t, scriptTags.FindAllIndex(out.Bytes(), -1), 2)
		decode(t, out.Bytes())
	})
}
