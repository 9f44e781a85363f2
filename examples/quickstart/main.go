// Command quickstart runs toolloop offline: a scripted model (no API key)
// drives three real tools through the whole pipeline, including two calls
// in parallel and a call with bad arguments that the model then corrects.
// It prints the run as it happens (sink.NewPrinter), then the transcript
// (sink.FormatTranscript).
//
//	go run ./examples/quickstart
//
// With -log FILE it also records the run in an event log (eventlog), which
// toolloop view shows as a page and toolloop test turns into a regression
// test:
//
//	go run ./examples/quickstart -log quickstart.jsonl
//	toolloop test quickstart.jsonl -o testdata/quickstart.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

// A small runbook the tools search.
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

// script is what a model might answer, turn by turn.
func script() toolloop.Model {
	return looptest.Script(
		// Two searches at once: they run in parallel.
		looptest.Calls(
			looptest.Call("call_1", "search_notes", `{"query":"deploy"}`),
			looptest.Call("call_2", "search_notes", `{"query":"rollback"}`),
		),
		// A slip: the note number as a string. Validation catches it.
		looptest.Calls(looptest.Call("call_3", "read_note", `{"id":"2"}`)),
		// The model reads the error and fixes the call.
		looptest.Calls(looptest.Call("call_4", "read_note", `{"id":2}`)),
		looptest.Text("To roll back, run `kubectl rollout undo deploy/api` and tell #ops first (runbook note 2)."),
	)
}

func main() {
	logPath := flag.String("log", "", "record the run's events in this event log (JSON Lines)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *logPath); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, logPath string) (err error) {
	loop := &toolloop.AgentLoop{
		Model: script(),
		Tools: tools(),
		// The run as it happens: the model's text, and one line per call
		// when it completes, with its status and the start of its result.
		OnEvent: sink.NewPrinter(out, nil),
	}
	if logPath != "" {
		w, err := eventlog.Create(logPath, eventlog.Options{})
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, w.Close()) }()
		loop.OnEvent = toolloop.MultiSink(loop.OnEvent, w.Record)
	}
	fmt.Fprintln(out, "== run")
	res, err := loop.Run(ctx, []toolloop.Message{
		toolloop.SystemMessage("You answer ops questions from the runbook. Cite the note."),
		toolloop.UserMessage("How do I roll back the API deploy?"),
	})
	if err != nil {
		return err
	}

	fmt.Fprintln(out, "\n== transcript")
	if err := sink.FormatTranscript(out, res.Messages, nil); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "\n== result\n%s\n(%d turns, %d tool calls, %d input + %d output tokens)\n",
		res.FinalText, res.Turns, len(res.Executions), res.Usage.InputTokens, res.Usage.OutputTokens)
	return err
}
