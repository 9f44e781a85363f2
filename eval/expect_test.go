package eval_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/eval"
	"github.com/toolloop/toolloop/looptest"
)

func TestScorersFromExpectations(t *testing.T) {
	judge := looptest.Always(looptest.Text(`{"pass": true, "reasoning": "fine"}`))
	r := &eval.Runner{Judge: judge, Builders: map[string]eval.Builder{
		"short": func(params json.RawMessage) (eval.Scorer, error) {
			var p struct{ Max int }
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			return eval.ScorerFunc("short", func(_ context.Context, t *eval.Trial) eval.Score {
				if len(t.Result.FinalText) <= p.Max {
					return eval.Pass("")
				}
				return eval.Fail("too long")
			}), nil
		},
	}}
	c := &eval.Case{ID: "c", Prompt: "x", Expect: []eval.Expectation{
		exp(`{"type": "tool_called", "name": "get_weather", "arguments": {"city": "Paris"}, "min_times": 1}`),
		exp(`{"type": "trajectory", "tools": ["get_weather"], "mode": "subset"}`),
		exp(`{"type": "no_tool_called", "names": ["delete"]}`),
		exp(`{"type": "output", "schema": {"type": "object"}, "equal": {"/city": "Paris"}}`),
		exp(`{"type": "text_contains", "text": "paris", "ignore_case": true}`),
		exp(`{"type": "text_matches", "pattern": "\\d+"}`),
		exp(`{"type": "limits", "turns": 5, "tokens": 1000, "cost_usd": 0.5, "tool_calls": 3}`),
		exp(`{"type": "no_error_kinds", "kinds": ["panic"]}`),
		exp(`{"type": "judge", "rubric": "Is right."}`),
		exp(`{"type": "short", "max": 100}`),
	}}
	scorers, err := r.Scorers(c)
	require.NoError(t, err)
	var names []string
	tr := trialOf(`{"city":"Paris","temp":18}`, call{name: "get_weather", args: `{"city":"Paris"}`})
	tr.Case = c
	for _, s := range scorers {
		names = append(names, s.Name())
		sc := s.Score(context.Background(), tr)
		assert.True(t, sc.Pass, "%s: %s", s.Name(), sc.Reason)
	}
	assert.Equal(t, []string{"tool_called(get_weather)", "trajectory(subset)", "no_tool_called(delete)", "output",
		`text_contains("paris")`, `text_matches("\\d+")`, "limits", "no_error_kinds(panic)", "judge", "short"}, names)

	for _, bad := range []string{
		`{"type": "mystery"}`,
		`{"type": "text_matches", "pattern": "("}`,
		`{"type": "trajectory", "tools": [], "mode": "roughly"}`,
		`{"type": "output", "schema": {"type": 7}}`,
		`{"type": "tool_called"}`,
	} {
		_, err := r.Scorers(&eval.Case{ID: "c", Expect: []eval.Expectation{exp(bad)}})
		assert.Error(t, err, bad)
	}
	_, err = (&eval.Runner{}).Scorers(&eval.Case{ID: "c", Expect: []eval.Expectation{exp(`{"type": "judge", "rubric": "r"}`)}})
	assert.ErrorIs(t, err, eval.ErrJudgeModel)
}

func exp(s string) eval.Expectation {
	var e eval.Expectation
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		panic(err)
	}
	return e
}
