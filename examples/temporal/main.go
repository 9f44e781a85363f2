// Command temporal runs an agent as a Temporal workflow: a worker with the
// agent's model and tools, a run started by a client, a call that waits
// for a human's approval, and the transcript at the end.
//
//	go run ./examples/temporal            # approves the release tag
//	go run ./examples/temporal -deny      # refuses it
//
// It needs a Temporal server: the one at $TEMPORAL_ADDRESS, or else a dev
// server it starts with the Temporal CLI ($TOOLLOOP_TEMPORAL_CLI, or
// temporal on the PATH; install it with
// go install github.com/temporalio/cli/cmd/temporal@v1.5.1). With neither
// it says so and exits. The model is scripted, so the example runs
// offline.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
	"github.com/toolloop/toolloop/temporal"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "temporal:", err)
		os.Exit(1)
	}
}

const taskQueue = "toolloop-example"

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("temporal", flag.ContinueOnError)
	fs.SetOutput(out)
	deny := fs.Bool("deny", false, "refuse the call that waits for approval")
	if err := fs.Parse(args); err != nil {
		return err
	}
	addr, stop, err := server(out)
	if errors.Is(err, errNoServer) {
		fmt.Fprintln(out, err)
		return nil
	}
	if err != nil {
		return err
	}
	defer stop()

	c, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quiet()})
	if err != nil {
		return err
	}
	defer c.Close()

	// The worker: it holds the model and the tools, and runs the
	// workflow and its activities. Any number of them may poll the queue.
	// Heartbeats carry the tools' progress; the SDK sends them at most
	// every 0.8 × the heartbeat timeout unless told to send them sooner.
	w := worker.New(c, taskQueue, worker.Options{MaxHeartbeatThrottleInterval: 200 * time.Millisecond})
	temporal.Register(w, temporal.Agent{Loop: &toolloop.AgentLoop{
		Model:            script(),
		Tools:            tools(),
		Guard:            &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "confirm-release", Destructive: true, Decision: toolloop.Ask, Reason: "tagging publishes a release"}}},
		PauseForApproval: true,
	}})
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	fmt.Fprintf(out, "worker polling task queue %q\n", taskQueue)

	// The client: it could be another process, on another day.
	id := fmt.Sprintf("release-%d", time.Now().UnixNano())
	opts := temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}}
	msgs := []toolloop.Message{
		toolloop.SystemMessage("You are a release engineer. Check before you publish."),
		toolloop.UserMessage("Prepare the v1.2.0 release."),
	}
	r, err := temporal.Start(ctx, c, opts, msgs)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "started run %s\n\n", id)
	if err := watch(ctx, c, id, !*deny, out); err != nil {
		return err
	}
	res, err := temporal.Wait(ctx, r)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\n== transcript")
	if err := sink.FormatTranscript(out, res.Messages, nil); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== %s after %d turns, %d tool calls, %d input + %d output tokens\n",
		res.StopReason, res.Turns, len(res.Executions), res.Usage.InputTokens, res.Usage.OutputTokens)
	return nil
}

// watch follows the run until it ends, printing the tests' progress and
// answering the call that waits for approval, as a person at a console
// would.
func watch(ctx context.Context, c client.Client, id string, approve bool, out io.Writer) error {
	shown := map[string]bool{}
	for {
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return err
		}
		if desc.GetWorkflowExecutionInfo().GetCloseTime() != nil {
			return nil
		}
		st, err := temporal.Describe(ctx, c, id, "")
		if err != nil {
			return err
		}
		for _, call := range st.Calls {
			if p := call.Progress; p != nil && call.State == temporal.CallRunning {
				line := fmt.Sprintf("  [turn %d] %s: %s (%.0f/%.0f)", st.Turn, call.Name, p.Message, p.Done, p.Total)
				if !shown[line] {
					shown[line] = true
					fmt.Fprintln(out, line)
				}
			}
			if call.State != temporal.CallAwaiting || shown[call.CallID] {
				continue
			}
			shown[call.CallID] = true
			fmt.Fprintf(out, "  [turn %d] %s %s waits for approval: %s\n", st.Turn, call.Name, call.Pending.Arguments, call.Pending.Reason)
			d := temporal.Decision{CallID: call.CallID, Approval: toolloop.Approval{Approved: approve}}
			if !approve {
				d.Reason = "not this week"
			}
			if err := temporal.Decide(ctx, c, id, "", d); err != nil {
				return err
			}
			fmt.Fprintf(out, "  [you] %s\n", map[bool]string{true: "approved", false: "denied: " + d.Reason}[approve])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type versionIn struct {
	Version string `json:"version" jsonschema:"description=Semantic version to tag, such as v1.2.0"`
}

func tools() *toolloop.ToolRegistry {
	changelog := toolloop.NewTool("read_changelog", "Read the unreleased part of CHANGELOG.md.",
		func(context.Context, struct{}) (any, error) {
			return "## Unreleased\n- retries follow tool annotations\n- approvals survive worker restarts\n", nil
		})
	changelog.Annotations.ReadOnly = true
	tag := toolloop.NewTool("tag_release", "Tag and publish a release.",
		func(_ context.Context, in versionIn) (any, error) {
			return "tagged " + in.Version, nil
		})
	tag.Annotations.Destructive = true
	var reg toolloop.ToolRegistry
	reg.MustRegister(changelog, tag, runTests{})
	return &reg
}

// runTests is a long tool that reports its progress.
type runTests struct{}

var packages = []string{"toolloop", "builtin", "mcp", "temporal", "providers"}

func (runTests) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "run_tests", Description: "Run the test suite.", Annotations: toolloop.Annotations{ReadOnly: true}}
}

func (runTests) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	for i, p := range packages {
		call.ReportProgress(toolloop.Progress{Message: "testing " + p, Done: float64(i), Total: float64(len(packages))})
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		call.ReportPartial("ok  " + p + "\n")
	}
	return toolloop.TextResult(fmt.Sprintf("%d packages passed", len(packages))), nil
}

// script is what a model might answer, turn by turn.
func script() toolloop.Model {
	return looptest.Script(
		withUsage(looptest.Calls(
			looptest.Call("call_1", "read_changelog", `{}`),
			looptest.Call("call_2", "run_tests", `{}`),
		), 310, 42),
		withUsage(looptest.Calls(looptest.Call("call_3", "tag_release", `{"version":"v1.2.0"}`)), 420, 25),
		withUsage(looptest.Text("The changelog is ready and all 5 packages pass; the tag_release result above says whether v1.2.0 is out."), 460, 31),
	)
}

func withUsage(r *toolloop.Response, in, out int64) *toolloop.Response {
	r.Usage = toolloop.Usage{InputTokens: in, OutputTokens: out}
	r.Model = "scripted"
	return r
}

func quiet() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))
}
