package toolloop_test

import (
	"context"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// A research sub-agent, with a tool of its own, used as a tool by a lead
// agent. Its events reach the lead's OnEvent tagged with the lead's call,
// and what it spends is the lead's too.
func ExampleNewAgentTool() {
	type searchIn struct {
		Query string `json:"query"`
	}
	var researchTools toolloop.ToolRegistry
	researchTools.MustRegister(toolloop.NewTool("search", "Search the web.",
		func(_ context.Context, in searchIn) (any, error) {
			return "Go 1.26 was released in February 2026.", nil
		}))
	researcher := &toolloop.AgentLoop{
		Model: looptest.Script(
			withUsage(looptest.Calls(looptest.Call("call_1", "search", `{"query":"Go 1.26 release"}`)), 120),
			withUsage(looptest.Text("Go 1.26 came out in February 2026."), 180),
		),
		Tools: &researchTools,
	}
	research := toolloop.NewAgentTool("research", "Research a question on the web and report the answer.", researcher)
	research.Instructions = "You are a careful researcher. Cite what you find."

	var tools toolloop.ToolRegistry
	tools.MustRegister(research)
	lead := &toolloop.AgentLoop{
		Model: looptest.Script(
			withUsage(looptest.Calls(looptest.Call("call_1", "research", `{"task":"When was Go 1.26 released?"}`)), 50),
			withUsage(looptest.Text("Go 1.26 was released in February 2026."), 90),
		),
		Tools: &tools,
		OnEvent: func(e toolloop.Event) {
			if e.ParentCallID != "" && e.Type == toolloop.EventComplete {
				fmt.Printf("sub-agent (for %s) ran %s: %s\n", e.ParentCallID, e.Tool, e.Result.Text())
			}
		},
	}
	res, err := lead.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("When was Go 1.26 released?")})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("research ->", looptest.Results(res.Messages)["call_1"].Text())
	fmt.Println("answer:", res.FinalText)
	fmt.Println("input tokens, lead and sub-agent:", res.Usage.InputTokens)
	// Output:
	// sub-agent (for call_1) ran search: Go 1.26 was released in February 2026.
	// research -> Go 1.26 came out in February 2026.
	// answer: Go 1.26 was released in February 2026.
	// input tokens, lead and sub-agent: 440
}

// A sub-agent that asks before it deletes pauses the lead. The person
// deciding sees the sub-agent's call, under an ID qualified by the lead's
// call; resuming the lead resumes the sub-agent, and the deletion runs
// once.
func ExampleAgentTool_pause() {
	type pathIn struct {
		Path string `json:"path"`
	}
	del := toolloop.NewTool("delete_file", "Delete a file.", func(_ context.Context, in pathIn) (any, error) {
		fmt.Println("deleting", in.Path)
		return "deleted " + in.Path, nil
	})
	del.Annotations.Destructive = true
	var cleanerTools toolloop.ToolRegistry
	cleanerTools.MustRegister(del)
	cleaner := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "delete_file", `{"path":"old.log"}`)),
			looptest.Text("Deleted old.log."),
		),
		Tools:            &cleanerTools,
		Guard:            &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask, Reason: "deletes need a human"}}},
		PauseForApproval: true,
	}
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewAgentTool("cleaner", "Clean up files.", cleaner))
	lead := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "cleaner", `{"task":"Delete old.log."}`)),
			looptest.Text("old.log is gone."),
		),
		Tools: &tools,
	}
	ctx := context.Background()
	res, err := lead.Run(ctx, []toolloop.Message{toolloop.UserMessage("Delete old.log.")})
	fmt.Println("run:", err)
	decisions := map[string]toolloop.Approval{}
	for _, p := range res.Paused.Pending {
		fmt.Printf("waiting: %s %s %s (%s)\n", p.CallID, p.Name, p.Arguments, p.Reason)
		decisions[p.CallID] = toolloop.Approval{Approved: true}
	}
	res, err = lead.Resume(ctx, res.Paused, decisions)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("cleaner ->", looptest.Results(res.Messages)["call_1"].Text())
	fmt.Println("answer:", res.FinalText)
	// Output:
	// run: toolloop: the run is paused for approval
	// waiting: call_1/call_1 delete_file {"path":"old.log"} (deletes need a human)
	// deleting old.log
	// cleaner -> Deleted old.log.
	// answer: old.log is gone.
}

// withUsage gives a scripted reply a usage of in input tokens.
func withUsage(r *toolloop.Response, in int64) *toolloop.Response {
	r.Usage = toolloop.Usage{InputTokens: in}
	return r
}
