package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/codemode"
	"github.com/toolloop/toolloop/looptest"
)

// The model answers a question that needs three tool calls in one turn:
// it writes a program that makes them, and only the program's answer
// enters the transcript.
func ExampleNew() {
	type sizeIn struct {
		Path string `json:"path" jsonschema:"description=A file path."`
	}
	size := toolloop.NewTool("file_size", "The size of a file in bytes.", func(_ context.Context, in sizeIn) (any, error) {
		return map[string]any{"path": in.Path, "bytes": len(in.Path) * 100}, nil
	})
	var reg toolloop.ToolRegistry
	reg.MustRegister(size)
	reg.MustRegister(codemode.New(&reg, nil)) // after the tools it offers

	program := `
const files = ["a.go", "main.go", "loop_test.go"];
const sizes = await Promise.all(files.map(path => tools.file_size({path})));
const largest = sizes.reduce((a, b) => (b.bytes > a.bytes ? b : a));
console.log("checked", sizes.length, "files");
return largest.path + " (" + largest.bytes + " bytes)";`
	args, _ := json.Marshal(map[string]string{"code": program})
	loop := &toolloop.AgentLoop{
		Tools: &reg,
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "run_code", string(args))),
			looptest.Text("The largest is loop_test.go."),
		),
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Which file is largest?")})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(looptest.Results(res.Messages)["call_1"].Text())
	// Output:
	// loop_test.go (1200 bytes)
	//
	// Console output:
	// checked 3 files
}
