package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/judgment"
)

// Judge asks a model to grade the run against Rubric, through a
// [judgment.Grader]: it is shown the task, every tool call with its
// arguments and result, and the final answer. It passes when the judge
// says pass and its score is at least MinScore. The score's Value is the
// judge's score, its Reason the judge's reasoning, and its Details the
// whole grade as JSON. A judge that fails or answers with no valid grade
// fails the score, saying why. Dataset type "judge", with "rubric" and
// "min_score"; its model is Runner.Judge.
type Judge struct {
	Model    toolloop.Model
	Rubric   string
	MinScore float64
	// Timeout bounds the judge's answer; 0 means judgment.DefaultTimeout.
	Timeout time.Duration
}

// Name implements [Scorer]: "judge".
func (s *Judge) Name() string { return "judge" }

// Score implements [Scorer].
func (s *Judge) Score(ctx context.Context, t *Trial) Score {
	g := &judgment.Grader{Model: s.Model, Timeout: s.Timeout}
	grade, err := g.Grade(ctx, s.Rubric, Work(t))
	if err != nil {
		return Fail(err.Error())
	}
	details, _ := json.Marshal(grade)
	sc := Score{Pass: grade.Pass && grade.Score >= s.MinScore, Value: grade.Score, Reason: grade.Reasoning, Details: details}
	if grade.Pass && !sc.Pass {
		sc.Reason = fmt.Sprintf("score %.2f is under %.2f: %s", grade.Score, s.MinScore, grade.Reasoning)
	}
	return sc
}

// Work renders a trial as the judge reads it: the task, each tool call
// with its arguments and result, and the final answer. Long results are
// cut.
func Work(t *Trial) string {
	var b strings.Builder
	b.WriteString("Task:\n")
	for _, m := range t.Case.Input() {
		if text := m.Text(); text != "" {
			fmt.Fprintf(&b, "[%s] %s\n", m.Role, text)
		}
	}
	out := map[string]toolloop.ToolExecution{}
	for _, x := range t.Result.Executions {
		out[x.CallID] = x
	}
	if calls := t.ToolCalls(); len(calls) > 0 {
		b.WriteString("\nTool calls:\n")
		for i, c := range calls {
			x := out[c.ID]
			status := "ok"
			if x.Error != nil {
				status = "error " + string(x.Error.Kind)
			}
			fmt.Fprintf(&b, "%d. %s %s returned (%s): %s\n", i+1, c.Name, c.Arguments, status, clip(x.Output, 2000))
		}
	}
	b.WriteString("\nFinal answer:\n")
	if out := t.Result.Output; len(out) > 0 {
		b.Write(out)
	} else {
		b.WriteString(t.Result.FinalText)
	}
	if t.Err != nil {
		fmt.Fprintf(&b, "\n\nThe run ended with an error: %v", t.Err)
	}
	return b.String()
}
