// Command evals scores the quickstart's agent on a dataset of five cases
// (cases.jsonl) with package eval, offline: each case has a scripted
// model that answers as a model might, and one case fails on purpose (its
// model answers from memory instead of reading the runbook), to show what
// a failure looks like in the reports.
//
//	go run ./examples/evals -o /tmp/evals
//
// It writes report.json, report.xml (JUnit) and each trial's event log
// under -o, prints a summary, and exits 1 because a case failed. With a
// real model in place of the scripts, the same Runner scores how the model
// does; toolloop eval runs a dataset the same way from the terminal, on
// the command's own tools.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
	"github.com/toolloop/toolloop/looptest"
)

//go:embed cases.jsonl
var dataset string

// The quickstart's runbook and tools (examples/quickstart).
var notes = map[int]string{
	1: "Deploy: run `make release`, then `kubectl rollout status deploy/api`.",
	2: "Rollback: `kubectl rollout undo deploy/api`; tell #ops before you do.",
	3: "On-call: page the secondary if the primary does not answer in 10 minutes.",
}

type searchIn struct {
	Query string `json:"query" jsonschema:"description=Words to look for in the runbook"`
}

type readIn struct {
	ID int `json:"id" jsonschema:"description=Note number from search_notes,minimum=1"`
}

type countIn struct {
	Text string `json:"text"`
}

func tools() *toolloop.ToolRegistry {
	search := toolloop.NewTool("search_notes", "Search the ops runbook. Returns the numbers of matching notes; read one with read_note.",
		func(_ context.Context, in searchIn) (any, error) {
			var hits []int
			for id, n := range notes {
				if strings.Contains(strings.ToLower(n), strings.ToLower(in.Query)) {
					hits = append(hits, id)
				}
			}
			sort.Ints(hits)
			return map[string]any{"query": in.Query, "notes": hits}, nil
		})
	search.Annotations.ReadOnly = true
	read := toolloop.NewTool("read_note", "Read one runbook note by number.",
		func(_ context.Context, in readIn) (any, error) {
			n, ok := notes[in.ID]
			if !ok {
				return nil, fmt.Errorf("there is no note %d", in.ID)
			}
			return n, nil
		})
	read.Annotations.ReadOnly = true
	count := toolloop.NewTool("count_words", "Count the words in a text.",
		func(_ context.Context, in countIn) (any, error) {
			return fmt.Sprintf("%d words", len(strings.Fields(in.Text))), nil
		})
	var reg toolloop.ToolRegistry
	reg.MustRegister(search, read, count)
	return &reg
}

// scripts are what a model might answer in each case, turn by turn. A
// script is stateful, so each trial gets its own.
var scripts = map[string]func() toolloop.Model{
	// The quickstart's own run: two searches, a slip, its fix, the answer.
	"rollback": func() toolloop.Model {
		return looptest.Script(
			looptest.Calls(
				looptest.Call("call_1", "search_notes", `{"query":"deploy"}`),
				looptest.Call("call_2", "search_notes", `{"query":"rollback"}`),
			),
			looptest.Calls(looptest.Call("call_3", "read_note", `{"id":"2"}`)),
			looptest.Calls(looptest.Call("call_4", "read_note", `{"id":2}`)),
			looptest.Text("To roll back, run `kubectl rollout undo deploy/api` and tell #ops first (runbook note 2)."),
		)
	},
	"deploy": func() toolloop.Model {
		return looptest.Script(
			looptest.Calls(looptest.Call("call_1", "search_notes", `{"query":"deploy"}`)),
			looptest.Calls(looptest.Call("call_2", "read_note", `{"id":1}`)),
			looptest.Text("Run `make release`, then watch `kubectl rollout status deploy/api` (note 1)."),
		)
	},
	"count": func() toolloop.Model {
		return looptest.Script(
			looptest.Calls(looptest.Call("call_1", "count_words", `{"text":"tell #ops before you do"}`)),
			looptest.Text("It has 5 words."),
		)
	},
	"greeting": func() toolloop.Model {
		return looptest.Script(looptest.Text("Hello! Ask me anything the ops runbook covers."))
	},
	// Fails on purpose: the model answers from memory, and wrongly.
	"oncall": func() toolloop.Model {
		return looptest.Script(looptest.Text("Page the secondary after 5 minutes."))
	},
}

func main() {
	out := flag.String("o", "", "the directory of report.json, report.xml and logs/ (default: a new temporary one)")
	flag.Parse()
	code, err := run(context.Background(), os.Stdout, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "evals:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// run runs the dataset, writes the reports into dir and returns the exit
// code for CI: 1 when a case failed.
func run(ctx context.Context, w io.Writer, dir string) (int, error) {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "evals-"); err != nil {
			return 0, err
		}
	}
	cases, err := eval.ReadDataset(strings.NewReader(dataset))
	if err != nil {
		return 0, err
	}
	reg := tools()
	r := &eval.Runner{
		Loop: func(c *eval.Case) (*toolloop.AgentLoop, error) {
			script, ok := scripts[c.ID]
			if !ok {
				return nil, fmt.Errorf("no script for case %q", c.ID)
			}
			return &toolloop.AgentLoop{Model: script(), Tools: reg}, nil
		},
		Name:   "quickstart",
		LogDir: filepath.Join(dir, "logs"),
	}
	rep, err := r.Run(ctx, cases)
	if err != nil {
		return 0, err
	}
	for name, write := range map[string]func(io.Writer) error{"report.json": rep.WriteJSON, "report.xml": rep.WriteJUnit} {
		if err := writeFile(filepath.Join(dir, name), write); err != nil {
			return 0, err
		}
	}
	for _, c := range rep.Cases {
		fmt.Fprintf(w, "%-8s %s\n", c.Status, c.ID)
		for _, tr := range c.Trials {
			for _, s := range tr.Failures() {
				fmt.Fprintf(w, "         %s: %s\n", s.Scorer, s.Reason)
			}
		}
	}
	fmt.Fprintf(w, "%d of %d cases passed; reports in %s\n", rep.Summary.Passed, rep.Summary.Cases, dir)
	return rep.ExitCode(), nil
}

func writeFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return write(f)
}
