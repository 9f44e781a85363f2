package eval_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
	"github.com/toolloop/toolloop/looptest"
)

// A dataset of two cases, run offline: the get_weather tool is a
// fixture, and the model is scripted. The second case fails on purpose.
func ExampleRunner_Run() {
	const dataset = `{"id": "paris", "prompt": "Weather in Paris?", "fixtures": {"get_weather": {"results": [{"arguments": {"city": "Paris"}, "text": "18°C and sunny"}]}}, "expect": [{"type": "tool_called", "name": "get_weather", "arguments": {"city": "Paris"}}, {"type": "text_contains", "text": "18°C"}]}
{"id": "rome", "prompt": "Weather in Rome?", "fixtures": {"get_weather": {"results": [{"text": "25°C"}]}}, "expect": [{"type": "trajectory", "tools": ["get_weather"]}], "trials": 2}`
	cases, err := eval.ReadDataset(strings.NewReader(dataset))
	if err != nil {
		fmt.Println(err)
		return
	}
	replies := map[string][]*toolloop.Response{
		"paris": {
			looptest.Calls(looptest.Call("c1", "get_weather", `{"city":"Paris"}`)),
			looptest.Text("It is 18°C and sunny in Paris."),
		},
		"rome": {looptest.Text("Probably warm.")},
	}
	r := &eval.Runner{
		Loop: func(c *eval.Case) (*toolloop.AgentLoop, error) {
			return &toolloop.AgentLoop{Model: looptest.Script(replies[c.ID]...)}, nil
		},
	}
	report, err := r.Run(context.Background(), cases)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range report.Cases {
		fmt.Printf("%s: %s (pass rate %.2f)\n", c.ID, c.Status, c.PassRate)
		for _, s := range c.Trials[0].Failures() {
			fmt.Printf("  %s: %s\n", s.Scorer, s.Reason)
		}
	}
	fmt.Println("exit code:", report.ExitCode())
	// Output:
	// paris: passed (pass rate 1.00)
	// rome: failed (pass rate 0.00)
	//   trajectory(exact): called [], want [get_weather] (exact)
	// exit code: 1
}

// A line that is not a valid case stops the dataset, naming the line.
func ExampleReadDataset() {
	const dataset = `{"id": "a", "prompt": "Hi."}
{"id": "b", "prompt": "Hi.", "expect": [{"type": "text_contains", "txt": "hello"}]}`
	_, err := eval.ReadDataset(strings.NewReader(dataset))
	fmt.Println(err)
	// Output:
	// eval: dataset line 2: not a valid case: at /expect/0: additionalProperties 'txt' not allowed; at /expect/0: missing properties: 'text'
}

// Compare two reports, as CI does with the last release's report and
// the branch's: any regression makes the exit code 1.
func ExampleCompare() {
	before := &eval.Report{Cases: []eval.CaseReport{
		{ID: "paris", Status: eval.StatusPassed, PassRate: 1, Scorers: []eval.ScorerReport{{Name: "tool_called(get_weather)", PassRate: 1}}},
		{ID: "rome", Status: eval.StatusFailed, PassRate: 0.5, Scorers: []eval.ScorerReport{{Name: "judge", PassRate: 0.5}}},
	}}
	after := &eval.Report{Cases: []eval.CaseReport{
		{ID: "paris", Status: eval.StatusFailed, PassRate: 0, Scorers: []eval.ScorerReport{{Name: "tool_called(get_weather)", PassRate: 0}}},
		{ID: "rome", Status: eval.StatusFailed, PassRate: 1, Scorers: []eval.ScorerReport{{Name: "judge", PassRate: 1}}},
	}}
	cmp := eval.Compare(before, after)
	_ = cmp.WriteText(os.Stdout)
	fmt.Println("exit code:", cmp.ExitCode())
	// Output:
	// regressions: 2
	//   paris: passed -> failed (pass rate 1.00 -> 0.00)
	//   paris / tool_called(get_weather): pass rate 1.00 -> 0.00
	// improvements: 1
	//   rome / judge: pass rate 0.50 -> 1.00
	// exit code: 1
}

// A judge grades the run against a rubric; here the judge is scripted
// to answer with its verdict as JSON.
func ExampleJudge() {
	judge := looptest.Script(looptest.Text(`{"pass": false, "score": 0.3, "reasoning": "It never gave a temperature."}`))
	c := eval.Case{ID: "paris", Prompt: "Weather in Paris?", Scorers: []eval.Scorer{
		&eval.Judge{Model: judge, Rubric: "The answer gives the temperature in Paris."},
	}}
	r := &eval.Runner{Loop: func(*eval.Case) (*toolloop.AgentLoop, error) {
		return &toolloop.AgentLoop{Model: looptest.Script(looptest.Text("Nice, I hear."))}, nil
	}}
	report, err := r.Run(context.Background(), []eval.Case{c})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := report.Cases[0].Trials[0].Scores[0]
	fmt.Printf("%s: pass=%v value=%.1f reason=%q\n", s.Scorer, s.Pass, s.Value, s.Reason)
	// Output:
	// judge: pass=false value=0.3 reason="It never gave a temperature."
}

// A scorer of your own is any type with Name and Score, or a function.
func ExampleScorerFunc() {
	brief := eval.ScorerFunc("brief", func(_ context.Context, t *eval.Trial) eval.Score {
		if n := len(t.Result.FinalText); n > 20 {
			return eval.Fail(fmt.Sprintf("%d bytes, want at most 20", n))
		}
		return eval.Pass("")
	})
	r := &eval.Runner{Loop: func(*eval.Case) (*toolloop.AgentLoop, error) {
		return &toolloop.AgentLoop{Model: looptest.Script(looptest.Text("A rather long-winded answer."))}, nil
	}}
	report, _ := r.Run(context.Background(), []eval.Case{{ID: "short", Prompt: "Hi.", Scorers: []eval.Scorer{brief}}})
	fmt.Println(report.Cases[0].Trials[0].Scores[0].Reason)
	// Output:
	// 28 bytes, want at most 20
}

// The JUnit XML of a report, for CI systems to show its failures. (This
// report is written by hand, to leave out times.)
func ExampleReport_WriteJUnit() {
	report := &eval.Report{Name: "weather", Cases: []eval.CaseReport{
		{ID: "paris", Status: eval.StatusPassed, Passed: 1, PassRate: 1, MinPassRate: 1, PassAtK: []float64{1},
			Trials: []eval.TrialReport{{Trial: 1, Status: eval.StatusPassed, LogPath: "logs/0001-paris.trial1.jsonl"}}},
		{ID: "rome", Status: eval.StatusFailed, Failed: 1, MinPassRate: 1, PassAtK: []float64{0},
			Trials: []eval.TrialReport{{Trial: 1, Status: eval.StatusFailed, Scores: []eval.Score{
				{Scorer: "tool_called(get_weather)", Reason: "get_weather was never called (calls: none)"}}}}},
	}, Summary: eval.Summary{Cases: 2, Passed: 1, Failed: 1}}
	_ = report.WriteJUnit(os.Stdout)
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <testsuites name="weather" tests="2" failures="1" errors="0" skipped="0" time="0.000">
	//   <testsuite name="weather" tests="2" failures="1" errors="0" skipped="0" time="0.000">
	//     <testcase name="paris" classname="weather" time="0.000">
	//       <system-out><![CDATA[pass rate 1.00 (1 passed, 0 failed, 0 skipped; needs 1.00)
	// pass@k: @1=1.000
	// trial 1: passed, log logs/0001-paris.trial1.jsonl
	// ]]></system-out>
	//     </testcase>
	//     <testcase name="rome" classname="weather" time="0.000">
	//       <failure message="1 of 1 trials failed" type="eval"><![CDATA[trial 1:
	//   tool_called(get_weather): get_weather was never called (calls: none)
	// ]]></failure>
	//       <system-out><![CDATA[pass rate 0.00 (0 passed, 1 failed, 0 skipped; needs 1.00)
	// pass@k: @1=0.000
	// trial 1: failed
	// ]]></system-out>
	//     </testcase>
	//   </testsuite>
	// </testsuites>
}
