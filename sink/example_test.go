package sink_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

// exampleTools are a tool that works, one that fails and one that needs
// approval.
func exampleTools() *toolloop.ToolRegistry {
	type pathIn struct {
		Path string `json:"path"`
	}
	var tools toolloop.ToolRegistry
	tools.MustRegister(
		toolloop.NewTool("read_file", "Read a file.", func(_ context.Context, in pathIn) (any, error) {
			return "package main\n\nfunc main() {}\n", nil
		}),
		toolloop.NewTool("run_tests", "Run the tests.", func(_ context.Context, _ struct{}) (any, error) {
			return nil, errors.New("exit status 1\n--- FAIL: TestParse (0.00s)")
		}),
		toolloop.NewTool("delete_file", "Delete a file.", func(_ context.Context, in pathIn) (any, error) {
			return "deleted " + in.Path, nil
		}),
	)
	return &tools
}

// A printer shows a run as it happens: the model's text, and one line per
// tool call with its arguments and the first line of its result, or its
// error in full. On a terminal it is coloured (unless NO_COLOR is set);
// here, writing to a pipe, it is not.
func ExampleNewPrinter() {
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(
				looptest.Call("c1", "read_file", `{"path":"main.go"}`),
				looptest.Call("c2", "run_tests", `{}`),
			),
			looptest.Calls(looptest.Call("c3", "delete_file", `{"path":"main_test.go"}`)),
			looptest.Text("The tests fail in TestParse; I did not delete anything."),
		),
		Tools: exampleTools(),
		Guard: &toolloop.RuleGuard{Rules: []toolloop.Rule{
			{Name: "ask-delete", Tools: []string{"delete_*"}, Decision: toolloop.Ask, Reason: "deletes a file"},
		}},
		Approver: toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
			return toolloop.Approval{Approved: false, Reason: "not now"}, nil
		}), // one call at a time, for a stable output
		OnEvent: sink.NewPrinter(os.Stdout, nil), Limits: toolloop.Limits{MaxConcurrency: 1},
	}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Why do the tests fail?")})
	fmt.Println("error:", err)
	// Output:
	//   ✓ read_file path=main.go → package main … (+2 lines)
	//   ✗ run_tests → execution_failed: exit status 1
	//         --- FAIL: TestParse (0.00s)
	//   ? delete_file path=main_test.go → needs approval: deletes a file [ask-delete]
	//   ✗ delete_file path=main_test.go → denied by the approver: not now
	// The tests fail in TestParse; I did not delete anything.
	// error: <nil>
}

// The slog sink writes one record per event, at a level that follows its
// severity, with attributes a log processor can index. By default it logs
// no arguments, no tool output and no model text.
func ExampleNewSlog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		// Drop what changes from run to run, for a stable output.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key {
			case slog.TimeKey, "run_id", "duration_ms":
				return slog.Attr{}
			}
			return a
		},
	}))
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "read_file", `{"path":"main.go"}`), looptest.Call("c2", "run_tests", `{}`)),
			looptest.Text("TestParse fails."),
		),
		Tools:   exampleTools(),
		OnEvent: sink.NewSlog(logger, nil), Limits: toolloop.Limits{MaxConcurrency: 1},
	}
	_, _ = loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Why do the tests fail?")})
	// Output:
	// level=INFO msg=run.start turn=0 messages=1
	// level=INFO msg=model.response turn=1 stop_reason=tool_use input_tokens=0 output_tokens=0 tool_calls=2 tools="[read_file run_tests]"
	// level=INFO msg=tool.execution_complete turn=1 call_id=c1 tool=read_file source=local source_name=local status=ok bytes=29 truncated=false
	// level=WARN msg=tool.execution_complete turn=1 call_id=c2 tool=run_tests source=local source_name=local status=error error_kind=execution_failed bytes=41 truncated=false
	// level=INFO msg=model.response turn=2 stop_reason=stop input_tokens=0 output_tokens=0 tool_calls=0
	// level=INFO msg=run.end turn=2 stop_reason=stop input_tokens=0 output_tokens=0 cost_usd=0 tool_calls=2
}

// FormatTranscript prints a finished run's transcript for a person.
func ExampleFormatTranscript() {
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "read_file", `{"path": "main.go"}`)),
			looptest.Text("main.go declares an empty main."),
		),
		Tools: exampleTools(),
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{
		toolloop.SystemMessage("You read code."),
		toolloop.UserMessage("What is in main.go?"),
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	if err := sink.FormatTranscript(os.Stdout, res.Messages, nil); err != nil {
		fmt.Println("error:", err)
	}
	// Output:
	// system
	//   You read code.
	//
	// user
	//   What is in main.go?
	//
	// assistant (stop: tool_use)
	//   → read_file [c1] {"path":"main.go"}
	//
	// tool read_file [c1]: ok
	//   package main
	//
	//   func main() {}
	//
	// assistant (stop: stop)
	//   main.go declares an empty main.
}
