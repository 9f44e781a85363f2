package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
)

// evalFlags are the flags of toolloop eval.
type evalFlags struct {
	modelFlags
	toolFlags
	out         string
	trials      int
	concurrency int
	maxCost     float64
	timeout     time.Duration
	judgeModel  string
	compare     string
	from        string
}

// cmdEval is toolloop eval: a dataset run and scored (package eval), or,
// with -from, a recorded run added to a dataset as a case.
func cmdEval(ctx context.Context, e *env, args []string) error {
	var f evalFlags
	fs := newFlagSet(e, "eval", "[flags] DATASET\n       toolloop eval -from LOG [-o DATASET]")
	f.modelFlags.register(fs)
	f.toolFlags.register(fs)
	fs.StringVar(&f.out, "o", "", "the directory of the reports and logs (default: DATASET without .jsonl, plus .eval); with -from, the dataset to append to (default: stdout)")
	fs.IntVar(&f.trials, "trials", 1, "runs of each case that does not set its own trials")
	fs.IntVar(&f.concurrency, "concurrency", eval.DefaultConcurrency, "trials run at once")
	fs.Float64Var(&f.maxCost, "max-cost", 0, "stop starting trials once the agents have spent this many US dollars; 0: no limit")
	fs.DurationVar(&f.timeout, "timeout", 0, "the whole eval's time limit (10m); trials left are skipped; 0: none")
	fs.StringVar(&f.judgeModel, "judge-model", "", "the model (of the same provider) that grades the judge expectations; empty: the agent's model")
	fs.StringVar(&f.compare, "compare", "", "an earlier report.json to compare with: exit 1 on any regression")
	fs.StringVar(&f.from, "from", "", "add the run recorded in this event log to a dataset as a case, instead of running one")
	withNotes(fs, evalNotes)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if f.from != "" {
		if len(pos) > 0 {
			return usagef("-from takes no dataset argument: the dataset to append to is -o DATASET")
		}
		return evalFrom(e, f.from, f.out)
	}
	switch {
	case len(pos) != 1:
		return usagef("give one dataset: toolloop eval DATASET")
	case f.trials < 1:
		return usagef("-trials %d: at least 1", f.trials)
	case f.concurrency < 1:
		return usagef("-concurrency %d: at least 1", f.concurrency)
	case f.maxCost < 0:
		return usagef("-max-cost must not be negative")
	case f.timeout < 0:
		return usagef("-timeout must not be negative")
	}
	path := pos[0]
	cases, err := eval.LoadDataset(path)
	if err != nil {
		return datasetError(path, err)
	}
	var before *eval.Report
	if f.compare != "" {
		if before, err = readReport(f.compare); err != nil {
			return err
		}
	}
	model, name, err := pickModel(f.modelFlags, e.getenv)
	if err != nil {
		return err
	}
	judge := model
	if f.judgeModel != "" {
		jf := f.modelFlags
		jf.model = f.judgeModel
		if judge, _, err = pickModel(jf, e.getenv); err != nil {
			return err
		}
	}
	t, err := openTools(ctx, e, f.toolFlags)
	if err != nil {
		return err
	}
	defer t.close()
	// No terminal: a call the guard asks about pauses its run, which
	// fails the trial (datasets serve such tools as fixtures).
	loop := loopFor(model, t, nil, redactor(e.getenv), nil)
	out := f.out
	if out == "" {
		out = strings.TrimSuffix(path, filepath.Ext(path)) + ".eval"
	}
	r := &eval.Runner{
		// The script model and the providers serve runs at once; the
		// runner runs a copy of the loop for each trial.
		Loop:        func(*eval.Case) (*toolloop.AgentLoop, error) { return loop, nil },
		Name:        filepath.Base(path),
		Concurrency: f.concurrency,
		Trials:      f.trials,
		Budget:      eval.Budget{MaxCost: f.maxCost, MaxDuration: f.timeout},
		LogDir:      filepath.Join(out, "logs"),
		Judge:       judge,
	}
	// Check every case before anything runs: a bad expectation or
	// fixture is bad input.
	for i := range cases {
		if _, err := r.Scorers(&cases[i]); err != nil {
			return usagef("%s: case %q: %v", path, cases[i].ID, err)
		}
		if _, err := eval.FixtureTools(&cases[i]); err != nil {
			return usagef("%s: case %q: %v", path, cases[i].ID, err)
		}
	}
	fmt.Fprintf(e.stderr, "toolloop: model %s; %d cases; writing %s\n", name, len(cases), out)
	// Ctrl-C stops the eval: the trials running are canceled, those left
	// skipped, and the reports written with what ran.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-e.interrupts:
			close(interrupted)
			cancel()
		case <-rctx.Done():
		}
	}()
	rep, runErr := r.Run(rctx, cases)
	cancel()
	<-done
	if rep == nil {
		return runErr
	}
	if err := writeReports(out, rep); err != nil {
		return err
	}
	printSummary(e.stdout, rep, out)
	select {
	case <-interrupted:
		return errInterrupted
	case <-e.interrupts: // as the last trial ended
		return errInterrupted
	default:
	}
	if runErr != nil {
		return runErr
	}
	if before != nil {
		cmp := eval.Compare(before, rep)
		fmt.Fprintf(e.stdout, "\ncompared with %s:\n", f.compare)
		if err := cmp.WriteText(e.stdout); err != nil {
			return err
		}
		if cmp.ExitCode() != 0 {
			return fmt.Errorf("%s regressed since %s", plural(len(cmp.Regressions), "change"), f.compare)
		}
		return nil
	}
	if rep.ExitCode() != 0 {
		return fmt.Errorf("%d of %d cases failed", rep.Summary.Failed, rep.Summary.Cases)
	}
	return nil
}

// datasetError makes a dataset that cannot be read a usage error, naming
// the file and, for a bad case, the line.
func datasetError(path string, err error) error {
	var le *eval.LineError
	switch {
	case errors.As(err, &le):
		return usagef("%s:%d: %v", path, le.Line, le.Err)
	case errors.Is(err, os.ErrNotExist):
		return usagef("%s: no such dataset", path)
	}
	return usagef("reading the dataset %s: %v", path, err)
}

// readReport reads the report of -compare.
func readReport(path string) (*eval.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("-compare: %v", err)
	}
	defer f.Close()
	rep, err := eval.ReadReport(f)
	if err != nil {
		return nil, usagef("-compare: %s is not a report of toolloop eval: %v", path, err)
	}
	return rep, nil
}

// writeReports writes the report as report.json, report.xml (JUnit) and
// report.html, whose trials link to their pages under runs/.
func writeReports(dir string, rep *eval.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"report.json", rep.WriteJSON},
		{"report.xml", rep.WriteJUnit},
		{"report.html", func(w io.Writer) error { return writeHTMLReport(w, dir, rep) }},
	} {
		var b bytes.Buffer
		if err := w.write(&b); err != nil {
			return fmt.Errorf("writing %s: %w", w.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, w.name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// printSummary prints the counts and each failed case's failing scores.
func printSummary(w io.Writer, rep *eval.Report, dir string) {
	s := rep.Summary
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped of %d cases", orDefault(rep.Name, "eval"), s.Passed, s.Failed, s.Skipped, s.Cases)
	if s.Flaky > 0 {
		fmt.Fprintf(w, " (%d flaky)", s.Flaky)
	}
	fmt.Fprintf(w, "; %d of %d trials passed; %d tokens, $%.4f\n", s.TrialsPassed, s.Trials, s.Usage.InputTokens+s.Usage.OutputTokens, s.Cost)
	if rep.Stopped != "" {
		fmt.Fprintf(w, "stopped: %s\n", clean(rep.Stopped))
	}
	for _, c := range rep.Cases {
		if c.Status != eval.StatusFailed {
			continue
		}
		fmt.Fprintf(w, "FAIL %s (%d/%d trials passed)\n", clean(c.ID), c.Passed, c.Passed+c.Failed)
		for _, tr := range c.Trials {
			for _, sc := range tr.Failures() {
				fmt.Fprintf(w, "    trial %d: %s: %s\n", tr.Trial, clean(sc.Scorer), clean(firstLine(sc.Reason)))
			}
		}
	}
	fmt.Fprintf(w, "report: %s\n", filepath.Join(dir, "report.html"))
}

const evalNotes = `A dataset is JSON Lines, one case a line (go doc
github.com/toolloop/toolloop/eval has the format): the input, the tools
offered, fixtures (tools answered with canned results) and the expectations
that score each run. Each case runs with the model and the workspace tools
that toolloop run has (-script plays the same transcript for every case),
restricted to the case's tools. With no terminal, a call the guard would ask
about pauses its run, which fails the trial: serve such tools as fixtures.

The directory -o gets report.json, report.xml (JUnit), report.html (each
trial linked to its run's page under runs/) and logs/ (each trial's event
log). Exit 0: every case passed; 1: a case failed, or with -compare, a case
or scorer regressed; 2: bad usage or a bad dataset; 130: Ctrl-C (the reports
hold what ran).

-from LOG appends the recorded run to the dataset -o (or prints it): its
input, and as its expectation the tools it called, in order (or no tool, if
it called none).

` + providersHelp
