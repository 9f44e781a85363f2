// Command codemode runs toolloop offline with an agent in code mode: the
// model writes one JavaScript program that calls the workspace's tools
// itself, and only what the program returns and prints comes back to it.
//
// The scripted model's program finds the Go files of a small project,
// reads them all at once (Promise.all), picks the three largest, tries a
// write outside the workspace (refused; the program catches the
// ToolError) and writes its report to REPORT.md. Every one of those
// calls goes through the loop's pipeline as an inner call of the
// program's call: the printer shows each, indented under the program.
// The guard asks about writes and the loop pauses for a person: the run
// stops with the write waiting, its state goes through JSON, and the
// person refuses the write outside the workspace; the resumed run runs
// the program again from the start, answering the calls that had run
// from the pause's journal (none runs twice), and pauses again at the
// next write, which the person approves. The model then answers from
// the program's report: two model turns for fourteen tool calls.
//
//	go run ./examples/codemode
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/codemode"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

// program is what the scripted model writes.
const program = `const listing = await tools.file_search({pattern: "**/*.go"});
const paths = listing.split("\n").filter(line => line && !line.startsWith("["));
const texts = await Promise.all(paths.map(path => tools.read_file({path})));
const files = paths.map((path, i) => ({path, bytes: texts[i].length, first: texts[i].split("\n")[0]}));
files.sort((a, b) => b.bytes - a.bytes);
const report = files.slice(0, 3).map(f => ` + "`${f.path} (${f.bytes} bytes): ${f.first}`" + `).join("\n");
console.log(` + "`read ${paths.length} Go files`" + `);
try {
  await tools.write_file({path: "../REPORT.md", content: report});
} catch (e) {
  console.log(` + "`a write outside the workspace was refused (${e.kind})`" + `);
}
await tools.write_file({path: "REPORT.md", content: report + "\n"});
return report;`

func main() {
	dir, err := os.MkdirTemp("", "toolloop-codemode")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := run(context.Background(), dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string, out io.Writer) error {
	if err := project(dir); err != nil {
		return err
	}
	ws, err := builtin.Workspace(dir, &builtin.Options{Tools: []string{builtin.FileSearch, builtin.ReadFile, builtin.WriteFile}})
	if err != nil {
		return err
	}
	defer ws.Close()
	var reg toolloop.ToolRegistry
	if err := reg.AddSource(ctx, ws); err != nil {
		return err
	}
	// The code tool offers the workspace's tools to programs, as
	// TypeScript declarations in its description.
	reg.MustRegister(codemode.New(&reg, toolloop.SelectSources(builtin.DefaultSourceName)))
	loop := &toolloop.AgentLoop{
		Model: model{},
		Tools: &reg,
		// The model is sent the code tool alone; its program calls the rest.
		ToolFilter: toolloop.Only(toolloop.SelectNames(codemode.DefaultName)),
		Guard: toolloop.GuardFunc(func(_ context.Context, call *toolloop.Call) toolloop.Verdict {
			if call.Name == builtin.WriteFile {
				return toolloop.Verdict{Decision: toolloop.Ask, Reason: "writes need a person"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		}),
		PauseForApproval: true,
		OnEvent:          sink.NewPrinter(out, nil),
	}
	task := []toolloop.Message{toolloop.UserMessage("Which are the three largest Go files? Write them to REPORT.md.")}
	res, err := loop.Run(ctx, task)
	for errors.Is(err, toolloop.ErrPaused) {
		// The paused run, as a process would save it and another resume
		// it; the person approves the write into the workspace only.
		st, rerr := reload(res.Paused)
		if rerr != nil {
			return rerr
		}
		decisions := map[string]toolloop.Approval{}
		for _, p := range st.Pending {
			var in struct{ Path string }
			if jerr := json.Unmarshal(p.Arguments, &in); jerr != nil {
				return jerr
			}
			ok := filepath.IsLocal(in.Path)
			fmt.Fprintf(out, "\npaused: %s %s path=%s waits for a person; %d inner calls done; approved: %v\n\n",
				p.CallID, p.Name, in.Path, done(st), ok)
			decisions[p.CallID] = toolloop.Approval{Approved: ok, Reason: map[bool]string{true: "the report may be written", false: "not outside the project"}[ok]}
		}
		res, err = loop.Resume(ctx, st, decisions)
	}
	if err != nil {
		return err
	}
	report, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nREPORT.md:\n%s", report)
	fmt.Fprintf(out, "\n%d model turns, %d tool calls (%d of them the program's)\n", res.Turns, res.ToolCalls, res.ToolCalls-1)
	return nil
}

// project writes a small Go project of files of different sizes.
func project(dir string) error {
	for i, name := range []string{"main.go", "cmd/serve/serve.go", "internal/store/store.go", "internal/store/cache.go",
		"internal/api/handlers.go", "internal/api/routes.go", "internal/auth/token.go", "pkg/log/log.go",
		"pkg/retry/retry.go", "pkg/retry/backoff.go"} {
		var b strings.Builder
		fmt.Fprintf(&b, "// %s is file %d of the project.\n", name, i+1)
		for k := range 5 + (i*37)%60 {
			fmt.Fprintf(&b, "func f%d() int { return %d }\n", k, k)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// reload is st through JSON, as a program that saves a paused run and
// resumes it in another process would have it.
func reload(st *toolloop.PauseState) (*toolloop.PauseState, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var saved toolloop.PauseState
	return &saved, json.Unmarshal(b, &saved)
}

// done counts the inner calls of the paused program that had finished:
// they are answered from its journal when it runs again.
func done(st *toolloop.PauseState) int {
	n := 0
	for _, a := range st.Agents {
		if a.Program != nil {
			for _, c := range a.Program.Calls {
				if c.Result != nil {
					n++
				}
			}
		}
	}
	return n
}

// model is a scripted model: it writes the program, then answers from
// the program's result.
type model struct{}

func (model) Generate(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	msgs := req.Messages
	if last := msgs[len(msgs)-1]; last.Result != nil {
		if last.Result.IsError() {
			return looptest.Text("The program failed: " + last.Result.Text()), nil
		}
		return looptest.Text("The three largest Go files, now in REPORT.md:\n" + last.Result.Text()), nil
	}
	args, err := json.Marshal(map[string]string{"code": program})
	if err != nil {
		return nil, err
	}
	return looptest.Calls(looptest.Call("call_1", codemode.DefaultName, string(args))), nil
}
