// Command quickstart runs toolloop offline: a scripted model (no API key)
// drives three real tools through the whole pipeline, including two calls
// in parallel and a call with bad arguments that the model then corrects,
// and prints the transcript and the event log.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
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
	var events []toolloop.Event
	loop := &toolloop.AgentLoop{
		Model:   script(),
		Tools:   tools(),
		OnEvent: func(e toolloop.Event) { events = append(events, e) },
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{
		toolloop.SystemMessage("You answer ops questions from the runbook. Cite the note."),
		toolloop.UserMessage("How do I roll back the API deploy?"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "run failed:", err)
		os.Exit(1)
	}

	fmt.Println("== transcript")
	for _, m := range res.Messages {
		printMessage(m)
	}
	fmt.Println("\n== events")
	start := events[0].Time
	for _, e := range events {
		printEvent(e, start)
	}
	fmt.Printf("\n== result\n%s\n(%d turns, %d tool calls, %d input + %d output tokens)\n",
		res.FinalText, res.Turns, len(res.Executions), res.Usage.InputTokens, res.Usage.OutputTokens)
}

func printMessage(m toolloop.Message) {
	switch {
	case m.Result != nil:
		r := m.Result
		status := "ok"
		if r.IsError() {
			status = "error: " + string(r.Error.Kind)
		}
		fmt.Printf("tool      %s %s [%s]\n", r.CallID, r.Name, status)
		for _, c := range r.Content {
			text := c.Text
			if c.Type == toolloop.ContentJSON {
				text = string(c.JSON)
			}
			fmt.Printf("          %s\n", indent(text))
		}
	case len(m.ToolCalls) > 0:
		for _, c := range m.ToolCalls {
			fmt.Printf("assistant calls %s %s %s\n", c.ID, c.Name, c.Arguments)
		}
	default:
		fmt.Printf("%-9s %s\n", m.Role, indent(m.Text()))
	}
}

func printEvent(e toolloop.Event, start time.Time) {
	at := e.Time.Sub(start).Round(10 * time.Microsecond)
	line := fmt.Sprintf("%8v  turn %d  %-26s", at, e.Turn, e.Type)
	if e.CallID != "" {
		line += fmt.Sprintf(" %s %s", e.CallID, e.Tool)
	}
	switch {
	case e.Result != nil && e.Result.IsError():
		line += " -> " + string(e.Result.Error.Kind)
	case e.Result != nil:
		line += fmt.Sprintf(" -> ok (%d bytes)", e.Result.Meta.Bytes)
	case e.Type == toolloop.EventStart:
		args, _ := json.Marshal(e.Arguments)
		line += " " + string(args)
	case e.Response != nil:
		line += fmt.Sprintf(" stop=%s", e.Response.StopReason)
	}
	fmt.Println(strings.TrimRight(line, " "))
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n          ")
}
