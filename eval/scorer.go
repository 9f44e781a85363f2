package eval

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolloop/toolloop"
)

// Scorer scores one trial of a case: what the agent did in one run.
//
// Name identifies the scorer within its case, in reports and in
// [Compare], so it should be stable across runs and say what is checked
// ("tool_called(get_weather)"). Score must honour ctx and be safe to call
// from several goroutines at once: the runner scores trials in parallel.
// A scorer that cannot decide (its judge failed, say) returns a failing
// Score whose Reason says why; a panic in Score is recovered and fails
// the score.
type Scorer interface {
	Name() string
	Score(ctx context.Context, t *Trial) Score
}

// Score is a scorer's verdict on a trial.
type Score struct {
	// Scorer is the scorer's Name; the runner sets it.
	Scorer string `json:"scorer"`
	// Pass says whether the trial met the scorer's expectation.
	Pass bool `json:"pass"`
	// Value is a measure from 0 to 1 where the scorer has one (a judge's
	// score, the part of a trajectory matched); otherwise 1 for a pass
	// and 0 for a fail.
	Value float64 `json:"value"`
	// Reason says why, above all when the trial failed.
	Reason string `json:"reason,omitempty"`
	// Details holds what else the scorer keeps, as JSON: the judge keeps
	// its whole grade (verdict, score and reasoning).
	Details json.RawMessage `json:"details,omitempty"`
}

// Pass returns a passing score with value 1.
func Pass(reason string) Score { return Score{Pass: true, Value: 1, Reason: reason} }

// Fail returns a failing score with value 0.
func Fail(reason string) Score { return Score{Reason: reason} }

// Trial is one run of a case, as scorers see it.
type Trial struct {
	// Case is the case run.
	Case *Case
	// N is the trial's number within the case, from 0.
	N int
	// Result is what the run produced; never nil (an empty result when
	// the loop gave none).
	Result *toolloop.RunResult
	// Err is the error the run ended with, if any.
	Err error
	// Duration is the run's wall-clock time.
	Duration time.Duration
	// LogPath is the file of the run's event log, when the runner keeps
	// logs.
	LogPath string
}

// ToolCalls returns the tool calls the run made, in order, as the
// model sent them: one per entry of Result.Executions, with its arguments
// found in the transcript (nil if a context manager removed them).
func (t *Trial) ToolCalls() []toolloop.ToolCall {
	if len(t.Result.Executions) == 0 {
		return nil
	}
	args := map[string]json.RawMessage{}
	for _, m := range t.Result.Messages {
		for _, c := range m.ToolCalls {
			args[c.ID] = c.Arguments
		}
	}
	calls := make([]toolloop.ToolCall, len(t.Result.Executions))
	for i, x := range t.Result.Executions {
		calls[i] = toolloop.ToolCall{ID: x.CallID, Name: x.Name, Arguments: args[x.CallID]}
	}
	return calls
}

// ScorerFunc adapts a function to the [Scorer] interface, under a name.
func ScorerFunc(name string, f func(ctx context.Context, t *Trial) Score) Scorer {
	return scorerFunc{name, f}
}

type scorerFunc struct {
	name string
	f    func(context.Context, *Trial) Score
}

func (s scorerFunc) Name() string                              { return s.name }
func (s scorerFunc) Score(ctx context.Context, t *Trial) Score { return s.f(ctx, t) }
