package toolloop_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// A budget caps the run; with WrapUp, the model gets one last turn, with
// tools disabled, to give its answer.
func ExampleBudget() {
	add := toolloop.NewTool("add", "Add two integers.", func(_ context.Context, in struct{ A, B int }) (any, error) {
		return in.A + in.B, nil
	})
	var reg toolloop.ToolRegistry
	reg.MustRegister(add)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "add", `{"A":1,"B":2}`), looptest.Call("c2", "add", `{"A":3,"B":4}`),
				looptest.Call("c3", "add", `{"A":3,"B":7}`)), // over the budget: not run
			looptest.Text("1+2=3 and 3+4=7; I ran out of calls before the rest."),
		),
		Tools:  &reg,
		Budget: toolloop.Budget{MaxToolCalls: 2, WrapUp: true},
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Add up everything.")})
	var be *toolloop.BudgetError
	if errors.As(err, &be) {
		fmt.Println("limit:", be.Limit)
	}
	fmt.Println("calls:", res.ToolCalls)
	fmt.Println("answer:", res.FinalText)
	// Output:
	// limit: tool_calls
	// calls: 2
	// answer: 1+2=3 and 3+4=7; I ran out of calls before the rest.
}

// Context managers keep a long run inside the model's window: here old
// tool outputs become stubs once the request passes 2,000 tokens.
func ExampleClearToolResults() {
	read := toolloop.NewTool("read", "Read a file.", func(_ context.Context, in struct{ Path string }) (any, error) {
		return strings.Repeat("line of "+in.Path+"\n", 200), nil
	})
	var reg toolloop.ToolRegistry
	reg.MustRegister(read)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "read", `{"Path":"a.go"}`)),
			looptest.Calls(looptest.Call("c2", "read", `{"Path":"b.go"}`)),
			looptest.Calls(looptest.Call("c3", "read", `{"Path":"c.go"}`)),
			looptest.Text("Read all three."),
		),
		Tools: &reg,
		ContextManagers: []toolloop.ContextManager{
			&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 2000}, KeepTurns: 1},
		},
		OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventTranscriptEdited {
				fmt.Printf("turn %d: %s cleared %v\n", e.Turn, e.Edit.Strategy, e.Edit.CallIDs)
			}
		},
	}
	res, _ := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Read a.go, b.go and c.go.")})
	for _, m := range res.Messages {
		if m.Result != nil {
			fmt.Printf("%s cleared=%v\n", m.Result.CallID, m.Result.Meta.Cleared)
		}
	}
	// Output:
	// turn 3: clear_tool_results cleared [c1 c2]
	// c1 cleared=true
	// c2 cleared=true
	// c3 cleared=false
}

// A Compactor summarizes the older turns into one message with a model
// call; here the loop's own (scripted) model writes the summary.
func ExampleCompactor() {
	read := toolloop.NewTool("read", "Read a file.", func(_ context.Context, in struct{ Path string }) (any, error) {
		return strings.Repeat("line of "+in.Path+"\n", 100), nil
	})
	var reg toolloop.ToolRegistry
	reg.MustRegister(read)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "read", `{"Path":"a.go"}`)),
			looptest.Calls(looptest.Call("c2", "read", `{"Path":"b.go"}`)),
			looptest.Text("a.go and b.go were read; both are plain lines."), // the summary
			looptest.Text("Done."),
		),
		Tools:           &reg,
		ContextManagers: []toolloop.ContextManager{&toolloop.Compactor{When: toolloop.Threshold{Tokens: 500}, KeepTurns: 1}},
	}
	res, _ := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Read a.go and b.go.")})
	for _, m := range res.Messages {
		text, _, _ := strings.Cut(m.Text(), "\n")
		if m.Result != nil {
			text = "result of " + m.Result.CallID
		} else if len(m.ToolCalls) > 0 {
			text = "calls " + m.ToolCalls[0].ID
		}
		fmt.Printf("%s: %s\n", m.Role, text)
	}
	// Output:
	// user: Read a.go and b.go.
	// user: [Summary of the earlier part of this conversation, compacted to save context]
	// assistant: calls c2
	// tool: result of c2
	// assistant: Done.
}
