package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// A person approving a call may edit its arguments: the call runs with
// the edit, once the tool's schema accepts it, and the model is told.
func ExampleApproval() {
	type file struct {
		Path string `json:"path"`
	}
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("rm", "Remove a file.", func(_ context.Context, f file) (any, error) {
		return "removed " + f.Path, nil
	}))
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Calls(looptest.Call("c1", "rm", `{"path":"*"}`)), looptest.Text("Done.")),
		Tools: &tools,
		Guard: toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
			return toolloop.Verdict{Decision: toolloop.Ask, Reason: "removes files"}
		}),
		Approver: toolloop.ApproverFunc(func(_ context.Context, call *toolloop.Call, reason string) (toolloop.Approval, error) {
			fmt.Printf("asked: %s %s (%s)\n", call.Name, call.Arguments, reason)
			return toolloop.Approval{Approved: true, Arguments: json.RawMessage(`{"path":"build.log"}`)}, nil
		}),
	}
	res, _ := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Clean up.")})
	r := res.Messages[2].Result
	fmt.Println(r.Content[0].Text, r.Meta.Modified)
	// Output:
	// asked: rm {"path":"*"} (removes files)
	// removed build.log [approval: edited]
}

// What the model saw: each model.request event carries the request's
// new messages and what it offered.
func ExampleRequestInfo() {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("ping", "Ping.", func(context.Context, struct{}) (any, error) { return "pong", nil }))
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Calls(looptest.Call("c1", "ping", `{}`)), looptest.Text("pong")),
		Tools: &tools,
		OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventModelRequest {
				fmt.Printf("turn %d: messages %d to %d of %d, tools %v\n",
					e.Turn, e.Request.From+1, e.Request.Messages, e.Request.Messages, e.Request.Tools)
				for _, m := range e.Messages {
					switch {
					case m.Result != nil:
						fmt.Printf("  %s: %s\n", m.Role, m.Result.Text())
					case len(m.ToolCalls) > 0:
						fmt.Printf("  %s: calls %s\n", m.Role, m.ToolCalls[0].Name)
					default:
						fmt.Printf("  %s: %s\n", m.Role, m.Text())
					}
				}
			}
		},
	}
	_, _ = loop.Run(context.Background(), []toolloop.Message{toolloop.SystemMessage("Be brief."), toolloop.UserMessage("ping")})
	// Output:
	// turn 1: messages 1 to 2 of 2, tools [ping]
	//   system: Be brief.
	//   user: ping
	// turn 2: messages 3 to 4 of 4, tools [ping]
	//   assistant: calls ping
	//   tool: pong
}
