package taskbench

import (
	"context"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/codemode"
)

// A Strategy is how a run manages its context.
type Strategy struct {
	// Name names the strategy in benchmark names.
	Name string
	// managers returns the run's context managers; summarizer is the
	// model a Compactor may use.
	managers func(summarizer toolloop.Model) []toolloop.ContextManager
	// code runs the session in code mode: the model is sent the code
	// tool alone and writes one program per step (see codeStep).
	code bool
}

// Strategies are the benchmark's context strategies: none; the
// library's context managers with their default settings; and code
// mode, with no context management.
var Strategies = []Strategy{
	{Name: "none", managers: func(toolloop.Model) []toolloop.ContextManager { return nil }},
	{Name: "defaults", managers: func(summarizer toolloop.Model) []toolloop.ContextManager {
		return []toolloop.ContextManager{&toolloop.ClearToolResults{}, &toolloop.Compactor{Model: summarizer}}
	}},
	{Name: "code", code: true, managers: func(toolloop.Model) []toolloop.ContextManager { return nil }},
}

// A Report is what one run of a task cost.
type Report struct {
	Task     Task
	Provider *Provider
	Strategy string
	// Requests are the loop's requests; Summaries the Compactor's.
	Requests, Summaries []Exchange
	// Answer is the run's final text; Turns its model turns; Messages
	// its final transcript.
	Answer   string
	Turns    int
	Messages []toolloop.Message
	// RunUsage is the usage the loop added up from the provider's
	// answers.
	RunUsage toolloop.Usage
}

// all returns every request of the run.
func (r *Report) all() []Exchange {
	return append(append([]Exchange(nil), r.Requests...), r.Summaries...)
}

// RequestBytes is the bytes of every request, summed.
func (r *Report) RequestBytes() int64 {
	var n int64
	for _, x := range r.all() {
		n += int64(x.Bytes)
	}
	return n
}

// Usage is the usage of every request, summed.
func (r *Report) Usage() toolloop.Usage {
	var u toolloop.Usage
	for _, x := range r.all() {
		u.Add(x.Usage)
	}
	return u
}

// RoundTrips is how many requests the run made, summaries included.
func (r *Report) RoundTrips() int { return len(r.Requests) + len(r.Summaries) }

// Edits is how many of the loop's requests followed a transcript edit.
func (r *Report) Edits() int {
	n := 0
	for _, x := range r.Requests {
		if x.Edited {
			n++
		}
	}
	return n
}

// StableShare is the share of the loop's request bytes (in prompt order)
// that were the previous request's start: over every request if
// unedited is false, else over the requests after the first that
// followed no edit. It is 0 when there are none.
func (r *Report) StableShare(unedited bool) float64 {
	var stable, total int64
	for i, x := range r.Requests {
		if unedited && (i == 0 || x.Edited) {
			continue
		}
		stable += int64(x.Stable)
		total += int64(x.Prompt)
	}
	if total == 0 {
		return 0
	}
	return float64(stable) / float64(total)
}

// CacheHitShare is the share of input tokens read from the cache.
func (r *Report) CacheHitShare() float64 {
	u := r.Usage()
	if u.InputTokens == 0 {
		return 0
	}
	return float64(u.CacheReadTokens) / float64(u.InputTokens)
}

// Cost is the run's projected cost in US dollars at the provider's
// model's prices.
func (r *Report) Cost() float64 { return r.Provider.Price().Cost(r.Usage()) }

// MaxRequestTokens is the largest request's estimated tokens.
func (r *Report) MaxRequestTokens() int64 {
	var m int64
	for _, x := range r.Requests {
		m = max(m, x.Usage.InputTokens)
	}
	return m
}

// Run runs task through p's request builder with strategy s. keep keeps
// every request body in the report.
func Run(ctx context.Context, task Task, p *Provider, s Strategy, keep bool) (*Report, error) {
	main, sum := newServer(p, keep), newServer(p, keep)
	defer func() {
		main.Close()
		sum.Close()
	}()
	model, err := p.newModel(main.URL, main.Client())
	if err != nil {
		return nil, err
	}
	summodel, err := p.newModel(sum.URL, sum.Client())
	if err != nil {
		return nil, err
	}
	b := &brain{task: task, code: s.code}
	reg := tools()
	var filter toolloop.ToolFilter
	if s.code {
		reg.MustRegister(codemode.New(reg, nil))
		// The model is sent the code tool alone: the other tools are the
		// program's.
		filter = toolloop.Only(toolloop.SelectNames("run_code"))
	}
	loop := &toolloop.AgentLoop{
		// The brain decides the answer from the transcript the loop sends;
		// the provider's model then builds the request, which the server
		// records and answers with the brain's reply in the wire format.
		// (A ModelFunc has no Stream method: the requests are
		// non-streaming.)
		Model: toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			main.reply(b.respond(req.Messages))
			return model.Generate(ctx, req)
		}),
		Tools:      reg,
		ToolFilter: filter,
		ContextManagers: s.managers(toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			sum.reply(summarize(req.Messages))
			return summodel.Generate(ctx, req)
		})),
		Budget: toolloop.Budget{MaxTurns: task.Turns + 5},
		OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventTranscriptEdited {
				main.markEdit()
			}
		},
	}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.SystemMessage(systemPrompt), toolloop.UserMessage(taskPrompt)})
	if err != nil {
		return nil, fmt.Errorf("%s/%s/%s: %w", task.Name, p.Name, s.Name, err)
	}
	r := &Report{Task: task, Provider: p, Strategy: s.Name, Answer: res.FinalText, Turns: res.Turns, Messages: res.Messages, RunUsage: res.Usage}
	if r.Requests, err = main.exchanges(); err != nil {
		return nil, err
	}
	if r.Summaries, err = sum.exchanges(); err != nil {
		return nil, err
	}
	return r, nil
}
