// Command workspace runs a coding agent's tool loop over a scratch
// workspace with the builtin tools, offline: a scripted model stands in
// for a real one. It reads a file, fixes a bug with edit_file, runs the
// program with exec_shell, and is refused a path outside the workspace and
// a command on the policy's denylist.
//
//	go run ./examples/workspace
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
)

const program = `#!/bin/sh
# greet prints a greeting.
name=${1:-world}
echo "Hello, $nmae!"
`

func main() {
	dir, err := os.MkdirTemp("", "toolloop-workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "greet.sh"), []byte(program), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := run(context.Background(), dir); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string) error {
	ws, err := builtin.Workspace(dir, nil)
	if err != nil {
		return err
	}
	defer ws.Close()
	var reg toolloop.ToolRegistry
	if err := reg.AddSource(ctx, ws); err != nil {
		return err
	}
	loop := &toolloop.AgentLoop{
		Model: scriptedModel(),
		Tools: &reg,
		// The denylist stops honest mistakes; it is not a sandbox.
		Guard:   &builtin.CommandPolicy{},
		OnEvent: show,
	}
	fmt.Printf("workspace: %s\n\n", dir)
	_, err = loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("greet.sh prints an empty name. Fix it.")})
	return err
}

// show prints the run as it happens.
func show(e toolloop.Event) {
	switch e.Type {
	case toolloop.EventModelResponse:
		m := e.Response.Message
		for _, c := range m.ToolCalls {
			fmt.Printf("model -> %s %s\n", c.Name, c.Arguments)
		}
		if t := m.Text(); t != "" {
			fmt.Printf("model: %s\n", t)
		}
	case toolloop.EventPartialResult:
		fmt.Printf("   .. %s is printing: %q\n", e.Tool, e.Text)
	case toolloop.EventComplete:
		r := e.Result
		status := string(r.Status)
		if r.Error != nil {
			status += " (" + string(r.Error.Kind) + ")"
		}
		fmt.Printf("   <- %s %s:\n%s\n", r.Name, status, indent(r.Text()))
	}
}

// scriptedModel answers each turn with the next canned response, the way
// looptest's scripted model does in tests.
func scriptedModel() toolloop.Model {
	turns := []*toolloop.Response{
		calls(call("c1", "read_file", map[string]any{"path": "greet.sh"})),
		calls(call("c2", "edit_file", map[string]any{
			"path":  "greet.sh",
			"edits": []map[string]any{{"old_string": `echo "Hello, $nmae!"`, "new_string": `echo "Hello, $name!"`}},
		})),
		calls(call("c3", "exec_shell", map[string]any{"command": "./greet.sh && ./greet.sh Go"})),
		calls(
			call("c4", "read_file", map[string]any{"path": "../../etc/passwd"}),
			call("c5", "exec_shell", map[string]any{"command": "sudo rm -rf /"}),
		),
		{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent(
			"Fixed the misspelled variable in greet.sh; it now prints the name.")}}},
	}
	n := 0
	return toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		if n == len(turns) {
			return nil, fmt.Errorf("the script has only %d turns", len(turns))
		}
		n++
		return turns[n-1], nil
	})
}

func calls(cs ...toolloop.ToolCall) *toolloop.Response {
	return &toolloop.Response{Message: toolloop.Message{ToolCalls: cs}}
}

func call(id, name string, args any) toolloop.ToolCall {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		panic(err)
	}
	return toolloop.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(strings.TrimSpace(b.String()))}
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}
