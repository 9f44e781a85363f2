package judgment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/judgment"
)

func ExampleGuard() {
	// A stand-in judge: it denies anything that deletes, and answers
	// through the verdict tool it is offered.
	judge := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		decision, reason := "allow", "harmless"
		if strings.Contains(req.Messages[1].Text(), "rm ") {
			decision, reason = "deny", "deletes files"
		}
		args, _ := json.Marshal(map[string]string{"decision": decision, "reason": reason})
		return &toolloop.Response{Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{
			{ID: "v1", Name: judgment.VerdictTool, Arguments: args},
		}}}, nil
	})
	g := &judgment.Guard{Model: judge}

	shell := toolloop.Annotations{Destructive: true, JudgmentRequired: true}
	for _, call := range []*toolloop.Call{
		{Name: "shell", Arguments: json.RawMessage(`{"cmd":"ls -l"}`), Annotations: shell},
		{Name: "shell", Arguments: json.RawMessage(`{"cmd":"rm -rf ~"}`), Annotations: shell},
		{Name: "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
	} {
		v := g.Check(context.Background(), call)
		fmt.Printf("%s: %s %q %q\n", call.Arguments, v.Decision, v.Rule, v.Reason)
	}
	// Output:
	// {"cmd":"ls -l"}: allow "judgment" "harmless"
	// {"cmd":"rm -rf ~"}: deny "judgment" "deletes files"
	// {"path":"go.mod"}: allow "" ""
}
