package eval_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
	"github.com/toolloop/toolloop/judgment"
	"github.com/toolloop/toolloop/looptest"
)

// call is a tool call of a synthetic run and how it ended.
type call struct {
	name, args string
	kind       toolloop.ErrorKind // empty: it succeeded
}

// trialOf builds a trial whose run made the calls, one turn each, and
// answered final.
func trialOf(final string, calls ...call) *eval.Trial {
	c := &eval.Case{ID: "c", Prompt: "Weather in Paris?"}
	res := &toolloop.RunResult{Messages: c.Input(), FinalText: final, Turns: len(calls) + 1}
	for i, cl := range calls {
		id := "call" + string(rune('a'+i))
		res.Messages = append(res.Messages, toolloop.Message{Role: toolloop.RoleAssistant,
			ToolCalls: []toolloop.ToolCall{{ID: id, Name: cl.name, Arguments: json.RawMessage(cl.args)}}})
		x := toolloop.ToolExecution{Name: cl.name, CallID: id, Turn: i + 1, Success: cl.kind == "", Output: "out"}
		if cl.kind != "" {
			x.Error = &toolloop.ToolError{Kind: cl.kind, Message: "it failed"}
		}
		res.Executions = append(res.Executions, x)
		res.ToolCalls++
	}
	res.Messages = append(res.Messages, toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent(final)}})
	return &eval.Trial{Case: c, Result: res}
}

func TestScorers(t *testing.T) {
	weather := call{name: "get_weather", args: `{"city":"Paris","units":"c"}`}
	search := call{name: "search", args: `{"q":"paris"}`}
	failed := call{name: "search", args: `{}`, kind: toolloop.KindTimeout}
	tests := []struct {
		name   string
		scorer eval.Scorer
		trial  *eval.Trial
		pass   bool
		value  float64
	}{
		{"tool called", &eval.ToolCalled{Tool: "get_weather"}, trialOf("", search, weather), true, 1},
		{"tool not called", &eval.ToolCalled{Tool: "get_weather"}, trialOf("", search), false, 0},
		{"arguments subset", &eval.ToolCalled{Tool: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}, trialOf("", weather), true, 1},
		{"arguments differ", &eval.ToolCalled{Tool: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}, trialOf("", weather), false, 0},
		{"predicate", &eval.ToolCalled{Tool: "get_weather", Match: func(a json.RawMessage) bool { return len(a) > 10 }}, trialOf("", weather), true, 1},
		{"predicate false", &eval.ToolCalled{Tool: "get_weather", Match: func(json.RawMessage) bool { return false }}, trialOf("", weather), false, 0},
		{"min times", &eval.ToolCalled{Tool: "get_weather", MinTimes: 2}, trialOf("", weather, search, weather), true, 1},
		{"min times short", &eval.ToolCalled{Tool: "get_weather", MinTimes: 2}, trialOf("", weather), false, 0},

		{"exact", &eval.Trajectory{Tools: []string{"search", "get_weather"}}, trialOf("", search, weather), true, 1},
		{"exact extra", &eval.Trajectory{Tools: []string{"search"}, Mode: eval.Exact}, trialOf("", search, weather), false, 0.5},
		{"exact order", &eval.Trajectory{Tools: []string{"get_weather", "search"}, Mode: eval.Exact}, trialOf("", search, weather), false, 0},
		{"in order", &eval.Trajectory{Tools: []string{"search", "get_weather"}, Mode: eval.InOrder}, trialOf("", search, search, weather), true, 1},
		{"in order wrong", &eval.Trajectory{Tools: []string{"get_weather", "search"}, Mode: eval.InOrder}, trialOf("", search, weather), false, 1.0 / 2},
		{"any order", &eval.Trajectory{Tools: []string{"get_weather", "search"}, Mode: eval.AnyOrder}, trialOf("", search, weather), true, 1},
		{"any order extra", &eval.Trajectory{Tools: []string{"get_weather", "search"}, Mode: eval.AnyOrder}, trialOf("", search, weather, search), false, 2.0 / 3},
		{"subset", &eval.Trajectory{Tools: []string{"get_weather"}, Mode: eval.Subset}, trialOf("", search, weather, search), true, 1},
		{"subset missing", &eval.Trajectory{Tools: []string{"get_weather", "get_weather"}, Mode: eval.Subset}, trialOf("", weather), false, 0.5},
		{"bad mode", &eval.Trajectory{Mode: "roughly"}, trialOf(""), false, 0},

		{"no tool", &eval.NoToolCalled{}, trialOf("hi"), true, 1},
		{"some tool", &eval.NoToolCalled{}, trialOf("hi", search), false, 0},
		{"not these", &eval.NoToolCalled{Names: []string{"delete"}}, trialOf("hi", search), true, 1},
		{"one of these", &eval.NoToolCalled{Names: []string{"delete", "search"}}, trialOf("hi", search), false, 0},

		{"output", &eval.Output{Schema: json.RawMessage(`{"type":"object","required":["city"]}`),
			Equal: map[string]json.RawMessage{"/city": json.RawMessage(`"Paris"`), "/temp/c": json.RawMessage(`18.0`)}},
			trialOf(`{"city":"Paris","temp":{"c":18}}`), true, 1},
		{"output in fence", &eval.Output{Equal: map[string]json.RawMessage{"/city": json.RawMessage(`"Paris"`)}},
			trialOf("Here:\n```json\n{\"city\":\"Paris\"}\n```"), true, 1},
		{"output not json", &eval.Output{}, trialOf("Paris"), false, 0},
		{"output schema", &eval.Output{Schema: json.RawMessage(`{"type":"object","required":["temp"]}`)}, trialOf(`{"city":"Paris"}`), false, 0},
		{"output field", &eval.Output{Equal: map[string]json.RawMessage{"/city": json.RawMessage(`"Rome"`)}}, trialOf(`{"city":"Paris"}`), false, 0},
		{"output missing field", &eval.Output{Equal: map[string]json.RawMessage{"/x/0": json.RawMessage(`1`)}}, trialOf(`{"city":"Paris"}`), false, 0},

		{"contains", &eval.TextContains{Text: "18°C"}, trialOf("It is 18°C."), true, 1},
		{"contains case", &eval.TextContains{Text: "PARIS", IgnoreCase: true}, trialOf("In Paris."), true, 1},
		{"does not contain", &eval.TextContains{Text: "PARIS"}, trialOf("In Paris."), false, 0},
		{"matches", &eval.TextMatches{Pattern: regexp.MustCompile(`\d+°C`)}, trialOf("It is 18°C."), true, 1},
		{"does not match", &eval.TextMatches{Pattern: regexp.MustCompile(`^\d+$`)}, trialOf("It is 18°C."), false, 0},

		{"within limits", &eval.Limits{Turns: 2, ToolCalls: 1}, trialOf("", search), true, 1},
		{"over turns", &eval.Limits{Turns: 1}, trialOf("", search), false, 0},
		{"over tool calls", &eval.Limits{ToolCalls: 1}, trialOf("", search, search), false, 0},

		{"no error kinds", &eval.NoErrorKinds{Kinds: []toolloop.ErrorKind{toolloop.KindPanic}}, trialOf("", failed), true, 1},
		{"an error kind", &eval.NoErrorKinds{Kinds: []toolloop.ErrorKind{toolloop.KindTimeout}}, trialOf("", failed), false, 0},
		{"no errors at all", &eval.NoErrorKinds{}, trialOf("", search, failed), false, 0},
		{"no errors", &eval.NoErrorKinds{}, trialOf("", search), true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.scorer.Score(context.Background(), tt.trial)
			assert.Equal(t, tt.pass, s.Pass, s.Reason)
			assert.InDelta(t, tt.value, s.Value, 1e-9)
			if !s.Pass {
				assert.NotEmpty(t, s.Reason)
			}
			assert.NotEmpty(t, tt.scorer.Name())
		})
	}
}

func TestLimitsTokensAndCost(t *testing.T) {
	tr := trialOf("")
	tr.Result.Usage = toolloop.Usage{InputTokens: 900, OutputTokens: 200}
	tr.Result.Cost = 0.02
	assert.True(t, (&eval.Limits{Tokens: 1100, CostUSD: 0.02}).Score(context.Background(), tr).Pass)
	s := (&eval.Limits{Tokens: 1000, CostUSD: 0.01}).Score(context.Background(), tr)
	assert.False(t, s.Pass)
	assert.Contains(t, s.Reason, "1100 tokens")
}

func TestOutputPrefersTypedOutput(t *testing.T) {
	tr := trialOf("not json")
	tr.Result.Output = json.RawMessage(`{"n":1}`)
	assert.JSONEq(t, `{"n":1}`, string(eval.FinalOutput(tr.Result)))
	assert.True(t, (&eval.Output{Equal: map[string]json.RawMessage{"/n": json.RawMessage(`1`)}}).Score(context.Background(), tr).Pass)
}

func TestMatchJSON(t *testing.T) {
	tests := []struct {
		want, got string
		match     bool
	}{
		{`{}`, `{"a":1}`, true},
		{`{"a":1}`, `{"a":1.0,"b":2}`, true},
		{`{"a":{"b":[1,{"c":2}]}}`, `{"a":{"b":[1,{"c":2,"d":3}],"e":0}}`, true},
		{`{"a":[1]}`, `{"a":[1,2]}`, false},
		{`{"a":"1"}`, `{"a":1}`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":null}`, `{"a":null}`, true},
		{`[1,2]`, `[1,2]`, true},
		{`"x"`, `"x"`, true},
		{`{"a":1}`, `not json`, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.match, eval.MatchJSON(json.RawMessage(tt.want), json.RawMessage(tt.got)), "%s in %s", tt.want, tt.got)
	}
}

func TestJudge(t *testing.T) {
	tr := trialOf("It is 18°C and sunny in Paris.", call{name: "get_weather", args: `{"city":"Paris"}`})
	var work string
	judge := looptest.NewModel(t,
		looptest.Turn{
			Reply: looptest.Text(`{"pass": true, "score": 0.9, "reasoning": "It called the tool and gave the temperature."}`),
			Check: func(req *toolloop.Request) string { work = req.Messages[1].Text(); return "" },
		},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("g", judgment.GradeTool, `{"pass": true, "score": 0.4, "reasoning": "Vague."}`))},
		looptest.Turn{Reply: looptest.Text(`{"pass": false, "reasoning": "No temperature."}`)},
		looptest.Turn{Reply: looptest.Text(`Looks fine to me!`)},
	)
	s := &eval.Judge{Model: judge, Rubric: "Gives the temperature.", MinScore: 0.5}
	assert.Equal(t, "judge", s.Name())

	sc := s.Score(context.Background(), tr)
	assert.True(t, sc.Pass)
	assert.Equal(t, 0.9, sc.Value)
	assert.Equal(t, "It called the tool and gave the temperature.", sc.Reason)
	assert.JSONEq(t, `{"pass": true, "score": 0.9, "reasoning": "It called the tool and gave the temperature."}`, string(sc.Details))
	assert.Contains(t, work, "Gives the temperature.")
	assert.Contains(t, work, `get_weather {"city":"Paris"} returned (ok): out`)
	assert.Contains(t, work, "It is 18°C and sunny in Paris.")

	sc = s.Score(context.Background(), tr)
	assert.False(t, sc.Pass, "a pass under MinScore fails")
	assert.Equal(t, 0.4, sc.Value)
	assert.Contains(t, sc.Reason, "Vague.")

	sc = s.Score(context.Background(), tr)
	assert.False(t, sc.Pass)
	assert.Equal(t, "No temperature.", sc.Reason)

	sc = s.Score(context.Background(), tr)
	assert.False(t, sc.Pass, "an answer that is no grade fails")
	assert.NotEmpty(t, sc.Reason)
}
