package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/toolloop/toolloop"
)

// Status is the outcome of a trial or a case.
type Status string

// The statuses.
const (
	// StatusPassed: every score of the trial passed; for a case, enough
	// of its trials passed (Case.MinPassRate).
	StatusPassed Status = "passed"
	// StatusFailed: a score of the trial failed; for a case, too few of
	// its trials passed.
	StatusFailed Status = "failed"
	// StatusSkipped: the trial did not run, or was cut short, because
	// the eval's budget was spent or its context canceled; for a case,
	// none of its trials ran to the end.
	StatusSkipped Status = "skipped"
)

// Report is what a [Runner] found, in a stable JSON shape: cases in the
// order given, each with its trials in order.
type Report struct {
	// Name is Runner.Name: the dataset's, say.
	Name string `json:"name,omitempty"`
	// Started is when the run began, and Duration how long it took.
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	// Summary adds up the cases.
	Summary Summary `json:"summary"`
	// Stopped, if set, says why trials were skipped: the budget limit
	// reached, or the context's error.
	Stopped string       `json:"stopped,omitempty"`
	Cases   []CaseReport `json:"cases"`
}

// Summary adds up a report's cases and trials.
type Summary struct {
	Cases   int `json:"cases"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Flaky counts the cases with some trials passed and some failed.
	Flaky         int `json:"flaky"`
	Trials        int `json:"trials"`
	TrialsPassed  int `json:"trials_passed"`
	TrialsFailed  int `json:"trials_failed"`
	TrialsSkipped int `json:"trials_skipped"`
	// Usage and Cost are what the agents' runs spent (judges' excluded).
	Usage toolloop.Usage `json:"usage"`
	Cost  float64        `json:"cost_usd"`
}

// CaseReport is what the trials of one case found. Its rates count the
// trials that ran to the end; skipped trials count in none of them.
type CaseReport struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	// Passed, Failed and Skipped count the case's trials.
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// PassRate is Passed over the trials that ran, and MinPassRate what
	// it needed to be for the case to pass.
	PassRate    float64 `json:"pass_rate"`
	MinPassRate float64 `json:"min_pass_rate"`
	// PassAtK[k-1] is pass@k: the chance that at least one of k trials
	// drawn from those that ran passes (see [PassAtK]), for k from 1 to
	// the number that ran.
	PassAtK []float64 `json:"pass_at_k,omitempty"`
	// Flaky: some trials passed and some failed.
	Flaky bool `json:"flaky,omitempty"`
	// Scorers sums up each scorer over the trials that ran, in the
	// case's order of scorers.
	Scorers []ScorerReport `json:"scorers,omitempty"`
	Trials  []TrialReport  `json:"trials"`
}

// ScorerReport sums up one scorer of a case over its trials.
type ScorerReport struct {
	Name     string  `json:"name"`
	Passed   int     `json:"passed"`
	Scored   int     `json:"scored"`
	PassRate float64 `json:"pass_rate"`
	// MeanValue is the mean of the scores' values.
	MeanValue float64 `json:"mean_value"`
}

// TrialReport is one run of a case.
type TrialReport struct {
	// Trial counts from 1.
	Trial  int    `json:"trial"`
	Status Status `json:"status"`
	// SkipReason says why a skipped trial did not run, or was cut short.
	SkipReason string `json:"skip_reason,omitempty"`
	// Scores are the scorers' verdicts, in the case's order of scorers.
	// A run that ended with an error, unless the case allows it, adds a
	// failing score of the scorer "run" first.
	Scores []Score `json:"scores,omitempty"`
	// Error is the error the run ended with, if any.
	Error string `json:"error,omitempty"`
	// LogPath is the file of the run's event log (see Runner.LogDir).
	LogPath string `json:"log_path,omitempty"`
	// LogError is the error writing the log, if any.
	LogError   string              `json:"log_error,omitempty"`
	RunID      string              `json:"run_id,omitempty"`
	StopReason toolloop.StopReason `json:"stop_reason,omitempty"`
	Turns      int                 `json:"turns"`
	ToolCalls  int                 `json:"tool_calls"`
	Usage      toolloop.Usage      `json:"usage"`
	Cost       float64             `json:"cost_usd"`
	Duration   time.Duration       `json:"duration_ns"`
	FinalText  string              `json:"final_text,omitempty"`
}

// Failures returns the scores of the trial that failed.
func (t *TrialReport) Failures() []Score {
	var out []Score
	for _, s := range t.Scores {
		if !s.Pass {
			out = append(out, s)
		}
	}
	return out
}

// PassAtK is the unbiased estimate of pass@k from n trials of which c
// passed: the chance that at least one of k trials drawn without
// replacement from the n passes, 1 - C(n-c, k)/C(n, k). It is 0 when k
// is out of 1..n.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return 0
	}
	if n-c < k {
		return 1
	}
	// C(n-c, k)/C(n, k) as a product, which neither overflows nor loses
	// precision.
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a report written by [Report.WriteJSON].
func ReadReport(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("eval: reading a report: %w", err)
	}
	return &r, nil
}

// summarize fills in the case's counts, rates and scorer sums from its
// trials.
func (c *CaseReport) summarize() {
	c.Passed, c.Failed, c.Skipped = 0, 0, 0
	type acc struct {
		ScorerReport
		sum float64
	}
	var order []string
	accs := map[string]*acc{}
	for _, t := range c.Trials {
		switch t.Status {
		case StatusPassed:
			c.Passed++
		case StatusFailed:
			c.Failed++
		default:
			c.Skipped++
			continue
		}
		for _, s := range t.Scores {
			a := accs[s.Scorer]
			if a == nil {
				a = &acc{ScorerReport: ScorerReport{Name: s.Scorer}}
				accs[s.Scorer] = a
				order = append(order, s.Scorer)
			}
			a.Scored++
			a.sum += s.Value
			if s.Pass {
				a.Passed++
			}
		}
	}
	c.Scorers = nil
	for _, name := range order {
		a := accs[name]
		a.PassRate = float64(a.Passed) / float64(a.Scored)
		a.MeanValue = a.sum / float64(a.Scored)
		c.Scorers = append(c.Scorers, a.ScorerReport)
	}
	ran := c.Passed + c.Failed
	c.PassAtK, c.PassRate = nil, 0
	switch {
	case ran == 0:
		c.Status = StatusSkipped
		return
	case c.Passed > 0 && c.Failed > 0:
		c.Flaky = true
	}
	c.PassRate = float64(c.Passed) / float64(ran)
	for k := 1; k <= ran; k++ {
		c.PassAtK = append(c.PassAtK, round(PassAtK(ran, c.Passed, k)))
	}
	c.Status = StatusFailed
	if c.PassRate >= c.MinPassRate-1e-9 {
		c.Status = StatusPassed
	}
}

// round keeps reports stable across platforms' last bits.
func round(f float64) float64 { return math.Round(f*1e9) / 1e9 }

func (r *Report) summarize() {
	s := Summary{Cases: len(r.Cases)}
	for i := range r.Cases {
		c := &r.Cases[i]
		c.summarize()
		switch c.Status {
		case StatusPassed:
			s.Passed++
		case StatusFailed:
			s.Failed++
		default:
			s.Skipped++
		}
		if c.Flaky {
			s.Flaky++
		}
		s.Trials += len(c.Trials)
		s.TrialsPassed += c.Passed
		s.TrialsFailed += c.Failed
		s.TrialsSkipped += c.Skipped
		for _, t := range c.Trials {
			s.Usage.Add(t.Usage)
			s.Cost += t.Cost
		}
	}
	r.Summary = s
}
