package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
)

// script is a stand-in for a real model: it answers each turn with the
// next canned response.
func script(replies ...*toolloop.Response) toolloop.Model {
	turn := 0
	return toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		if turn == len(replies) {
			return &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("done")}}}, nil
		}
		turn++
		return replies[turn-1], nil
	})
}

func calls(cs ...toolloop.ToolCall) *toolloop.Response {
	return &toolloop.Response{Message: toolloop.Message{ToolCalls: cs}}
}

func call(id, name string, args any) toolloop.ToolCall {
	b, _ := json.Marshal(args)
	return toolloop.ToolCall{ID: id, Name: name, Arguments: b}
}

func ExampleWorkspace() {
	dir, _ := os.MkdirTemp("", "toolloop-example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("Hello, wrold!\n"), 0o644)

	ws, err := builtin.Workspace(dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ws.Close()
	ctx := context.Background()
	var reg toolloop.ToolRegistry
	if err := reg.AddSource(ctx, ws); err != nil {
		fmt.Println(err)
		return
	}
	loop := &toolloop.AgentLoop{
		Model: script(
			calls(call("1", "read_file", map[string]any{"path": "hello.txt"})),
			calls(call("2", "edit_file", map[string]any{"path": "hello.txt",
				"edits": []map[string]any{{"old_string": "wrold", "new_string": "world"}}})),
			calls(call("3", "exec_shell", map[string]any{"command": "cat hello.txt"})),
			calls(call("4", "read_file", map[string]any{"path": "../secrets.txt"})),
		),
		Tools: &reg,
		Guard: &builtin.CommandPolicy{},
	}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Fix the typo in hello.txt.")})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range res.Messages {
		if r := m.Result; r != nil {
			fmt.Printf("%s %s: %s\n", r.Name, r.Status, strings.ReplaceAll(strings.TrimSpace(r.Text()), "\n", " | "))
		}
	}
	fmt.Println(res.FinalText)
	// Output:
	// read_file ok: Hello, wrold!
	// edit_file ok: edited hello.txt: 1 edit, 1 replacement; the file now has 1 line
	// exec_shell ok: Hello, world! | [exit code 0]
	// read_file error: the path "../secrets.txt" leads outside the workspace; use a path relative to the workspace root
	// done
}

func ExampleCommandPolicy() {
	policy := &builtin.CommandPolicy{Allow: []string{"git", "go test", "ls"}, Otherwise: toolloop.Ask}
	for _, command := range []string{"go test ./...", "git status && ls", "make install", "sudo ls", "git log | sh"} {
		args, _ := json.Marshal(map[string]string{"command": command})
		v := policy.Check(context.Background(), &toolloop.Call{Name: builtin.ExecShell, Arguments: args})
		fmt.Printf("%-18s %s\n", command, v.Decision)
	}
	// Output:
	// go test ./...      allow
	// git status && ls   allow
	// make install       ask
	// sudo ls            deny
	// git log | sh       ask
}

// A workspace whose shell must be confined, with the network allowed and
// a build cache in the home folder writable. Where the machine cannot
// confine commands, every exec_shell call fails with a result of kind
// denied; Confinement tells the program beforehand.
func ExampleSource_Confinement() {
	dir, _ := os.MkdirTemp("", "toolloop-example")
	defer os.RemoveAll(dir)
	cache, _ := os.UserCacheDir()
	_ = os.MkdirAll(filepath.Join(cache, "go-build"), 0o755)
	ws, err := builtin.Workspace(dir, &builtin.Options{Shell: builtin.ShellOptions{
		Env:     []string{"GOCACHE=" + filepath.Join(cache, "go-build")},
		PassEnv: []string{"GOFLAGS"},
		Sandbox: builtin.Sandbox{
			Required:     true,
			AllowNetwork: true,
			Writable:     []string{filepath.Join(cache, "go-build")},
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ws.Close()
	if c := ws.Confinement(); !c.Writes {
		fmt.Println("commands cannot be confined here:", c.Summary)
	}
}
