package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

const codeModeLog = "testdata/code-mode.jsonl"

// TestRecordCodeMode records the code-mode run the tests read, with
// -update; without it, it checks that the committed log is a whole run.
func TestRecordCodeMode(t *testing.T) {
	if *update {
		log := recordCodeMode(t)
		require.NoError(t, os.MkdirAll(filepath.Dir(codeModeLog), 0o755))
		require.NoError(t, os.WriteFile(codeModeLog, log, 0o644))
	}
	raw, err := os.ReadFile(codeModeLog)
	require.NoError(t, err, "run go test -run TestRecordCodeMode -update to record it")
	rp, err := eventlog.Read(bytes.NewReader(raw))
	require.NoError(t, err)
	looptest.AssertValid(t, rp.Transcript())
}

// largestProgram is the program of call c1: it lists the files, stats
// them at once, reads the first lines of the three largest (one of them
// is gone), and writes a report, which the guard asks a person about: the
// run pauses, and on resume the program runs again, its first eight
// inner calls served from the journal.
const largestProgram = `// Report the three largest Go files and their first lines.
const files = await tools.list_files({dir: "."});
const stats = await Promise.all(files.map(f => tools.stat({path: f})));
const top = stats.sort((a, b) => b.size - a.size).slice(0, 3);
const lines = [];
for (const f of top) {
  try {
    const text = await tools.read_file({path: f.path});
    lines.push(f.path + ": " + text.split("\n")[0]);
  } catch (e) {
    console.log("skipped " + f.path + ": " + e.kind);
  }
}
await tools.write_file({path: "REPORT.md", content: lines.join("\n")});
console.log("wrote REPORT.md");
return top.map(f => f.path).join(", ");`

// hostileProgram is the program of call c3: its source holds markup that
// would break the page if the page put it in as markup, and it throws
// after the guard denied one of its calls.
const hostileProgram = `// ` + hostile + `
const banner = "<b>bold</b> & </script><script>window.pwned=3</script>";
const r = await tools.read_file({path: "go.mod"});
await tools.delete_tree({path: "/tmp/cache"});
console.log(banner);
throw new Error("cleanup failed: " + r.length);`

// fakeFiles are the files of the scripted workspace, by size.
var fakeFiles = map[string]int{"loop.go": 4200, "view.go": 3100, "gone.go": 9000, "doc.go": 300, "go.mod": 40}

// runCode stands in for codemode's run_code tool: it runs, as Go, the
// program whose source it is given (largestProgram or hostileProgram),
// making the same inner calls in the same order through call.Inner(), and
// answers with the program's return value then its console output.
func runCode() toolloop.Tool {
	t, err := toolloop.NewSchemaTool("run_code", "Runs a JavaScript program that calls the tools.",
		json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}`),
		func(ctx context.Context, call *toolloop.Call) (any, error) {
			var in struct {
				Code string `json:"code"`
			}
			if err := call.Bind(&in); err != nil {
				return nil, err
			}
			inner := call.Inner()
			if inner == nil {
				return nil, errors.New("no inner calls")
			}
			var console []string
			run := func(name string, args any) (*toolloop.ToolResult, error) {
				raw, _ := json.Marshal(args)
				return inner.Prepare(name, raw).Run(ctx)
			}
			switch in.Code {
			case largestProgram:
				r, err := run("list_files", map[string]string{"dir": "."})
				if err != nil {
					return nil, err
				}
				var files []string
				if err := json.Unmarshal([]byte(r.Text()), &files); err != nil {
					return nil, err
				}
				ics := make([]*toolloop.InnerCall, len(files))
				for i, f := range files {
					raw, _ := json.Marshal(map[string]string{"path": f})
					ics[i] = inner.Prepare("stat", raw)
				}
				errs := make([]error, len(ics))
				var wg sync.WaitGroup
				for i := range ics {
					wg.Go(func() { _, errs[i] = ics[i].Run(ctx) })
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					return nil, err
				}
				top := []string{"gone.go", "loop.go", "view.go"}
				var lines []string
				for _, f := range top {
					r, err := run("read_file", map[string]string{"path": f})
					if err != nil {
						return nil, err
					}
					if r.IsError() {
						console = append(console, "skipped "+f+": "+string(r.Error.Kind))
						continue
					}
					first, _, _ := strings.Cut(r.Text(), "\n")
					lines = append(lines, f+": "+first)
				}
				if _, err := run("write_file", map[string]string{"path": "REPORT.md", "content": strings.Join(lines, "\n")}); err != nil {
					return nil, err
				}
				console = append(console, "wrote REPORT.md")
				return strings.Join(top, ", ") + "\n\nconsole:\n" + strings.Join(console, "\n"), nil
			case hostileProgram:
				r, err := run("read_file", map[string]string{"path": "go.mod"})
				if err != nil {
					return nil, err
				}
				if _, err := run("delete_tree", map[string]string{"path": "/tmp/cache"}); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("Error: cleanup failed: %d\n\nconsole:\n<b>bold</b> & </script><script>window.pwned=3</script>", len(r.Text()))
			}
			return nil, errors.New("unknown program")
		})
	if err != nil {
		panic(err)
	}
	return t
}

// recordCodeMode runs a real AgentLoop on a scripted model and returns
// its event log: in turn 1, a program (c1) whose nine inner calls list,
// stat in parallel, read (one fails) and write, the write paused for
// approval and, on resume, run as the program runs again; beside it a
// plain call (c2). In turn 2, a program (c3) with hostile source whose
// second inner call the guard denies, and which then throws.
func recordCodeMode(t *testing.T) []byte {
	ctx := t.Context()
	var reg toolloop.ToolRegistry
	type path struct {
		Path string `json:"path"`
	}
	reg.MustRegister(toolloop.NewTool("list_files", "Lists the files of a directory.", func(ctx context.Context, in struct {
		Dir string `json:"dir"`
	}) (any, error) {
		time.Sleep(5 * time.Millisecond)
		return []string{"doc.go", "gone.go", "loop.go", "view.go"}, nil
	}))
	reg.MustRegister(toolloop.NewTool("stat", "Stats a file.", func(ctx context.Context, in path) (any, error) {
		time.Sleep(15 * time.Millisecond)
		return map[string]any{"path": in.Path, "size": fakeFiles[in.Path]}, nil
	}))
	reg.MustRegister(toolloop.NewTool("read_file", "Reads a file.", func(ctx context.Context, in path) (any, error) {
		time.Sleep(5 * time.Millisecond)
		if in.Path == "gone.go" {
			return nil, toolloop.Errorf(toolloop.KindNotFound, "no such file: %s", in.Path)
		}
		return "package " + strings.TrimSuffix(in.Path, ".go") + "\n\n// more", nil
	}))
	reg.MustRegister(toolloop.NewTool("write_file", "Writes a file.", func(ctx context.Context, in struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}) (any, error) {
		return fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.Path), nil
	}))
	reg.MustRegister(toolloop.NewTool("delete_tree", "Deletes a directory.", func(ctx context.Context, in path) (any, error) {
		return "deleted " + in.Path, nil
	}))
	reg.MustRegister(runCode())

	code := func(src string) string {
		b, _ := json.Marshal(map[string]string{"code": src})
		return string(b)
	}
	model := looptest.Script(
		withUsage(looptest.Calls(
			looptest.Call("c1", "run_code", code(largestProgram)),
			looptest.Call("c2", "read_file", `{"path":"README.md"}`),
		), 900, 260),
		withUsage(looptest.Calls(looptest.Call("c3", "run_code", code(hostileProgram))), 1300, 120),
		withUsage(looptest.Text("The largest files are loop.go and view.go; REPORT.md is written."), 1500, 40),
	)
	guard := toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
		switch c.Name {
		case "delete_tree":
			return toolloop.Verdict{Decision: toolloop.Deny, Reason: "deleting directories is not allowed", Rule: "no-delete"}
		case "write_file":
			return toolloop.Verdict{Decision: toolloop.Ask, Reason: "writes need a human", Rule: "ask-write"}
		}
		return toolloop.Verdict{Decision: toolloop.Allow}
	})
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: guard, PauseForApproval: true, OnEvent: w.Record}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Which Go files are the largest? Write a report.")})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.NotNil(t, res.Paused)
	require.Len(t, res.Paused.Pending, 1)
	require.Equal(t, "c1/9", res.Paused.Pending[0].CallID)
	res, err = loop.Resume(ctx, res.Paused, map[string]toolloop.Approval{"c1/9": {Approved: true, Reason: "ok by alice"}})
	require.NoError(t, err)
	require.Equal(t, 3, res.Turns)
	require.NoError(t, w.Close())
	return buf.Bytes()
}
