package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// RunStream reads a run's events as they happen, in a range loop; the
// result is there when the loop ends. Breaking out of the loop would
// cancel the run, every call still getting its result.
func ExampleAgentLoop_RunStream() {
	weather := toolloop.NewTool("get_weather", "Get the current weather for a city.",
		func(_ context.Context, in struct {
			City string `json:"city"`
		}) (any, error) {
			return map[string]any{"city": in.City, "celsius": 18}, nil
		})
	var tools toolloop.ToolRegistry
	tools.MustRegister(weather)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
			looptest.Text("It is 18°C in Paris."),
		),
		Tools: &tools,
	}

	s := loop.RunStream(context.Background(), []toolloop.Message{toolloop.UserMessage("Weather in Paris?")})
	for e := range s.Events() {
		switch e.Type {
		case toolloop.EventModelDelta: // from models that stream
			fmt.Print(e.Text)
		case toolloop.EventStart:
			fmt.Printf("-> %s %s\n", e.Tool, e.Arguments)
		case toolloop.EventComplete:
			fmt.Printf("<- %s %s: %s\n", e.Tool, e.Result.Status, e.Result.Text())
		}
	}
	res, err := s.Result()
	fmt.Println(res.FinalText, err)
	// Output:
	// -> get_weather {"city":"Paris"}
	// <- get_weather ok: {"celsius":18,"city":"Paris"}
	// It is 18°C in Paris. <nil>
}

// MultiSink sends every event to several sinks: a log, telemetry, a
// terminal. A sink that panics misses only that event.
func ExampleMultiSink() {
	var events, ends int
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Text("Hello.")),
		OnEvent: toolloop.MultiSink(
			func(e toolloop.Event) { events++ },
			func(e toolloop.Event) {
				if e.Type == toolloop.EventRunEnd {
					ends++
				}
			},
		),
	}
	_, _ = loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Hi.")})
	fmt.Println(events, ends)
	// Output:
	// 4 1
}

// NewSchemaTool builds a tool from a JSON Schema written out, such as one
// read from a file; the loop validates arguments against it before the
// function runs.
func ExampleNewSchemaTool() {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {"n": {"type": "integer", "minimum": 0}},
		"required": ["n"]
	}`)
	square, err := toolloop.NewSchemaTool("square", "Square a number.", schema,
		func(_ context.Context, call *toolloop.Call) (any, error) {
			var in struct{ N int }
			if err := call.Bind(&in); err != nil {
				return nil, err
			}
			return fmt.Sprint(in.N * in.N), nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	var tools toolloop.ToolRegistry
	tools.MustRegister(square)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "square", `{"n":-3}`), looptest.Call("c2", "square", `{"n":12}`)),
			looptest.Text("144."),
		),
		Tools: &tools,
	}
	res, _ := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("12 squared?")})
	for _, ex := range res.Executions {
		fmt.Println(ex.CallID, ex.Success)
	}
	fmt.Println(res.Executions[1].Output)

	_, err = toolloop.NewSchemaTool("square", "Square a number.", json.RawMessage(`{"type":"integer"}`), nil)
	fmt.Println(err != nil)
	// Output:
	// c1 false
	// c2 true
	// 144
	// true
}

// A rule can rewrite the arguments of the calls it matches: here, no
// search returns more than 10 results. The model is told.
func ExampleRule_rewrite() {
	guard := &toolloop.RuleGuard{Rules: []toolloop.Rule{{
		Name:   "cap-results",
		Tools:  []string{"search"},
		Reason: "at most 10 results",
		Rewrite: func(_ context.Context, call *toolloop.Call) (json.RawMessage, error) {
			var in map[string]any
			if err := json.Unmarshal(call.Arguments, &in); err != nil {
				return nil, err
			}
			if n, _ := in["limit"].(float64); n <= 10 {
				return nil, nil // nothing to change
			}
			in["limit"] = 10
			return json.Marshal(in)
		},
	}}}
	for _, args := range []string{`{"q":"go","limit":50}`, `{"q":"go","limit":5}`} {
		v := guard.Check(context.Background(), &toolloop.Call{Name: "search", Arguments: json.RawMessage(args)})
		fmt.Println(v.Decision, string(v.Arguments))
	}
	// Output:
	// modify {"limit":10,"q":"go"}
	// allow
}

// Validate reports set-up mistakes; Run and Resume check them first. A
// guard that may ask needs an Approver or PauseForApproval.
func ExampleAgentLoop_Validate() {
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Text("Hello.")),
		Guard: &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask}}},
	}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Hi.")})
	fmt.Println(errors.Is(err, toolloop.ErrNoApprover))

	loop.PauseForApproval = true
	fmt.Println(loop.Validate())
	// Output:
	// true
	// <nil>
}

// Text shows a result as the model sees it, JSON included.
func ExampleToolResult_Text() {
	r := &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{
		toolloop.TextContent("3 files:"),
		toolloop.JSONContent(json.RawMessage(`["a.go","b.go","c.go"]`)),
		toolloop.ImageContent("image/png", make([]byte, 2048)),
	}}
	fmt.Println(r.Text())
	// Output:
	// 3 files:
	// ["a.go","b.go","c.go"]
	// [image (image/png, 2048 bytes)]
}
