package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

var update = flag.Bool("update", false, "record testdata/three-turns.jsonl again")

const threeTurnsLog = "testdata/three-turns.jsonl"

// hostile is tool output that would run script if the page put it in
// the document as markup, or close the data's script element.
const hostile = `</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2"><!--`

// TestRecordThreeTurns records the three-turn run the tests read, with
// -update; without it, it checks that the committed log is a whole run.
func TestRecordThreeTurns(t *testing.T) {
	if *update {
		log := recordThreeTurns(t)
		require.NoError(t, os.MkdirAll(filepath.Dir(threeTurnsLog), 0o755))
		require.NoError(t, os.WriteFile(threeTurnsLog, log, 0o644))
	}
	raw, err := os.ReadFile(threeTurnsLog)
	require.NoError(t, err, "run go test -run TestRecordThreeTurns -update to record it")
	rp, err := eventlog.Read(bytes.NewReader(raw))
	require.NoError(t, err)
	looptest.AssertValid(t, rp.Transcript())
}

// withUsage gives a scripted reply the usage and model a provider would.
func withUsage(r *toolloop.Response, in, out int64) *toolloop.Response {
	r.Usage = toolloop.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: in / 2}
	r.Model = "gpt-4.1-2025-04-14"
	return r
}

// recordThreeTurns runs a real AgentLoop on a scripted model and returns
// its event log: three model turns, with parallel calls, a failing call,
// a call the guard denies, a result the loop truncates, hostile output, a
// hook's effect, a sub-agent, file writes and edits through the builtin
// tools, and a call that pauses the run for approval, resumed.
func recordThreeTurns(t *testing.T) []byte {
	ctx := t.Context()
	ws, err := builtin.Workspace(t.TempDir(), &builtin.Options{Tools: []string{"read_file", "write_file", "edit_file"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })

	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(ctx, ws))
	type city struct {
		City string `json:"city"`
	}
	reg.MustRegister(toolloop.NewTool("get_weather", "The weather in a city.", func(ctx context.Context, in city) (any, error) {
		time.Sleep(40 * time.Millisecond)
		return fmt.Sprintf("18°C and sunny in %s", in.City), nil
	}))
	type query struct {
		Query string `json:"query"`
	}
	reg.MustRegister(toolloop.NewTool("search_docs", "Search the documentation.", func(ctx context.Context, in query) (any, error) {
		time.Sleep(25 * time.Millisecond)
		if in.Query == "flaky" {
			return nil, errors.New("index unavailable: connection reset by peer")
		}
		if in.Query == "everything" {
			return strings.Repeat("a long line of documentation that goes on and on\n", 200), nil
		}
		if in.Query == "hostile" {
			return hostile, nil
		}
		return "3 matches for " + in.Query, nil
	}))
	reg.MustRegister(toolloop.NewTool("delete_tree", "Delete a directory.", func(ctx context.Context, in struct {
		Path string `json:"path"`
	}) (any, error) {
		return "deleted " + in.Path, nil
	}))
	reg.MustRegister(toolloop.NewTool("deploy", "Deploy a service.", func(ctx context.Context, in struct {
		Service string `json:"service"`
	}) (any, error) {
		time.Sleep(10 * time.Millisecond)
		return "deployed " + in.Service + " v1.4.2", nil
	}))

	var childReg toolloop.ToolRegistry
	childReg.MustRegister(toolloop.NewTool("search_docs", "Search the documentation.", func(ctx context.Context, in query) (any, error) {
		return "2 matches for " + in.Query, nil
	}))
	child := &toolloop.AgentLoop{Tools: &childReg, Model: looptest.Script(
		withUsage(looptest.Calls(looptest.Call("s1", "search_docs", `{"query":"retry policy"}`)), 300, 20),
		withUsage(looptest.Text("The retry policy retries 3 times with backoff."), 420, 15),
	)}
	reg.MustRegister(toolloop.NewAgentTool("researcher", "A sub-agent that researches a question.", child))

	model := looptest.Script(
		withUsage(looptest.Calls(
			looptest.Call("c1", "get_weather", `{"city":"Paris"}`),
			looptest.Call("c2", "get_weather", `{"city":"Tokyo"}`),
			looptest.Call("c3", "search_docs", `{"query":"flaky"}`),
			looptest.Call("c4", "delete_tree", `{"path":"/"}`),
			looptest.Call("c5", "search_docs", `{"query":"everything"}`),
		), 1200, 140),
		withUsage(looptest.Calls(
			looptest.Call("c6", "write_file", `{"path":"notes.md","content":"# Notes\n\nParis: sunny\nTokyo: sunny\n"}`),
			looptest.Call("c7", "edit_file", `{"path":"notes.md","edits":[{"old_string":"Tokyo: sunny","new_string":"Tokyo: 18°C, sunny\nLondon: rain"}]}`),
			looptest.Call("c8", "search_docs", `{"query":"hostile"}`),
			looptest.Call("c9", "researcher", `{"task":"What is the retry policy?"}`),
			looptest.Call("c10", "deploy", `{"service":"weather-api"}`),
		), 2600, 210),
		withUsage(looptest.Text("Paris and Tokyo are sunny; notes.md is written and weather-api is deployed.\n"+hostile), 3900, 60),
	)

	guard := toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
		switch c.Name {
		case "delete_tree":
			return toolloop.Verdict{Decision: toolloop.Deny, Reason: "deleting directories is not allowed", Rule: "no-delete"}
		case "deploy":
			return toolloop.Verdict{Decision: toolloop.Ask, Reason: "deploys need a human", Rule: "ask-deploy"}
		}
		return toolloop.Verdict{Decision: toolloop.Allow}
	})
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	loop := &toolloop.AgentLoop{
		Model: model, Tools: &reg, Guard: guard, PauseForApproval: true,
		Hooks: toolloop.Hooks{PreToolUse: []toolloop.PreToolUseHook{
			func(_ context.Context, c *toolloop.Call) (toolloop.PreToolUse, error) {
				if c.Name == "get_weather" {
					return toolloop.PreToolUse{Context: "weather data is cached for 10 minutes"}, nil
				}
				return toolloop.PreToolUse{}, nil
			},
		}},
		OnEvent: w.Record,
		Limits:  toolloop.Limits{MaxResultBytes: 2048},
	}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("What is the weather in Paris and Tokyo? Write it down and deploy.")})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.NotNil(t, res.Paused)
	decisions := map[string]toolloop.Approval{}
	for _, p := range res.Paused.Pending {
		decisions[p.CallID] = toolloop.Approval{Approved: true, Reason: "ok by alice"}
	}
	res, err = loop.Resume(ctx, res.Paused, decisions)
	require.NoError(t, err)
	require.Equal(t, 3, res.Turns)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// syncBuffer is a bytes.Buffer safe for the writer's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// longRunTurns is the length of the long run.
const longRunTurns = 500

// longRun returns the log of a 500-turn run of a real AgentLoop on a
// scripted model (see recordLongRun); the run is made once per test
// binary.
var longRun = sync.OnceValues(func() ([]byte, error) { return recordLongRun(longRunTurns) })

// The runs of 1,000 and 5,000 turns of the benchmarks and the timing
// test, made as longRun is, once each.
var (
	longRun1000 = sync.OnceValues(func() ([]byte, error) { return recordLongRun(1000) })
	longRun5000 = sync.OnceValues(func() ([]byte, error) { return recordLongRun(5000) })
)

// recordLongRun returns the log of a run of a real AgentLoop on a
// scripted model that takes the turns given: each turn but the last asks
// for one to four calls of five tools, some in parallel, some failing,
// some denied.
func recordLongRun(turns int) ([]byte, error) {
	var reg toolloop.ToolRegistry
	type in struct {
		N int `json:"n"`
	}
	for _, name := range []string{"read_file", "grep_search", "list_directory"} {
		reg.MustRegister(toolloop.NewTool(name, "A read.", func(_ context.Context, a in) (any, error) {
			return fmt.Sprintf("%s result %d\n%s", name, a.N, strings.Repeat("line of output\n", a.N%7)), nil
		}))
	}
	reg.MustRegister(toolloop.NewTool("run_tests", "Run the tests.", func(_ context.Context, a in) (any, error) {
		if a.N%5 == 0 {
			return nil, fmt.Errorf("FAIL: TestParse/%d", a.N)
		}
		return "ok", nil
	}))
	reg.MustRegister(toolloop.NewTool("delete_tree", "Delete.", func(_ context.Context, a in) (any, error) { return "deleted", nil }))
	tools := []string{"read_file", "grep_search", "list_directory", "run_tests", "delete_tree"}
	replies := make([]*toolloop.Response, 0, turns)
	id := 0
	for turn := 1; turn < turns; turn++ {
		var calls []toolloop.ToolCall
		for k := range 1 + turn%4 {
			id++
			calls = append(calls, looptest.Call(fmt.Sprintf("call_%d", id), tools[(turn+k)%len(tools)], fmt.Sprintf(`{"n":%d}`, id)))
		}
		r := looptest.Calls(calls...)
		r.Message.Content = append(r.Message.Content, toolloop.TextContent(fmt.Sprintf("Step %d: looking further.", turn)))
		replies = append(replies, withUsage(r, int64(1000+turn*40), 80))
	}
	replies = append(replies, withUsage(looptest.Text(fmt.Sprintf("Done after %d turns.", turns)), 21000, 30))
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(replies...), Tools: &reg,
		Guard: toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if c.Name == "delete_tree" {
				return toolloop.Verdict{Decision: toolloop.Deny, Reason: "no deletes", Rule: "no-delete"}
			}
			return toolloop.Verdict{}
		}),
		OnEvent: w.Record,
		Budget:  toolloop.Budget{MaxTurns: turns + 1},
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Fix the parser.")})
	if err != nil {
		return nil, err
	}
	if res.Turns != turns {
		return nil, fmt.Errorf("the long run took %d turns", res.Turns)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// logCalls counts the calls of a log independently of the page's model:
// the distinct (run, call) pairs its model responses ask for and its tool
// events name, by tool and by the status of their completion.
type logCalls struct {
	total    int
	byTool   map[string]int
	byStatus map[string]int
}

func countCalls(t testing.TB, log []byte) logCalls {
	t.Helper()
	type key struct{ run, call string }
	tool := map[key]string{}
	status := map[key]string{}
	for e, err := range eventlog.Events(bytes.NewReader(log)) {
		require.NoError(t, err)
		if e.Response != nil {
			for _, tc := range e.Response.Message.ToolCalls {
				tool[key{e.RunID, tc.ID}] = tc.Name
			}
		}
		if e.CallID != "" {
			tool[key{e.RunID, e.CallID}] = e.Tool
		}
		if e.Type == toolloop.EventComplete && e.Result != nil {
			s := string(e.Result.Status)
			if e.Result.Error != nil && (e.Result.Error.Kind == toolloop.KindDenied || e.Result.Error.Kind == toolloop.KindCanceled) {
				s = string(e.Result.Error.Kind)
			}
			status[key{e.RunID, e.CallID}] = s
		}
	}
	c := logCalls{total: len(tool), byTool: map[string]int{}, byStatus: map[string]int{}}
	for k, name := range tool {
		c.byTool[name]++
		c.byStatus[cmpOr(status[k], "unfinished")]++
	}
	return c
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// decode reads a page's embedded data back, as the browser does.
func decode(t testing.TB, html []byte) map[string]any {
	t.Helper()
	const open = `<script type="application/json" id="data">`
	i := bytes.Index(html, []byte(open))
	require.GreaterOrEqual(t, i, 0)
	rest := html[i+len(open):]
	j := bytes.Index(rest, []byte("</script>"))
	require.GreaterOrEqual(t, j, 0)
	var v map[string]any
	require.NoError(t, json.Unmarshal(rest[:j], &v))
	return v
}
