package builtin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
)

// A session with checkpoints: the model edits a file and creates one, and
// the program then looks at what each call changed and rewinds.
func ExampleCheckpoints_Rewind() {
	dir, _ := os.MkdirTemp("", "toolloop-example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("Hello, wrold!\n"), 0o644)

	// The zero CheckpointOptions keeps the store in a temporary directory
	// that Close removes.
	ws, err := builtin.Workspace(dir, &builtin.Options{Checkpoints: &builtin.CheckpointOptions{}})
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
			calls(call("e1", "edit_file", map[string]any{"path": "hello.txt",
				"edits": []map[string]any{{"old_string": "wrold", "new_string": "world"}}})),
			calls(call("w1", "write_file", map[string]any{"path": "notes/todo.txt", "content": "nothing\n"})),
		),
		Tools: &reg,
	}
	if _, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("fix the typo")}); err != nil {
		fmt.Println(err)
		return
	}

	cks := ws.Checkpoints()
	for _, cp := range cks.List() {
		fmt.Println(cp.CallID, cp.Tool, cp.Changes)
	}
	diff, _ := cks.Diff("e1")
	fmt.Print(diff)

	// Back to before the edit: the edit is undone, the new file removed.
	rw, _ := cks.Rewind(ctx, "e1")
	hello, _ := os.ReadFile(filepath.Join(dir, "hello.txt"))
	_, statErr := os.Stat(filepath.Join(dir, "notes"))
	fmt.Printf("after the rewind: %q, notes exists: %v\n", hello, statErr == nil)

	// A rewind is recorded like any call, so it can be undone.
	_, _ = cks.Rewind(ctx, rw.CallID)
	hello, _ = os.ReadFile(filepath.Join(dir, "hello.txt"))
	fmt.Printf("rewind undone: %q\n", hello)
	// Output:
	// e1 edit_file [{hello.txt modified }]
	// w1 write_file [{notes/ added } {notes/todo.txt added }]
	// diff --git a/hello.txt b/hello.txt
	// index 34dd4db58aae60772c08740eb267a9a901a34704..af5626b4a114abcb82d63db7c8082c3c4756e51b 100644
	// --- a/hello.txt
	// +++ b/hello.txt
	// @@ -1 +1 @@
	// -Hello, wrold!
	// +Hello, world!
	// after the rewind: "Hello, wrold!\n", notes exists: false
	// rewind undone: "Hello, world!\n"
}
