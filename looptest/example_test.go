package looptest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// Outside tests, Script answers from a fixed list of replies. (In a test,
// NewModel or Replay also check what the loop sends: see the package doc
// for a complete test.)
func ExampleScript() {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (any, error) {
		return in.Text, nil
	}))
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "echo", `{"text":"hi"}`)),
			looptest.Text("The tool said hi."),
		),
		Tools: &tools,
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("say hi")})
	fmt.Println(res.FinalText, err, looptest.Validate(res.Messages))
	// Output: The tool said hi. <nil> <nil>
}

// DiffTranscripts compares transcripts as JSON, ignoring durations.
func ExampleDiffTranscripts() {
	want := []toolloop.Message{toolloop.UserMessage("hi")}
	got := []toolloop.Message{toolloop.UserMessage("hi")}
	fmt.Printf("%q\n", looptest.DiffTranscripts(want, got))
	// Output: ""
}

// Always answers every call with the same reply: here a model that keeps
// calling a tool, which the loop stops after Budget.MaxTurns turns.
func ExampleAlways() {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (any, error) {
		return in.Text, nil
	}))
	loop := &toolloop.AgentLoop{
		Model: looptest.Always(looptest.Calls(looptest.Call("c1", "echo", `{"text":"again"}`))),
		Tools: &tools, Budget: toolloop.Budget{MaxTurns: 3},
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("loop")})
	fmt.Println(res.Turns, errors.Is(err, toolloop.ErrBudget), looptest.Validate(res.Messages))
	// Output: 3 true <nil>
}

// Call's arguments reach the loop byte for byte, even when no JSON
// decoder would keep them: here a repeated key, with its spacing.
func ExampleCall() {
	model := looptest.Script(looptest.Calls(looptest.Call("c1", "echo", `{"text": "a", "text": "b"}`)))
	resp, err := model.Generate(context.Background(), &toolloop.Request{})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(resp.Message.ToolCalls[0].Arguments))
	// Output: {"text": "a", "text": "b"}
}
