// Command longrun runs a long scripted coding session offline (no API key)
// on a model with a small context window, and prints what keeps it alive
// as it happens: old tool results cleared, older turns compacted into a
// summary, the budget's limit reached, and the wrap-up turn that ends the
// run with a final answer.
//
//	go run ./examples/longrun
//	go run ./examples/longrun -files 400 -window 12000 -max-calls 0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

// modelName is the scripted model's name in the loop's model table.
const modelName = "scripted-small"

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "longrun:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("longrun", flag.ContinueOnError)
	fs.SetOutput(out)
	files := fs.Int("files", 200, "how many files the agent reads, one per turn")
	window := fs.Int("window", 8000, "the model's context window, in tokens")
	maxCalls := fs.Int("max-calls", 150, "the run's tool-call budget (0: none)")
	maxCost := fs.Float64("max-cost", 5, "the run's budget in US dollars (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	loop := &toolloop.AgentLoop{
		Model: &agent{files: *files},
		Tools: tools(),
		// The scripted model's window and price: a dollar per million
		// input tokens, five per million output tokens.
		ModelTable: toolloop.ModelTable{modelName: {ContextWindow: *window, Price: &toolloop.Price{Input: 1, Output: 5}}},
		ContextManagers: []toolloop.ContextManager{
			// Past half the window, old file contents become stubs, at
			// least a thousand tokens' worth at a time...
			&toolloop.ClearToolResults{When: toolloop.Threshold{Fraction: 0.5}, KeepTurns: 2, MinFreed: 1000},
			// ...and past 80% the older turns are summarized.
			&toolloop.Compactor{When: toolloop.Threshold{Fraction: 0.8}},
		},
		Budget:  toolloop.Budget{MaxToolCalls: *maxCalls, MaxCost: *maxCost, WrapUp: true, MaxTurns: *files + 10},
		OnEvent: printer(out),
	}
	res, err := loop.Run(ctx, []toolloop.Message{
		toolloop.SystemMessage("You are a coding agent. Read the files you need, one at a time."),
		toolloop.UserMessage(fmt.Sprintf("Review all %d files of the repository for TODOs.", *files)),
	})
	if res == nil {
		return err
	}
	fmt.Fprintf(out, "\nturns %d, tool calls %d, tokens in %d / out %d, cost $%.4f, final transcript %d messages\n",
		res.Turns, res.ToolCalls, res.Usage.InputTokens, res.Usage.OutputTokens, res.Cost, len(res.Messages))
	fmt.Fprintf(out, "assistant: %s\n", res.FinalText)
	var be *toolloop.BudgetError
	switch {
	case errors.As(err, &be):
		fmt.Fprintf(out, "ended on its budget: %s\n", be.Limit)
		return nil
	case err != nil:
		return err
	}
	return nil
}

// printer prints what keeps a long run alive, as sink.NewPrinter shows
// it: the transcript's edits and the budget's limit. The other events
// (a line for each of the hundreds of calls) are left out.
func printer(out io.Writer) func(toolloop.Event) {
	show := sink.NewPrinter(out, nil)
	return func(e toolloop.Event) {
		if e.Type == toolloop.EventTranscriptEdited || e.Type == toolloop.EventLimit {
			show(e)
		}
	}
}

type readIn struct {
	Path string `json:"path" jsonschema:"description=File path"`
}

// tools is one tool that reads a generated file of about 1.5 KB.
func tools() *toolloop.ToolRegistry {
	read := toolloop.NewTool("read_file", "Read a source file.", func(_ context.Context, in readIn) (any, error) {
		var n int
		if _, err := fmt.Sscanf(in.Path, "src/file%03d.go", &n); err != nil {
			return nil, fmt.Errorf("no such file: %s", in.Path)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "package src\n\n// File %d.\n", n)
		for i := range 40 {
			fmt.Fprintf(&b, "func f%d_%d(x int) int { return x + %d }\n", n, i, i)
		}
		if n%7 == 0 {
			b.WriteString("// TODO: handle overflow\n")
		}
		return b.String(), nil
	})
	read.Annotations.ReadOnly = true
	var reg toolloop.ToolRegistry
	reg.MustRegister(read)
	return &reg
}

// agent is the scripted model: it reads one file per turn, writes a
// summary when the compactor asks (a request with no tools), and answers
// when told to wrap up (tool choice none). Its usage is estimated from
// what it is sent, as a real provider would count it.
type agent struct {
	files int
	next  int
	todos []int
}

func (a *agent) Generate(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	in := toolloop.EstimateTokens(req.Messages)
	var r *toolloop.Response
	switch {
	case len(req.Tools) == 0:
		r = looptest.Text(fmt.Sprintf("Reviewed src/file001.go to src/file%03d.go. TODOs found in files %v.", a.next, a.todos))
	case req.ToolChoice.Mode == toolloop.ToolChoiceNone || a.next >= a.files:
		r = looptest.Text(fmt.Sprintf("I reviewed %d of %d files; TODOs are in files %v.", a.next, a.files, a.todos))
	default:
		if last := lastResult(req.Messages); strings.Contains(last, "TODO") {
			a.todos = append(a.todos, a.next)
		}
		a.next++
		r = looptest.Calls(looptest.Call("", "read_file", fmt.Sprintf(`{"path":"src/file%03d.go"}`, a.next)))
	}
	r.Model = modelName
	r.Usage = toolloop.Usage{InputTokens: int64(in), OutputTokens: 40}
	return r, nil
}

func lastResult(msgs []toolloop.Message) string {
	if n := len(msgs); n > 0 && msgs[n-1].Result != nil {
		return msgs[n-1].Result.Text()
	}
	return ""
}
