package toolloop_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

type forecast struct {
	City    string `json:"city"`
	Celsius int    `json:"celsius"`
}

func weatherTools() *toolloop.ToolRegistry {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("get_weather", "Get the current weather for a city.",
		func(_ context.Context, in struct {
			City string `json:"city"`
		}) (any, error) {
			return "18°C and sunny in " + in.City, nil
		}))
	return &tools
}

// RunTyped asks for a final answer of a Go type: the model answers by
// calling the output tool (final_answer), whose arguments are checked
// against the type's schema, or natively where the model can.
func ExampleRunTyped() {
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
			looptest.Calls(looptest.Call("call_2", "final_answer", `{"city":"Paris","celsius":18}`)),
		),
		Tools: weatherTools(),
	}
	f, res, err := toolloop.RunTyped[forecast](context.Background(), loop,
		[]toolloop.Message{toolloop.UserMessage("Weather in Paris?")})
	fmt.Printf("%+v %v\n", f, err)
	fmt.Println("tool calls:", res.ToolCalls, "answers:", res.OutputCalls)
	// Output:
	// {City:Paris Celsius:18} <nil>
	// tool calls: 1 answers: 1
}

// With Budget.WrapUp, a typed run that reaches a limit asks for its
// answer in one last turn, where the output tool is the only tool; the
// answer comes back with the limit's error.
func ExampleRunTyped_wrapUp() {
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
			looptest.Calls(looptest.Call("call_2", "final_answer", `{"city":"Paris","celsius":18}`)),
		),
		Tools:         weatherTools(),
		MaxIterations: 1,
		Budget:        toolloop.Budget{WrapUp: true},
	}
	f, _, err := toolloop.RunTyped[forecast](context.Background(), loop,
		[]toolloop.Message{toolloop.UserMessage("Weather in Paris?")})
	fmt.Printf("%+v\n", f)
	fmt.Println(errors.Is(err, toolloop.ErrMaxIterations))
	// Output:
	// {City:Paris Celsius:18}
	// true
}

// RunStreamTyped is RunTyped with the run's events read as they happen.
func ExampleRunStreamTyped() {
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
			looptest.Calls(looptest.Call("call_2", "final_answer", `{"city":"Paris","celsius":18}`)),
		),
		Tools: weatherTools(),
	}
	s := toolloop.RunStreamTyped[forecast](context.Background(), loop,
		[]toolloop.Message{toolloop.UserMessage("Weather in Paris?")})
	for e := range s.Events() {
		if e.Type == toolloop.EventComplete {
			fmt.Printf("<- %s: %s\n", e.Tool, e.Result.Text())
		}
	}
	f, _, err := s.Result()
	fmt.Printf("%+v %v\n", f, err)
	// Output:
	// <- get_weather: 18°C and sunny in Paris
	// <- final_answer: Answer accepted.
	// {City:Paris Celsius:18} <nil>
}

// A GuardFunc cannot say whether it may answer Ask; AskingGuard says it
// for it, so a loop that could not settle the ask refuses to start.
func ExampleAskingGuard() {
	confirmWrites := toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
		if c.Name == "write_file" {
			return toolloop.Verdict{Decision: toolloop.Ask, Reason: "writes need a human"}
		}
		return toolloop.Verdict{Decision: toolloop.Allow}
	})
	loop := &toolloop.AgentLoop{Model: looptest.Script(), Guard: toolloop.AskingGuard(confirmWrites)}
	fmt.Println(errors.Is(loop.Validate(), toolloop.ErrNoApprover))
	loop.PauseForApproval = true
	fmt.Println(loop.Validate())
	// Output:
	// true
	// <nil>
}
