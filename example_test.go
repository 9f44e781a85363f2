package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// The whole loop: a typed tool, a registry, a model (scripted here; see
// providers/ for real ones) and a run.
func Example() {
	type weatherIn struct {
		City string `json:"city" jsonschema:"description=City name, e.g. Paris"`
	}
	weather := toolloop.NewTool("get_weather", "Get the current weather for a city.",
		func(_ context.Context, in weatherIn) (any, error) {
			return "18°C and sunny in " + in.City, nil
		})

	var tools toolloop.ToolRegistry
	tools.MustRegister(weather)

	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
			looptest.Text("It is 18°C and sunny in Paris."),
		),
		Tools: &tools,
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Weather in Paris?")})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, m := range res.Messages {
		switch {
		case m.Result != nil:
			fmt.Printf("%s: %s -> %s\n", m.Role, m.Result.Name, m.Result.Text())
		case len(m.ToolCalls) > 0:
			fmt.Printf("%s: calls %s %s\n", m.Role, m.ToolCalls[0].Name, m.ToolCalls[0].Arguments)
		default:
			fmt.Printf("%s: %s\n", m.Role, m.Text())
		}
	}
	// Output:
	// user: Weather in Paris?
	// assistant: calls get_weather {"city":"Paris"}
	// tool: get_weather -> 18°C and sunny in Paris
	// assistant: It is 18°C and sunny in Paris.
}

// NewTool infers the JSON Schema of the arguments from a struct's tags.
func ExampleNewTool() {
	type searchIn struct {
		Query string `json:"query" jsonschema:"description=What to look for"`
		Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=50"`
		Scope string `json:"scope,omitempty" jsonschema:"enum=code,enum=docs"`
	}
	search := toolloop.NewTool("search", "Search the code base.",
		func(_ context.Context, in searchIn) (any, error) { return nil, nil })
	search.Annotations.ReadOnly = true

	var schema map[string]any
	_ = json.Unmarshal(search.Spec().InputSchema, &schema)
	out, _ := json.MarshalIndent(schema, "", "  ")
	fmt.Println(string(out))
	// Output:
	// {
	//   "additionalProperties": false,
	//   "properties": {
	//     "limit": {
	//       "maximum": 50,
	//       "minimum": 1,
	//       "type": "integer"
	//     },
	//     "query": {
	//       "description": "What to look for",
	//       "type": "string"
	//     },
	//     "scope": {
	//       "enum": [
	//         "code",
	//         "docs"
	//       ],
	//       "type": "string"
	//     }
	//   },
	//   "required": [
	//     "query"
	//   ],
	//   "type": "object"
	// }
}

// A registry over several sources refuses a tool name that is taken,
// unless AllowShadowing is set: the name then resolves local, builtin,
// plugin, mcp, and the registry reports the tools it hides.
func ExampleToolRegistry() {
	echo := func(from string) toolloop.Tool {
		return toolloop.NewTool("echo", "Echo from "+from+".", func(context.Context, struct{}) (any, error) { return from, nil })
	}
	ctx := context.Background()
	var strict toolloop.ToolRegistry
	_ = strict.AddSource(ctx, toolloop.NewSource("github", toolloop.SourceMCP, echo("mcp")))
	err := strict.AddSource(ctx, toolloop.NewSource("workspace", toolloop.SourceBuiltin, echo("builtin")))
	fmt.Println(errors.Is(err, toolloop.ErrToolNameTaken))

	reg := toolloop.ToolRegistry{AllowShadowing: true}
	_ = reg.AddSource(ctx, toolloop.NewSource("github", toolloop.SourceMCP, echo("mcp")))
	_ = reg.AddSource(ctx, toolloop.NewSource("workspace", toolloop.SourceBuiltin, echo("builtin")))

	t, _ := reg.Lookup(ctx, "echo")
	fmt.Println(t.Spec().Description)
	for _, s := range reg.Shadowed() {
		fmt.Printf("%s: %s hides %s\n", s.Name, s.Winner, s.Loser)
	}
	// Output:
	// true
	// Echo from builtin.
	// echo: builtin:workspace hides mcp:github
}

// A RuleGuard decides by the first rule that matches.
func ExampleRuleGuard() {
	guard := &toolloop.RuleGuard{
		Rules: []toolloop.Rule{
			{Name: "reads", ReadOnly: true, Decision: toolloop.Allow},
			{Name: "no-shell", Tools: []string{"exec_*"}, Decision: toolloop.Deny, Reason: "no shell in this agent"},
			{Name: "mcp-writes", Source: toolloop.SourceMCP, Destructive: true, Decision: toolloop.Ask, Reason: "remote writes need a human"},
		},
		Default: toolloop.Allow,
	}
	for _, c := range []*toolloop.Call{
		{Name: "read_file", Annotations: toolloop.Annotations{ReadOnly: true}},
		{Name: "exec_shell"},
		{Name: "github__create_issue", Source: toolloop.SourceMCP, Annotations: toolloop.Annotations{Destructive: true}},
		{Name: "write_file"},
	} {
		v := guard.Check(context.Background(), c)
		fmt.Printf("%-20s %-5s %s\n", c.Name, v.Decision, v.Rule)
	}
	// Output:
	// read_file            allow reads
	// exec_shell           deny  no-shell
	// github__create_issue ask   mcp-writes
	// write_file           allow default
}

// A run pauses when a call needs a human; its state is JSON, and Resume
// continues it later, even in another process.
func ExampleAgentLoop_Resume() {
	deploy := toolloop.NewTool("deploy", "Deploy to production.", func(context.Context, struct{}) (any, error) {
		return "deployed", nil
	})
	deploy.Annotations.Destructive = true
	var tools toolloop.ToolRegistry
	tools.MustRegister(deploy)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "deploy", `{}`)),
			looptest.Text("Deployed."),
		),
		Tools:            &tools,
		Guard:            &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask, Reason: "production change"}}},
		PauseForApproval: true,
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Ship it.")})
	if !errors.Is(err, toolloop.ErrPaused) {
		fmt.Println("unexpected:", err)
		return
	}
	saved, _ := json.Marshal(res.Paused) // store it anywhere
	fmt.Println("waiting for:", res.Paused.Pending[0].Name, "-", res.Paused.Pending[0].Reason)

	var state toolloop.PauseState
	_ = json.Unmarshal(saved, &state)
	res, err = loop.Resume(context.Background(), &state, map[string]toolloop.Approval{"call_1": {Approved: true}})
	fmt.Println(res.FinalText, err)
	// Output:
	// waiting for: deploy - production change
	// Deployed. <nil>
}

// Hooks redact what the model must not see, and add guidance to failures.
func ExampleHooks() {
	env := toolloop.NewTool("read_env", "Read the environment file.", func(context.Context, struct{}) (any, error) {
		return "TOKEN=abc123", nil
	})
	var tools toolloop.ToolRegistry
	tools.MustRegister(env)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "read_env", `{}`), looptest.Call("c2", "read_nev", `{}`)),
			looptest.Text("ok"),
		),
		Tools: &tools,
		Hooks: toolloop.Hooks{
			PostToolUse: []toolloop.PostToolUseHook{
				func(_ context.Context, _ *toolloop.Call, r *toolloop.ToolResult) (*toolloop.ToolResult, error) {
					return toolloop.TextResult(strings.ReplaceAll(r.Text(), "abc123", "[REDACTED]")), nil
				},
			},
			PostToolUseFailure: []toolloop.PostToolUseFailureHook{
				func(context.Context, *toolloop.Call, *toolloop.ToolResult) string {
					return "Check the tool list before calling."
				},
			},
		},
	}
	res, _ := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("env?")})
	for _, id := range []string{"c1", "c2"} {
		r := looptest.Results(res.Messages)[id]
		for _, c := range r.Content {
			fmt.Printf("%s: %s\n", id, c.Text)
		}
	}
	// Output:
	// c1: TOKEN=[REDACTED]
	// c2: unknown tool "read_nev". Did you mean "read_env"?
	// c2: Check the tool list before calling.
}

// Events tell what happened, for logs, UIs and audits.
func ExampleEvent() {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("ping", "Ping.", func(context.Context, struct{}) (any, error) { return "pong", nil }))
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Calls(looptest.Call("c1", "ping", `{}`)), looptest.Text("pong")),
		Tools: &tools,
		OnEvent: func(e toolloop.Event) {
			if strings.HasPrefix(string(e.Type), "tool.") {
				fmt.Println(e.Type, e.CallID, e.Tool, e.Source, e.SourceName)
			}
		},
	}
	_, _ = loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("ping")})
	// Output:
	// tool.execution_start c1 ping local local
	// tool.execution_complete c1 ping local local
}

// TruncateText keeps the head and the tail, where errors usually are.
func ExampleTruncateText() {
	log := strings.Repeat("compiling...\n", 100) + "error: undefined: Divide\n"
	fmt.Println(toolloop.TruncateText(log, 140))
	// Output:
	// compiling...
	// compiling...
	// [... 1261 of 1325 bytes cut from the middle of this output ...]
	// compiling...
	// error: undefined: Divide
}

// RepairTranscript answers the calls a crashed run left without results.
func ExampleRepairTranscript() {
	msgs := []toolloop.Message{
		toolloop.UserMessage("Read it."),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{}`)}}},
	}
	fixed, notes := toolloop.RepairTranscript(msgs)
	fmt.Println(notes[0])
	fmt.Println(fixed[2].Result.Error.Kind)
	// Output:
	// gave interrupted call c1 (read_file) a canceled result
	// canceled
}

// Tee sends events to several sinks, such as an event log and telemetry.
func ExampleTee() {
	var calls, all int
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Text("hi")),
		OnEvent: toolloop.Tee(nil,
			func(e toolloop.Event) { all++ },
			func(e toolloop.Event) { panic("a broken sink") },
			func(e toolloop.Event) {
				if e.Type == toolloop.EventModelResponse {
					calls++
				}
			},
		),
	}
	_, _ = loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("hi")})
	fmt.Println(all, calls)
	// Output: 4 1
}
