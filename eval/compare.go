package eval

import (
	"fmt"
	"io"
)

// Comparison is how a report (after) differs from an earlier one
// (before), case by case and scorer by scorer: see [Compare].
type Comparison struct {
	// Regressions and Improvements list the changes, in the order of the
	// after report's cases, each case's own change first.
	Regressions  []Change `json:"regressions"`
	Improvements []Change `json:"improvements"`
	// Added and Removed name the cases in only one of the reports;
	// Skipped those skipped in either, which are not compared.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
}

// Change is a change of one case, or of one scorer of a case.
type Change struct {
	Case string `json:"case"`
	// Scorer names the scorer; empty for the case's own status.
	Scorer string `json:"scorer,omitempty"`
	// Before and After are the pass rates.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// BeforeStatus and AfterStatus are the case's statuses, on a change
	// of the case.
	BeforeStatus Status `json:"before_status,omitempty"`
	AfterStatus  Status `json:"after_status,omitempty"`
}

// String describes the change in one line.
func (c Change) String() string {
	if c.Scorer == "" {
		return fmt.Sprintf("%s: %s -> %s (pass rate %.2f -> %.2f)", c.Case, c.BeforeStatus, c.AfterStatus, c.Before, c.After)
	}
	return fmt.Sprintf("%s / %s: pass rate %.2f -> %.2f", c.Case, c.Scorer, c.Before, c.After)
}

// Compare compares after with before, for the cases both ran (cases are
// matched by ID). A case regressed if it passed before and fails after,
// and a scorer of a case regressed if its pass rate went down (a scorer
// only after is compared with a pass rate of 1 before, so a new failing
// expectation counts); improvements are the reverse. Pass rates count
// the trials that ran; cases skipped in either report are not compared.
func Compare(before, after *Report) *Comparison {
	cmp := &Comparison{}
	old := map[string]*CaseReport{}
	for i := range before.Cases {
		old[before.Cases[i].ID] = &before.Cases[i]
	}
	seen := map[string]bool{}
	for i := range after.Cases {
		b := &after.Cases[i]
		seen[b.ID] = true
		a, ok := old[b.ID]
		switch {
		case !ok:
			cmp.Added = append(cmp.Added, b.ID)
			continue
		case a.Status == StatusSkipped || b.Status == StatusSkipped:
			cmp.Skipped = append(cmp.Skipped, b.ID)
			continue
		}
		ch := Change{Case: b.ID, Before: a.PassRate, After: b.PassRate, BeforeStatus: a.Status, AfterStatus: b.Status}
		switch {
		case a.Status == StatusPassed && b.Status == StatusFailed:
			cmp.Regressions = append(cmp.Regressions, ch)
		case a.Status == StatusFailed && b.Status == StatusPassed:
			cmp.Improvements = append(cmp.Improvements, ch)
		}
		rates := map[string]float64{}
		for _, s := range a.Scorers {
			rates[s.Name] = s.PassRate
		}
		for _, s := range b.Scorers {
			was, ok := rates[s.Name]
			if !ok {
				was = 1
			}
			ch := Change{Case: b.ID, Scorer: s.Name, Before: was, After: s.PassRate}
			switch {
			case s.PassRate < was-1e-9:
				cmp.Regressions = append(cmp.Regressions, ch)
			case s.PassRate > was+1e-9:
				cmp.Improvements = append(cmp.Improvements, ch)
			}
		}
	}
	for _, c := range before.Cases {
		if !seen[c.ID] {
			cmp.Removed = append(cmp.Removed, c.ID)
		}
	}
	return cmp
}

// ExitCode is the exit code for CI: 1 if anything regressed, else 0.
func (c *Comparison) ExitCode() int {
	if len(c.Regressions) > 0 {
		return 1
	}
	return 0
}

// WriteText writes the comparison for a person: the regressions, the
// improvements, then the cases added, removed and skipped.
func (c *Comparison) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	section := func(title string, changes []Change) {
		fmt.Fprintf(ew, "%s: %d\n", title, len(changes))
		for _, ch := range changes {
			fmt.Fprintf(ew, "  %s\n", ch)
		}
	}
	section("regressions", c.Regressions)
	section("improvements", c.Improvements)
	for _, l := range []struct {
		title string
		ids   []string
	}{{"added", c.Added}, {"removed", c.Removed}, {"skipped", c.Skipped}} {
		if len(l.ids) > 0 {
			fmt.Fprintf(ew, "%s: %d\n", l.title, len(l.ids))
			for _, id := range l.ids {
				fmt.Fprintf(ew, "  %s\n", id)
			}
		}
	}
	return ew.err
}

// ExitCode is the exit code for CI of a single report: 1 if any case
// failed, else 0. Skipped cases do not fail it; check Summary.Skipped to
// require that every case ran.
func (r *Report) ExitCode() int {
	if r.Summary.Failed > 0 {
		return 1
	}
	return 0
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
