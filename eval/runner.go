package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// DefaultConcurrency is how many trials run at once when
// Runner.Concurrency is zero.
const DefaultConcurrency = 4

// ErrNoLoop is the error of [Runner.Run] when the runner has no Loop.
var ErrNoLoop = errors.New("eval: Runner has no Loop")

// Runner runs the cases of a dataset against an agent and scores them.
//
// Only Loop is required; every other zero field is a documented default.
// Set the fields before Run; a Runner may then run several datasets at
// once.
type Runner struct {
	// Loop builds the agent loop for one trial of a case: the program's
	// model, tools, guard and limits. It is called once per trial, from
	// the trial's goroutine (so from several at once), and may return the
	// same loop every time, if the loop's model may serve several runs at
	// once; a scripted model should be made afresh for each trial. The
	// runner runs a copy of it, to which it adds, for the trial only: the
	// case's fixtures (see [FixtureTools]), which take the place of the
	// loop's tools of the same name; a tool filter offering only the
	// case's Tools, if set, within the loop's own filter; and the event
	// log, after the loop's own OnEvent. Tools of the loop's registry are
	// copied into the trial's registry when the case has fixtures, so
	// sources that change their tools at run time (MCP servers) are not
	// refreshed then.
	Loop func(c *Case) (*toolloop.AgentLoop, error)
	// Name names the report (the dataset, say); it is the JUnit suite's
	// name.
	Name string
	// Concurrency bounds the trials that run at once; 0 means
	// DefaultConcurrency.
	Concurrency int
	// Trials is how many times each case runs when its Trials is 0; 0
	// means once.
	Trials int
	// Budget bounds what the whole eval spends.
	Budget Budget
	// LogDir, if set, is the directory (created if need be) where each
	// trial's event log is written, one file per trial named after the
	// case's position, ID and the trial (see TrialReport.LogPath).
	LogDir string
	// LogOptions configure the event logs.
	LogOptions eventlog.Options
	// Judge is the model of the dataset's "judge" expectations.
	Judge toolloop.Model
	// Builders add expectation types a dataset may name, or replace
	// built-in ones.
	Builders map[string]Builder
	// OnTrial, if set, is called as each trial ends or is skipped, one
	// at a time, in the order they end: for progress.
	OnTrial func(c *Case, t *TrialReport)
}

// Budget bounds what an eval spends in all. Trials are started in the
// report's order (by case, then trial); once a limit is reached no more
// start, and those left are reported as skipped, saying which limit.
// Spending is counted when a trial ends, so the trials running when a
// limit is reached finish and may overspend it by what they spend.
// MaxDuration is a deadline: trials still running when it passes are
// canceled and reported as skipped. What judges spend is not counted.
// The zero value limits nothing.
type Budget struct {
	// MaxCost bounds the agents' cost in US dollars; 0 means no limit.
	MaxCost float64
	// MaxTokens bounds the agents' input and output tokens; 0 means no
	// limit.
	MaxTokens int64
	// MaxDuration bounds the eval's wall-clock time; 0 means no limit.
	MaxDuration time.Duration
}

var errDeadline = errors.New("eval: the budget's MaxDuration passed")

type job struct {
	ci, n int
}

// Run runs every trial of every case and returns the report. Trials run
// in parallel up to Concurrency; the report lists cases in the order
// given and each case's trials in order, however they were scheduled.
//
// Before running anything, Run checks the cases (IDs present and unique,
// expectations known and valid, fixtures valid) and returns an error if
// one is wrong. When ctx is canceled, trials stop: those running are
// canceled, those left are skipped, and Run returns the report with
// ctx's error once every trial's goroutine has ended.
func (r *Runner) Run(ctx context.Context, cases []Case) (*Report, error) {
	if r.Loop == nil {
		return nil, ErrNoLoop
	}
	scorers := make([][]Scorer, len(cases))
	seen := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		if c.ID == "" {
			return nil, fmt.Errorf("eval: case %d has no ID", i+1)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("eval: case ID %q is used twice", c.ID)
		}
		seen[c.ID] = true
		var err error
		if scorers[i], err = r.Scorers(c); err != nil {
			return nil, err
		}
		if _, err := FixtureTools(c); err != nil {
			return nil, err
		}
	}
	if r.LogDir != "" {
		if err := os.MkdirAll(r.LogDir, 0o755); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	}

	rep := &Report{Name: r.Name, Started: time.Now(), Cases: make([]CaseReport, len(cases))}
	var jobs []job
	for i := range cases {
		n := cases[i].Trials
		if n <= 0 {
			n = max(r.Trials, 1)
		}
		minRate := 1.0
		if p := cases[i].MinPassRate; p != nil {
			minRate = *p
		}
		rep.Cases[i] = CaseReport{ID: cases[i].ID, MinPassRate: minRate, Trials: make([]TrialReport, n)}
		for t := range n {
			jobs = append(jobs, job{i, t})
		}
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if d := r.Budget.MaxDuration; d > 0 {
		var stop context.CancelFunc
		runCtx, stop = context.WithTimeoutCause(runCtx, d, errDeadline)
		defer stop()
	}
	conc := r.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	sem := make(chan struct{}, conc)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex // guards spent, stopped and OnTrial calls
		spent  toolloop.Accounting
		reason string
	)
	done := func(j job, tr *TrialReport) {
		mu.Lock()
		defer mu.Unlock()
		spent.Usage.Add(tr.Usage)
		spent.Cost += tr.Cost
		if r.OnTrial != nil {
			r.OnTrial(&cases[j.ci], tr)
		}
	}
	for _, j := range jobs {
		tr := &rep.Cases[j.ci].Trials[j.n]
		tr.Trial = j.n + 1
		if reason == "" {
			// Wait for a slot, so that the budget is checked with what
			// the trials before have spent.
			acquired := false
			select {
			case sem <- struct{}{}:
				acquired = true
			case <-runCtx.Done():
			}
			mu.Lock()
			reason = r.spentReason(runCtx, spent)
			mu.Unlock()
			if reason != "" && acquired {
				<-sem
			}
		}
		if reason != "" {
			tr.Status, tr.SkipReason = StatusSkipped, reason
			done(j, tr)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r.trial(runCtx, &cases[j.ci], j, scorers[j.ci], tr)
			done(j, tr)
		}()
	}
	wg.Wait()
	rep.Stopped = reason
	for i := range rep.Cases {
		for _, t := range rep.Cases[i].Trials {
			if rep.Stopped == "" && t.SkipReason != "" {
				rep.Stopped = t.SkipReason // a trial cut short by the deadline
			}
		}
	}
	rep.Duration = time.Since(rep.Started)
	rep.summarize()
	return rep, ctx.Err()
}

// spentReason says why no more trials may start, or "".
func (r *Runner) spentReason(ctx context.Context, spent toolloop.Accounting) string {
	b := r.Budget
	switch {
	case context.Cause(ctx) == errDeadline:
		return fmt.Sprintf("budget: the eval's time limit (%s) passed", b.MaxDuration)
	case ctx.Err() != nil:
		return "canceled: " + context.Cause(ctx).Error()
	case b.MaxCost > 0 && spent.Cost >= b.MaxCost:
		return fmt.Sprintf("budget: the eval spent $%.4f of its $%.4f", spent.Cost, b.MaxCost)
	case b.MaxTokens > 0 && spent.Usage.InputTokens+spent.Usage.OutputTokens >= b.MaxTokens:
		return fmt.Sprintf("budget: the eval spent %d of its %d tokens", spent.Usage.InputTokens+spent.Usage.OutputTokens, b.MaxTokens)
	}
	return ""
}

// trial runs trial n of c and fills in tr.
func (r *Runner) trial(ctx context.Context, c *Case, j job, scorers []Scorer, tr *TrialReport) {
	n := j.n
	l, closeLog, err := r.loop(ctx, c, j, tr)
	if err != nil {
		tr.Status, tr.Error = StatusFailed, err.Error()
		tr.Scores = []Score{{Scorer: "run", Reason: "building the loop: " + err.Error()}}
		return
	}
	start := time.Now()
	res, runErr := l.Run(ctx, c.Input())
	tr.Duration = time.Since(start)
	if closeLog != nil {
		if err := closeLog(); err != nil {
			tr.LogError = err.Error()
		}
	}
	if res == nil {
		res = &toolloop.RunResult{}
	}
	tr.RunID, tr.StopReason, tr.Turns, tr.ToolCalls = res.RunID, res.StopReason, res.Turns, res.ToolCalls
	tr.Usage, tr.Cost, tr.FinalText = res.Usage, res.Cost, res.FinalText
	if runErr != nil {
		tr.Error = runErr.Error()
	}
	if runErr != nil && ctx.Err() != nil {
		tr.Status = StatusSkipped
		tr.SkipReason = "canceled while running: " + context.Cause(ctx).Error()
		if context.Cause(ctx) == errDeadline {
			tr.SkipReason = fmt.Sprintf("budget: the eval's time limit (%s) passed while it ran", r.Budget.MaxDuration)
		}
		return
	}
	t := &Trial{Case: c, N: n, Result: res, Err: runErr, Duration: tr.Duration, LogPath: tr.LogPath}
	if runErr != nil && !c.AllowError {
		tr.Scores = append(tr.Scores, Score{Scorer: "run", Reason: "the run ended with an error: " + runErr.Error()})
	}
	names := map[string]int{}
	for _, s := range scorers {
		sc := score(ctx, s, t)
		names[sc.Scorer]++
		if k := names[sc.Scorer]; k > 1 {
			sc.Scorer = fmt.Sprintf("%s#%d", sc.Scorer, k)
		}
		tr.Scores = append(tr.Scores, sc)
	}
	tr.Status = StatusPassed
	if len(tr.Failures()) > 0 {
		tr.Status = StatusFailed
	}
}

// score runs one scorer, recovering a panic as a failing score.
func score(ctx context.Context, s Scorer, t *Trial) (sc Score) {
	name := s.Name()
	defer func() {
		if p := recover(); p != nil {
			sc = Score{Reason: fmt.Sprintf("the scorer panicked: %v\n%s", p, debug.Stack())}
		}
		sc.Scorer = name
	}()
	return s.Score(ctx, t)
}

// loop returns the trial's copy of the user's loop, with its fixtures,
// tool filter and event log, and the function that closes the log.
func (r *Runner) loop(ctx context.Context, c *Case, j job, tr *TrialReport) (*toolloop.AgentLoop, func() error, error) {
	base, err := r.Loop(c)
	if err != nil {
		return nil, nil, err
	}
	if base == nil {
		return nil, nil, errors.New("the Loop function returned no loop")
	}
	l := *base
	if len(c.Fixtures) > 0 {
		reg, err := fixtureRegistry(ctx, c, base.Tools)
		if err != nil {
			return nil, nil, err
		}
		l.Tools = reg
	}
	if c.Tools != nil {
		names, prev := c.Tools, base.ToolFilter
		l.ToolFilter = func(st *toolloop.TurnState, t *toolloop.ToolInfo) bool {
			return slices.Contains(names, t.Name) && (prev == nil || prev(st, t))
		}
	}
	if r.LogDir == "" {
		return &l, nil, nil
	}
	tr.LogPath = filepath.Join(r.LogDir, logName(c, j))
	w, err := eventlog.Create(tr.LogPath, r.LogOptions)
	if err != nil {
		return nil, nil, err
	}
	prev := base.OnEvent
	l.OnEvent = func(e toolloop.Event) {
		if prev != nil {
			prev(e)
		}
		w.Record(e)
	}
	return &l, w.Close, nil
}

// fixtureRegistry returns a registry of c's fixtures and of the tools of
// user that they do not replace, each of these in a source of its own
// kind and name.
func fixtureRegistry(ctx context.Context, c *Case, user *toolloop.ToolRegistry) (*toolloop.ToolRegistry, error) {
	fixtures, err := FixtureTools(c)
	if err != nil {
		return nil, err
	}
	reg := &toolloop.ToolRegistry{AllowShadowing: true}
	if err := reg.Register(fixtures...); err != nil {
		return nil, err
	}
	if user == nil {
		return reg, nil
	}
	type key struct {
		kind toolloop.SourceKind
		name string
	}
	var order []key
	groups := map[key][]toolloop.Tool{}
	for _, info := range user.Tools(ctx) {
		if _, ok := c.Fixtures[info.Name]; ok {
			continue
		}
		t, ok := user.Lookup(ctx, info.Name)
		if !ok {
			continue
		}
		k := key{info.Source, info.SourceName}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], t)
	}
	for _, k := range order {
		if err := reg.AddSource(ctx, toolloop.NewSource("eval."+k.name, k.kind, groups[k]...)); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// logName is a trial's log file name: the case's position, its ID made
// safe for a file name, and the trial.
func logName(c *Case, j job) string {
	id := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, c.ID)
	if len(id) > 80 {
		id = id[:80]
	}
	return fmt.Sprintf("%04d-%s.trial%d.jsonl", j.ci+1, id, j.n+1)
}
