// Package eval runs a dataset of tasks against an agent, scores what the
// agent did, and compares the results of two runs, so that CI can catch
// a change to a prompt, a tool or a model that made the agent worse.
//
// A [Runner] runs each [Case] with the program's own [toolloop.AgentLoop]
// (its model, tools, guard and limits), in parallel under a concurrency
// limit and a total [Budget], as many trials as the case asks. Each
// trial's [Scorer]s grade it; the [Report] gives every trial's scores
// and event log, each case's pass rate, pass@k and flakiness, in the
// order of the dataset. It is written as JSON ([Report.WriteJSON]) or
// JUnit XML ([Report.WriteJUnit]), and [Compare] lists the regressions
// and improvements between two reports, with an exit code for CI.
//
//	cases, err := eval.LoadDataset("weather.jsonl")
//	if err != nil { ... }
//	r := &eval.Runner{
//		Loop: func(*eval.Case) (*toolloop.AgentLoop, error) {
//			return &toolloop.AgentLoop{Model: model, Tools: tools}, nil
//		},
//		Trials: 3,
//		Budget: eval.Budget{MaxCost: 2},
//		LogDir: "eval-logs",
//	}
//	report, err := r.Run(ctx, cases)
//
// # Datasets
//
// A dataset is JSON Lines: one case per line, a JSON object that [Schema]
// describes (JSON Schema draft 2020-12) and [ReadDataset] checks, failing
// with the line number and what is wrong. Blank lines and lines that
// start with // are skipped. The members of a case:
//
//	id             string, required: names the case, unique in the dataset
//	prompt         string: the user's message
//	messages       array of toolloop.Message JSON: the input transcript
//	               (a case has prompt or messages, not both)
//	system         string: a system prompt put first
//	tools          array of tool names: the only tools offered
//	fixtures       object: tools served with canned results, by name
//	expect         array of expectations: the scorers, with parameters
//	trials         integer >= 1: runs of the case (default Runner.Trials)
//	min_pass_rate  number 0-1: the part of the trials that must pass
//	               (default 1, all)
//	allow_error    boolean: a run ending with an error does not fail the
//	               trial by itself
//
// A fixture has a "description", an "input_schema" and "results": canned
// results tried in order, the first whose "arguments" (an object matched
// as a subset of the call's, see [MatchJSON]; absent matches any call)
// answering with its "text" and "json", or failing with its "error" of
// "error_kind". Fixtures take the place of the loop's tools of the same
// name, so a dataset can run offline.
//
// Each expectation is an object whose "type" names a scorer; its other
// members are the scorer's parameters:
//
//	tool_called     name, arguments (JSON subset), min_times     [ToolCalled]
//	trajectory      tools, mode: exact|in_order|any_order|subset [Trajectory]
//	no_tool_called  names (absent: no tool at all)               [NoToolCalled]
//	output          schema, equal (JSON Pointer -> value)        [Output]
//	text_contains   text, ignore_case                            [TextContains]
//	text_matches    pattern (RE2)                                [TextMatches]
//	limits          turns, tokens, cost_usd, tool_calls (maxima) [Limits]
//	no_error_kinds  kinds (absent: no failed call at all)        [NoErrorKinds]
//	judge           rubric, min_score (Runner.Judge grades)      [Judge]
//
// For example, one line:
//
//	{"id": "paris", "prompt": "Weather in Paris?",
//	 "fixtures": {"get_weather": {"results": [{"arguments": {"city": "Paris"}, "text": "18°C, sunny"}]}},
//	 "expect": [{"type": "tool_called", "name": "get_weather", "arguments": {"city": "Paris"}},
//	            {"type": "text_contains", "text": "18°C"}], "trials": 3}
//
// Runner.Builders adds types of the program's own. In Go, a case may
// carry scorers directly (Case.Scorers), and any type with Name and
// Score methods is a Scorer.
//
// # Trials, budgets and logs
//
// A trial passes when every score passes, and, unless the case sets
// allow_error, its run ended without an error (otherwise a failing score
// of the scorer "run" says what the error was). A case passes when the
// part of its trials that passed is at least its min_pass_rate; it is
// flaky when some passed and some failed. pass@k is the unbiased
// estimate from the trials that ran (see [PassAtK]).
//
// Trials start in the report's order. Once the budget is spent, or the
// context is canceled, no more start: each trial left is in the report
// as skipped, with the reason, never dropped. With Runner.LogDir set,
// each trial's events are written with an [eventlog.Writer] to a file of
// their own, whose path the report keeps (TrialReport.LogPath), for a
// viewer to link and [eventlog.ReadFile] to replay.
package eval
