package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/toolloop/toolloop"
)

// Builder builds a scorer from the parameters of an [Expectation]: the
// whole JSON object, "type" included. Runner.Builders adds scorer types
// to those a dataset may name.
type Builder func(params json.RawMessage) (Scorer, error)

// ErrJudgeModel is the error of a "judge" expectation when the runner has
// no Judge model.
var ErrJudgeModel = errors.New("eval: a judge expectation needs Runner.Judge")

// Scorers returns the scorers of c: one per expectation, built as its
// type says, then c.Scorers. An expectation of an unknown type, or whose
// parameters are not valid for its type, is an error naming it.
func (r *Runner) Scorers(c *Case) ([]Scorer, error) {
	out := make([]Scorer, 0, len(c.Expect)+len(c.Scorers))
	for i, e := range c.Expect {
		s, err := r.build(e)
		if err != nil {
			return nil, fmt.Errorf("eval: case %q: expectation %d (%s): %w", c.ID, i+1, e.Type, err)
		}
		out = append(out, s)
	}
	return append(out, c.Scorers...), nil
}

func (r *Runner) build(e Expectation) (Scorer, error) {
	if b, ok := r.Builders[e.Type]; ok {
		return b(e.Params)
	}
	params := e.Params
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	switch e.Type {
	case "tool_called":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			MinTimes  int             `json:"min_times"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if p.Name == "" {
			return nil, errors.New("no tool name")
		}
		return &ToolCalled{Tool: p.Name, Arguments: p.Arguments, MinTimes: p.MinTimes}, nil
	case "trajectory":
		var p struct {
			Tools []string       `json:"tools"`
			Mode  TrajectoryMode `json:"mode"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		switch p.Mode {
		case "", Exact, InOrder, AnyOrder, Subset:
		default:
			return nil, fmt.Errorf("unknown mode %q", p.Mode)
		}
		return &Trajectory{Tools: p.Tools, Mode: p.Mode}, nil
	case "no_tool_called":
		var p struct {
			Names []string `json:"names"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		return &NoToolCalled{Names: p.Names}, nil
	case "output":
		var p struct {
			Schema json.RawMessage            `json:"schema"`
			Equal  map[string]json.RawMessage `json:"equal"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if p.Schema != nil {
			if _, err := compile(p.Schema); err != nil {
				return nil, fmt.Errorf("the schema does not compile: %w", err)
			}
		}
		return &Output{Schema: p.Schema, Equal: p.Equal}, nil
	case "text_contains":
		var p struct {
			Text       string `json:"text"`
			IgnoreCase bool   `json:"ignore_case"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		return &TextContains{Text: p.Text, IgnoreCase: p.IgnoreCase}, nil
	case "text_matches":
		var p struct {
			Pattern string `json:"pattern"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return nil, err
		}
		return &TextMatches{Pattern: re}, nil
	case "limits":
		var p struct {
			Turns     int     `json:"turns"`
			Tokens    int64   `json:"tokens"`
			CostUSD   float64 `json:"cost_usd"`
			ToolCalls int     `json:"tool_calls"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		return &Limits{Turns: p.Turns, Tokens: p.Tokens, CostUSD: p.CostUSD, ToolCalls: p.ToolCalls}, nil
	case "no_error_kinds":
		var p struct {
			Kinds []toolloop.ErrorKind `json:"kinds"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		return &NoErrorKinds{Kinds: p.Kinds}, nil
	case "judge":
		var p struct {
			Rubric   string  `json:"rubric"`
			MinScore float64 `json:"min_score"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if r.Judge == nil {
			return nil, ErrJudgeModel
		}
		return &Judge{Model: r.Judge, Rubric: p.Rubric, MinScore: p.MinScore}, nil
	}
	return nil, fmt.Errorf("unknown expectation type %q", e.Type)
}
