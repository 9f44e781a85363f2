// Command workspace runs a coding agent's tool loop over a scratch
// workspace with the builtin tools, offline: a scripted model stands in
// for a real one. It reads a file, fixes a bug with edit_file, runs the
// program with exec_shell, and is refused a path outside the workspace and
// a command on the policy's denylist. Checkpoints are on: when the model
// then deletes the script by mistake, it rewinds the workspace to before
// that command, and the program prints what each call changed.
//
//	go run ./examples/workspace
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
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
	if err := run(context.Background(), dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string, out io.Writer) error {
	// Checkpoints record the workspace before and after every call that can
	// change it, in a git store outside it (here a temporary one that
	// Close removes), and give the model the rewind tool.
	ws, err := builtin.Workspace(dir, &builtin.Options{Checkpoints: &builtin.CheckpointOptions{}})
	if err != nil {
		return err
	}
	defer ws.Close()
	var reg toolloop.ToolRegistry
	if err := reg.AddSource(ctx, ws); err != nil {
		return err
	}
	loop := &toolloop.AgentLoop{
		Model: script(),
		Tools: &reg,
		// The denylist stops honest mistakes; it is not a sandbox.
		Guard: &builtin.CommandPolicy{},
		// The model's text, and one line per call when it completes.
		OnEvent: sink.NewPrinter(out, nil),
	}
	fmt.Fprintf(out, "workspace: %s\n\n", dir)
	if _, err = loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("greet.sh prints an empty name. Fix it.")}); err != nil {
		return err
	}

	// What each call that could change files did, and the edit's diff.
	fmt.Fprintln(out, "\ncheckpoints:")
	for _, cp := range ws.Checkpoints().List() {
		fmt.Fprintf(out, "  %s %s (turn %d):", cp.CallID, cp.Tool, cp.Turn)
		for _, ch := range cp.Changes {
			fmt.Fprintf(out, " %s %s", ch.Kind, ch.Path)
		}
		if len(cp.Changes) == 0 {
			fmt.Fprint(out, " no change")
		}
		fmt.Fprintln(out)
	}
	diff, err := ws.Checkpoints().Diff("c2")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nthe diff of c2:\n%s", diff)
	return nil
}

// script is what a model might answer, turn by turn.
func script() toolloop.Model {
	return looptest.Script(
		looptest.Calls(looptest.Call("c1", "read_file", `{"path":"greet.sh"}`)),
		looptest.Calls(looptest.Call("c2", "edit_file",
			`{"path":"greet.sh","edits":[{"old_string":"echo \"Hello, $nmae!\"","new_string":"echo \"Hello, $name!\""}]}`)),
		looptest.Calls(looptest.Call("c3", "exec_shell", `{"command":"./greet.sh && ./greet.sh Go"}`)),
		looptest.Calls(
			looptest.Call("c4", "read_file", `{"path":"../../etc/passwd"}`),
			looptest.Call("c5", "exec_shell", `{"command":"sudo rm -rf /"}`),
		),
		// A clean-up that goes wrong, and the rewind that undoes it.
		looptest.Calls(looptest.Call("c6", "exec_shell", `{"command":"rm -f *.sh && echo 'greet: fixed' > NOTES"}`)),
		looptest.Calls(looptest.Call("c7", "rewind", `{"call_id":"c6"}`)),
		looptest.Calls(looptest.Call("c8", "exec_shell", `{"command":"ls && ./greet.sh again"}`)),
		looptest.Text("Fixed the misspelled variable in greet.sh; it now prints the name. (I deleted it by mistake while tidying up, and rewound the workspace.)"),
	)
}
