// Command subagent runs toolloop offline with an agent used as a tool: a
// lead agent hands a research task to a sub-agent that has tools, a guard
// and a model of its own. The sub-agent's events reach the lead's printer
// tagged with the lead's call; what it spends is added to the lead's
// accounting; and when the sub-agent wants to save its notes, which its
// guard says needs a human, the whole run pauses and is resumed with the
// decision, the sub-agent's call running exactly once.
//
//	go run ./examples/subagent
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

var papers = map[string]string{
	"raft":  "Raft (Ongaro and Ousterhout, 2014) splits consensus into leader election, log replication and safety.",
	"paxos": "Paxos (Lamport, 1998) reaches consensus with proposers, acceptors and learners; hard to implement as written.",
}

type searchIn struct {
	Query string `json:"query" jsonschema:"description=Words to look for"`
}

type saveIn struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// researcher is the sub-agent: its own model, tools and guard.
func researcher(saved map[string]string) *toolloop.AgentLoop {
	search := toolloop.NewTool("search_papers", "Search a small library of papers.",
		func(_ context.Context, in searchIn) (any, error) {
			var hits []string
			for k, p := range papers {
				if strings.Contains(strings.ToLower(in.Query), k) {
					hits = append(hits, p)
				}
			}
			if len(hits) == 0 {
				return "no paper matches", nil
			}
			return strings.Join(hits, "\n"), nil
		})
	search.Annotations.ReadOnly = true
	save := toolloop.NewTool("save_notes", "Save research notes under a name.",
		func(_ context.Context, in saveIn) (any, error) {
			saved[in.Name] = in.Text
			return "saved " + in.Name, nil
		})
	var reg toolloop.ToolRegistry
	reg.MustRegister(search, save)
	return &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "search_papers", `{"query":"raft"}`)),
			looptest.Calls(looptest.Call("call_2", "save_notes", `{"name":"raft","text":"leader election, log replication, safety"}`)),
			looptest.Text("Raft splits consensus into leader election, log replication and safety (Ongaro and Ousterhout, 2014). Notes saved as raft."),
		),
		Tools: &reg,
		// Reading is free; writing needs a person.
		Guard: &toolloop.RuleGuard{Rules: []toolloop.Rule{
			{Name: "writes-ask", Tools: []string{"save_notes"}, Decision: toolloop.Ask, Reason: "the sub-agent wants to write"},
		}},
		PauseForApproval: true,
	}
}

func lead(out io.Writer, saved map[string]string) *toolloop.AgentLoop {
	research := toolloop.NewAgentTool("research", "Hand a research question to a researcher with a paper library.", researcher(saved))
	research.Instructions = "You research questions in the paper library and save your notes."
	var reg toolloop.ToolRegistry
	reg.MustRegister(research)
	return &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "research", `{"task":"What are the parts of Raft?"}`)),
			looptest.Text("Raft has three parts: leader election, log replication and safety."),
		),
		Tools:   &reg,
		OnEvent: sink.NewPrinter(out, nil),
	}
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "subagent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	saved := map[string]string{}
	loop := lead(out, saved)
	fmt.Fprintln(out, "== run")
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("What are the parts of Raft?")})
	if !errors.Is(err, toolloop.ErrPaused) {
		return fmt.Errorf("expected a pause, got %v", err)
	}
	// The lead's pause lists the sub-agent's waiting call, its ID
	// qualified by the lead's call. A real program saves res.Paused (it
	// is JSON) and asks a person; here the answer is yes.
	decisions := map[string]toolloop.Approval{}
	fmt.Fprintln(out, "\n== waiting for a decision")
	for _, p := range res.Paused.Pending {
		fmt.Fprintf(out, "%s %s %s (%s)\n", p.CallID, p.Name, p.Arguments, p.Reason)
		decisions[p.CallID] = toolloop.Approval{Approved: true}
	}
	fmt.Fprintln(out, "\n== resumed")
	res, err = loop.Resume(ctx, res.Paused, decisions)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "\n== answer\n%s\n(notes saved: %d; %d turns of the lead; sub-agent's result: %q)\n",
		res.FinalText, len(saved), res.Turns, looptest.Results(res.Messages)["call_1"].Text())
	return err
}
