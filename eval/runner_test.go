package eval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// scripted returns a Loop that answers each case's trials with its own
// script.
func scripted(replies map[string][]*toolloop.Response) func(c *eval.Case) (*toolloop.AgentLoop, error) {
	return func(c *eval.Case) (*toolloop.AgentLoop, error) {
		return &toolloop.AgentLoop{Model: looptest.Script(replies[c.ID]...)}, nil
	}
}

func TestRunnerDataset(t *testing.T) {
	cases, err := eval.LoadDataset("testdata/weather.jsonl")
	require.NoError(t, err)
	dir := t.TempDir()
	r := &eval.Runner{
		Name: "weather",
		Loop: scripted(map[string][]*toolloop.Response{
			"paris": {
				looptest.Calls(looptest.Call("c1", "get_weather", `{"city":"Paris"}`)),
				looptest.Text("It is 18°C and sunny in Paris."),
			},
			"greeting": {looptest.Text("Hello!")},
		}),
		LogDir: dir,
	}
	rep, err := r.Run(context.Background(), cases)
	require.NoError(t, err)
	assert.Equal(t, "weather", rep.Name)
	require.Len(t, rep.Cases, 2)
	assert.Equal(t, eval.Summary{Cases: 2, Passed: 2, Trials: 2, TrialsPassed: 2}, rep.Summary)
	paris := rep.Cases[0]
	assert.Equal(t, "paris", paris.ID)
	assert.Equal(t, eval.StatusPassed, paris.Status)
	assert.Equal(t, []float64{1}, paris.PassAtK)
	require.Len(t, paris.Trials, 1)
	tr := paris.Trials[0]
	assert.Equal(t, 1, tr.Trial)
	assert.Equal(t, 2, tr.Turns)
	assert.Equal(t, 1, tr.ToolCalls)
	assert.Equal(t, "It is 18°C and sunny in Paris.", tr.FinalText)
	var scorers []string
	for _, s := range tr.Scores {
		scorers = append(scorers, s.Scorer)
		assert.True(t, s.Pass, s.Reason)
	}
	assert.Equal(t, []string{"tool_called(get_weather)", `text_contains("18°C")`, "limits"}, scorers)

	// The trial's log holds the run, with the fixture's canned result.
	require.FileExists(t, tr.LogPath)
	assert.Equal(t, dir, filepathDir(tr.LogPath))
	rp, err := eventlog.ReadFile(tr.LogPath)
	require.NoError(t, err)
	msgs := rp.Transcript()
	require.Len(t, msgs, 4)
	assert.Equal(t, "18°C and sunny", msgs[2].Result.Text())
	assert.NotEqual(t, tr.LogPath, rep.Cases[1].Trials[0].LogPath)
}

func filepathDir(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if os.IsPathSeparator(p[i]) {
			return p[:i]
		}
	}
	return "."
}

// TestRunnerFixturesAndTools: fixtures take the place of the loop's tools
// of the same name, the loop's other tools stay, and the case's Tools
// limit what the model is offered.
func TestRunnerFixturesAndTools(t *testing.T) {
	var tools toolloop.ToolRegistry
	tools.MustRegister(
		toolloop.NewTool("get_weather", "Real weather.", func(context.Context, struct {
			City string `json:"city"`
		}) (any, error) {
			return "real weather", nil
		}),
		toolloop.NewTool("clock", "The time.", func(context.Context, struct{}) (any, error) { return "noon", nil }),
		toolloop.NewTool("delete", "Deletes.", func(context.Context, struct{}) (any, error) { return "deleted", nil }),
	)
	c := eval.Case{ID: "c", Prompt: "Weather and time?", Tools: []string{"get_weather", "clock"},
		Fixtures: map[string]eval.Fixture{"get_weather": {Results: []eval.FixtureResult{
			{Arguments: json.RawMessage(`{"city":"Paris"}`), Text: "canned", JSON: json.RawMessage(`{"c":18}`)},
			{Error: "no such city", ErrorKind: toolloop.KindNotFound},
		}}},
		Scorers: []eval.Scorer{&eval.NoErrorKinds{Kinds: []toolloop.ErrorKind{toolloop.KindPanic}}},
	}
	var offered [][]string
	var results []string
	r := &eval.Runner{Loop: func(*eval.Case) (*toolloop.AgentLoop, error) {
		model := looptest.NewModel(t,
			looptest.Turn{
				Check: func(req *toolloop.Request) string {
					var names []string
					for _, s := range req.Tools {
						names = append(names, s.Name)
					}
					offered = append(offered, names)
					return ""
				},
				Reply: looptest.Calls(
					looptest.Call("a", "get_weather", `{"city":"Paris"}`),
					looptest.Call("b", "get_weather", `{"city":"Atlantis"}`),
					looptest.Call("c", "clock", `{}`)),
			},
			looptest.Turn{Reply: looptest.Text("done")},
		)
		return &toolloop.AgentLoop{Model: model, Tools: &tools, OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventComplete {
				results = append(results, e.Result.Text())
			}
		}}, nil
	}}
	rep, err := r.Run(context.Background(), []eval.Case{c})
	require.NoError(t, err)
	assert.Equal(t, eval.StatusPassed, rep.Cases[0].Status)
	assert.Equal(t, [][]string{{"clock", "get_weather"}}, offered)
	assert.ElementsMatch(t, []string{"canned\n{\"c\":18}", "no such city", "noon"}, results)
}

// TestRunnerParallel: trials run Concurrency at a time, never more, and
// the report keeps the cases' order whatever order they end in.
func TestRunnerParallel(t *testing.T) {
	const conc, n = 3, 7
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var inFlight, most atomic.Int32
	full := make(chan struct{})
	var once sync.Once
	model := toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		if now == conc {
			once.Do(func() { close(full) })
		}
		// The first trials wait until conc are in flight at once.
		select {
		case <-full:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return looptest.Text("answer to " + req.Messages[0].Text()), nil
	})
	var cases []eval.Case
	for i := range n {
		id := fmt.Sprintf("case%d", i)
		cases = append(cases, eval.Case{ID: id, Prompt: id, Scorers: []eval.Scorer{&eval.TextContains{Text: id}}})
	}
	r := &eval.Runner{Concurrency: conc, Loop: func(*eval.Case) (*toolloop.AgentLoop, error) {
		return &toolloop.AgentLoop{Model: model}, nil
	}}
	rep, err := r.Run(ctx, cases)
	require.NoError(t, err)
	assert.Equal(t, int32(conc), most.Load())
	for i, c := range rep.Cases {
		assert.Equal(t, cases[i].ID, c.ID)
		assert.Equal(t, eval.StatusPassed, c.Status, "%+v", c.Trials)
		assert.Equal(t, "answer to "+c.ID, c.Trials[0].FinalText)
	}
}

// priced returns a loop whose every trial spends 100 input tokens, at
// $0.01 a token, in one turn.
func priced(*eval.Case) (*toolloop.AgentLoop, error) {
	reply := looptest.Text("ok")
	reply.Usage = toolloop.Usage{InputTokens: 100}
	reply.Model = "test-model"
	return &toolloop.AgentLoop{
		Model:      looptest.Script(reply),
		ModelTable: toolloop.ModelTable{"test-model": {Price: &toolloop.Price{Input: 10000}}},
	}, nil
}

func TestRunnerBudget(t *testing.T) {
	cases := []eval.Case{{ID: "a", Prompt: "x", Trials: 2}, {ID: "b", Prompt: "x"}, {ID: "c", Prompt: "x", Trials: 2}}
	tests := []struct {
		name   string
		budget eval.Budget
		ran    int
		reason string
	}{
		{"tokens", eval.Budget{MaxTokens: 250}, 3, "250 tokens"},
		{"cost", eval.Budget{MaxCost: 1.5}, 2, "$1.5000"},
		{"enough", eval.Budget{MaxCost: 100, MaxTokens: 1e6}, 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []string
			r := &eval.Runner{Concurrency: 1, Budget: tt.budget, Loop: priced,
				OnTrial: func(c *eval.Case, tr *eval.TrialReport) {
					seen = append(seen, fmt.Sprintf("%s/%d %s", c.ID, tr.Trial, tr.Status))
				}}
			rep, err := r.Run(context.Background(), cases)
			require.NoError(t, err)
			assert.Equal(t, tt.reason != "", rep.Stopped != "")
			assert.Contains(t, rep.Stopped, tt.reason)
			var i int
			for _, c := range rep.Cases {
				for _, tr := range c.Trials {
					if i < tt.ran {
						assert.Equal(t, eval.StatusPassed, tr.Status, "%s/%d", c.ID, tr.Trial)
					} else {
						assert.Equal(t, eval.StatusSkipped, tr.Status, "%s/%d", c.ID, tr.Trial)
						assert.Contains(t, tr.SkipReason, tt.reason)
					}
					i++
				}
			}
			assert.Equal(t, 5, rep.Summary.Trials)
			assert.Equal(t, tt.ran, rep.Summary.TrialsPassed)
			assert.Equal(t, 5-tt.ran, rep.Summary.TrialsSkipped)
			assert.Equal(t, int64(100*tt.ran), rep.Summary.Usage.InputTokens)
			assert.InDelta(t, float64(tt.ran), rep.Summary.Cost, 1e-9)
			assert.Len(t, seen, 5, "OnTrial hears of every trial, skipped or not")
		})
	}
}

// blocking is a model that waits for its context, telling started each
// time it is called.
func blocking(started chan<- string) toolloop.Model {
	return toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		if started != nil {
			started <- req.Messages[0].Text()
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
}

func TestRunnerDeadline(t *testing.T) {
	// With one slot, the deadline passes while trial a runs and keeps b
	// from starting; with two, it cuts both short. (On a loaded machine
	// it may pass before a starts: either way every reason names it.)
	for _, conc := range []int{1, 2} {
		r := &eval.Runner{Concurrency: conc, Budget: eval.Budget{MaxDuration: 20 * time.Millisecond},
			Loop: func(*eval.Case) (*toolloop.AgentLoop, error) { return &toolloop.AgentLoop{Model: blocking(nil)}, nil }}
		rep, err := r.Run(context.Background(), []eval.Case{{ID: "a", Prompt: "a"}, {ID: "b", Prompt: "b"}})
		require.NoError(t, err, "the eval's own deadline is a budget, not an error")
		for _, c := range rep.Cases {
			assert.Equal(t, eval.StatusSkipped, c.Status)
			assert.Contains(t, c.Trials[0].SkipReason, "time limit")
		}
		assert.Equal(t, 2, rep.Summary.Skipped)
		assert.Contains(t, rep.Stopped, "time limit")
	}
}

func TestRunnerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan string)
	r := &eval.Runner{Concurrency: 2,
		Loop: func(*eval.Case) (*toolloop.AgentLoop, error) {
			return &toolloop.AgentLoop{Model: blocking(started)}, nil
		}}
	cases := []eval.Case{{ID: "a", Prompt: "a"}, {ID: "b", Prompt: "b"}, {ID: "c", Prompt: "c"}}
	type out struct {
		rep *eval.Report
		err error
	}
	done := make(chan out, 1)
	go func() {
		rep, err := r.Run(ctx, cases)
		done <- out{rep, err}
	}()
	<-started
	<-started
	cancel()
	o := <-done
	require.ErrorIs(t, o.err, context.Canceled)
	require.NotNil(t, o.rep)
	require.Len(t, o.rep.Cases, 3)
	for _, c := range o.rep.Cases {
		assert.Equal(t, eval.StatusSkipped, c.Status, c.ID)
		assert.Contains(t, c.Trials[0].SkipReason, "cancel")
	}
	goleak.VerifyNone(t)
}

// TestRunnerTrials: repeated trials give a pass rate, pass@k and
// flakiness; a case passes at its min_pass_rate.
func TestRunnerTrials(t *testing.T) {
	var calls atomic.Int32
	alternate := func(*eval.Case) (*toolloop.AgentLoop, error) {
		answer := "no"
		if calls.Add(1)%2 == 1 {
			answer = "yes"
		}
		return &toolloop.AgentLoop{Model: looptest.Script(looptest.Text(answer))}, nil
	}
	half := 0.5
	cases := []eval.Case{
		{ID: "lenient", Prompt: "x", Trials: 4, MinPassRate: &half, Expect: []eval.Expectation{exp(`{"type": "text_contains", "text": "yes"}`)}},
		{ID: "strict", Prompt: "x", Expect: []eval.Expectation{exp(`{"type": "text_contains", "text": "yes"}`)}},
		{ID: "steady", Prompt: "x", Trials: 1, Scorers: []eval.Scorer{&eval.NoToolCalled{}}},
	}
	r := &eval.Runner{Concurrency: 1, Trials: 2, Loop: alternate}
	rep, err := r.Run(context.Background(), cases)
	require.NoError(t, err)

	lenient := rep.Cases[0]
	assert.Equal(t, eval.StatusPassed, lenient.Status)
	assert.Equal(t, 2, lenient.Passed)
	assert.Equal(t, 2, lenient.Failed)
	assert.Equal(t, 0.5, lenient.PassRate)
	assert.True(t, lenient.Flaky)
	require.Len(t, lenient.PassAtK, 4)
	assert.InDelta(t, 0.5, lenient.PassAtK[0], 1e-9)
	assert.InDelta(t, 5.0/6, lenient.PassAtK[1], 1e-9)
	assert.InDelta(t, 1, lenient.PassAtK[2], 1e-9)
	assert.Equal(t, []eval.ScorerReport{{Name: `text_contains("yes")`, Passed: 2, Scored: 4, PassRate: 0.5, MeanValue: 0.5}}, lenient.Scorers)
	for i, tr := range lenient.Trials {
		assert.Equal(t, i+1, tr.Trial)
		assert.Equal(t, map[bool]eval.Status{true: eval.StatusPassed, false: eval.StatusFailed}[i%2 == 0], tr.Status)
	}

	strict := rep.Cases[1]
	assert.Len(t, strict.Trials, 2, "Runner.Trials is the default")
	assert.Equal(t, eval.StatusFailed, strict.Status)
	assert.True(t, strict.Flaky)

	assert.Equal(t, eval.StatusPassed, rep.Cases[2].Status)
	assert.False(t, rep.Cases[2].Flaky)
	assert.Equal(t, eval.Summary{Cases: 3, Passed: 2, Failed: 1, Flaky: 2, Trials: 7, TrialsPassed: 4, TrialsFailed: 3}, rep.Summary)
}

func TestPassAtK(t *testing.T) {
	tests := []struct {
		n, c, k int
		want    float64
	}{
		{10, 0, 1, 0},
		{10, 10, 5, 1},
		{5, 2, 1, 0.4},
		{4, 2, 2, 5.0 / 6},
		{4, 1, 3, 0.75},
		{4, 2, 3, 1},
		{200, 10, 10, 0.408547866}, // 1 - C(190,10)/C(200,10)
		{3, 1, 0, 0},
		{3, 1, 4, 0},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, eval.PassAtK(tt.n, tt.c, tt.k), 1e-6, "pass@%d of %d/%d", tt.k, tt.c, tt.n)
	}
}

type panicky struct{}

func (panicky) Name() string                                  { return "panicky" }
func (panicky) Score(context.Context, *eval.Trial) eval.Score { panic("boom") }

func TestRunnerFailures(t *testing.T) {
	errLoop := errors.New("no model configured")
	cases := []eval.Case{
		{ID: "run error", Prompt: "x"},
		{ID: "allowed", Prompt: "x", AllowError: true},
		{ID: "loop error", Prompt: "x"},
		{ID: "panic", Prompt: "x", Scorers: []eval.Scorer{panicky{}}},
		{ID: "twice", Prompt: "x", Scorers: []eval.Scorer{&eval.NoToolCalled{}, &eval.NoToolCalled{}}},
	}
	r := &eval.Runner{Loop: func(c *eval.Case) (*toolloop.AgentLoop, error) {
		switch c.ID {
		case "run error", "allowed":
			return &toolloop.AgentLoop{Model: looptest.Always(looptest.Calls(looptest.Call("x", "nothing", `{}`))),
				Budget: toolloop.Budget{MaxTurns: 2}}, nil
		case "loop error":
			return nil, errLoop
		}
		return &toolloop.AgentLoop{Model: looptest.Script(looptest.Text("ok"))}, nil
	}}
	rep, err := r.Run(context.Background(), cases)
	require.NoError(t, err)
	byID := map[string]eval.CaseReport{}
	for _, c := range rep.Cases {
		byID[c.ID] = c
	}
	tr := byID["run error"].Trials[0]
	assert.Equal(t, eval.StatusFailed, tr.Status)
	assert.Equal(t, "run", tr.Scores[0].Scorer)
	assert.NotEmpty(t, tr.Error)

	assert.Equal(t, eval.StatusPassed, byID["allowed"].Status)
	assert.NotEmpty(t, byID["allowed"].Trials[0].Error)

	tr = byID["loop error"].Trials[0]
	assert.Equal(t, eval.StatusFailed, tr.Status)
	assert.Contains(t, tr.Scores[0].Reason, errLoop.Error())

	tr = byID["panic"].Trials[0]
	assert.Equal(t, eval.StatusFailed, tr.Status)
	assert.Equal(t, "panicky", tr.Scores[0].Scorer)
	assert.Contains(t, tr.Scores[0].Reason, "boom")

	var names []string
	for _, s := range byID["twice"].Trials[0].Scores {
		names = append(names, s.Scorer)
	}
	assert.Equal(t, []string{"no_tool_called", "no_tool_called#2"}, names)
}

func TestRunnerRefuses(t *testing.T) {
	loop := func(*eval.Case) (*toolloop.AgentLoop, error) { return &toolloop.AgentLoop{}, nil }
	_, err := (&eval.Runner{}).Run(context.Background(), nil)
	require.ErrorIs(t, err, eval.ErrNoLoop)
	for name, cases := range map[string][]eval.Case{
		"no ID":            {{Prompt: "x"}},
		"duplicate ID":     {{ID: "a", Prompt: "x"}, {ID: "a", Prompt: "y"}},
		"bad expectation":  {{ID: "a", Prompt: "x", Expect: []eval.Expectation{exp(`{"type": "mystery"}`)}}},
		"bad fixture name": {{ID: "a", Prompt: "x", Fixtures: map[string]eval.Fixture{"no spaces please": {}}}},
	} {
		_, err := (&eval.Runner{Loop: loop}).Run(context.Background(), cases)
		assert.Error(t, err, name)
	}
}
