// Command background runs toolloop offline with a coding agent that starts
// a slow test suite as a background job and goes on working while it runs.
//
// The scripted model runs ./run_tests.sh with exec_shell's background
// argument: the call answers at once with a job ID, and the suite's output
// streams into the job (job.output events, shown with │) while the model
// reads the changelog and lists the workspace. Having nothing left to do,
// the model says it is waiting; Limits.Jobs.WaitAtEnd keeps the run open,
// and when the suite ends the loop delivers its end to the model once, as
// a message ("[Job job_1 (exec_shell, started by call c1) ended: ok …"),
// and the model answers with the suite's verdict.
//
//	go run ./examples/background
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

// The workspace: a slow test suite (about three seconds) and a changelog.
var files = map[string]string{
	"run_tests.sh": `#!/bin/sh
# The test suite: slow enough to run in the background.
for t in Parse Format Render Export; do
	echo "=== RUN   Test$t"
	sleep 0.7
	echo "--- PASS: Test$t"
done
echo "PASS (4 tests)"
`,
	"CHANGELOG.md": "# Changelog\n\n## 0.3.0 (unreleased)\n\n- Export to PDF.\n",
}

func main() {
	dir, err := os.MkdirTemp("", "toolloop-background")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := run(context.Background(), dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string, out io.Writer) error {
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			return err
		}
	}
	ws, err := builtin.Workspace(dir, &builtin.Options{Tools: []string{builtin.ExecShell, builtin.ReadFile, builtin.ListDirectory}})
	if err != nil {
		return err
	}
	defer ws.Close()
	var reg toolloop.ToolRegistry
	if err := reg.AddSource(ctx, ws); err != nil {
		return err
	}
	show := sink.NewPrinter(out, nil)
	loop := &toolloop.AgentLoop{
		Model: model{},
		Tools: &reg,
		// Without WaitAtEnd, a run whose model answers while a job runs
		// ends, and cancels the job (RunResult.Jobs says so).
		Limits: toolloop.Limits{Jobs: toolloop.JobLimits{WaitAtEnd: true}},
		OnEvent: func(e toolloop.Event) {
			show(e)
			// The printer shows calls and delivered messages; the job's
			// own events are shown here.
			switch e.Type {
			case toolloop.EventJobStarted:
				fmt.Fprintf(out, "  ⧗ %s started (%s, call %s)\n", e.Job.ID, e.Tool, e.CallID)
			case toolloop.EventJobOutput:
				for line := range strings.Lines(e.Text) {
					fmt.Fprintf(out, "  │ %s", line)
				}
			case toolloop.EventJobFinished:
				fmt.Fprintf(out, "  ⧗ %s finished: %s\n", e.Job.ID, e.Job.Status)
			}
		},
	}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Run the test suite and check the changelog is ready for 0.3.0.")})
	if err != nil {
		return err
	}
	for _, j := range res.Jobs {
		fmt.Fprintf(out, "\njob %s: %s, %d bytes of output, told to the model: %v\n", j.ID, j.Status, j.OutputBytes, j.Reported)
	}
	return nil
}

// model is a scripted model that decides each turn from the transcript,
// as a real one would: start the suite, do other work meanwhile, wait,
// and react to the suite's end when it is delivered.
type model struct{}

func (model) Generate(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	msgs := req.Messages
	switch end := jobEnd(msgs); {
	case end != "":
		passed := strings.Count(end, "--- PASS")
		if strings.Contains(end, "ended: ok") && strings.Contains(end, "exit code 0") {
			return looptest.Text(fmt.Sprintf("The suite passed: %d of 4 tests ran and passed (exit code 0). "+
				"CHANGELOG.md has 0.3.0 as unreleased with the PDF export, so it is ready to tag.", passed)), nil
		}
		return looptest.Text("The suite failed; here is its end:\n" + end), nil
	case answered(msgs, "list_directory"):
		return looptest.Text("The suite is still running; I will report when it ends."), nil
	case answered(msgs, "read_file"):
		return looptest.Calls(looptest.Call("c3", "list_directory", `{}`)), nil
	case answered(msgs, "exec_shell"):
		return looptest.Calls(looptest.Call("c2", "read_file", `{"path":"CHANGELOG.md"}`)), nil
	}
	return looptest.Calls(looptest.Call("c1", "exec_shell", `{"command":"./run_tests.sh","background":true}`)), nil
}

// jobEnd returns the message that told the model a job ended, if any.
func jobEnd(msgs []toolloop.Message) string {
	for _, m := range msgs {
		if m.Role == toolloop.RoleUser && strings.HasPrefix(m.Text(), "[Job ") {
			return m.Text()
		}
	}
	return ""
}

// answered reports whether a call of the tool name has its result.
func answered(msgs []toolloop.Message, name string) bool {
	for _, m := range msgs {
		if m.Result != nil && m.Result.Name == name {
			return true
		}
	}
	return false
}
