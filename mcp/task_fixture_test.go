package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// taskFixtureEnv makes the test binary serve the task fixture's tools on
// stdio instead of running the tests (see taskFixture).
const taskFixtureEnv = "TOOLLOOP_TASK_FIXTURE"

func init() {
	if os.Getenv(taskFixtureEnv) != "stdio" {
		return
	}
	f := newTaskFixture()
	if err := mcp.Serve(context.Background(), f.loop, nil); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// taskFixture is a loop whose registry has a tool that may run in the
// background (job), and tools to look at it.
type taskFixture struct {
	loop *toolloop.AgentLoop
	// canceled counts the jobs that saw their context end; started those
	// that started.
	canceled, started atomic.Int64
}

func newTaskFixture() *taskFixture {
	f := &taskFixture{}
	reg := &toolloop.ToolRegistry{}
	canceled := toolloop.NewTool("canceled", "How many jobs saw their cancellation.", func(context.Context, struct{}) (any, error) {
		return map[string]int64{"canceled": f.canceled.Load(), "started": f.started.Load()}, nil
	})
	echo := toolloop.NewTool("echo", "Echoes its text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (any, error) {
		return "echo: " + in.Text, nil
	})
	die := toolloop.NewTool("die", "Ends the server's process.", func(context.Context, struct{}) (any, error) {
		os.Exit(3)
		return nil, nil
	})
	reg.MustRegister(&jobTool{f: f}, canceled, echo, die)
	f.loop = &toolloop.AgentLoop{Tools: reg, Limits: toolloop.Limits{ReportInterval: -1}}
	return f
}

// jobTool writes a line of output per step, then returns; with wait, it
// writes one line and runs until canceled; with fail, it fails.
type jobTool struct{ f *taskFixture }

func (*jobTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{
		Name:        "job",
		Description: "Writes a line per step; with wait, runs until canceled; with fail, fails.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":100},"wait":{"type":"boolean"},"fail":{"type":"boolean"}},"required":["steps"]}`),
		Background:  true,
	}
}

func (t *jobTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in struct {
		Steps      int
		Wait, Fail bool
	}
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	t.f.started.Add(1)
	if in.Wait {
		call.ReportPartial("line 1\n")
		<-ctx.Done()
		t.f.canceled.Add(1)
		return nil, ctx.Err()
	}
	for i := 1; i <= in.Steps; i++ {
		call.ReportPartial(fmt.Sprintf("line %d\n", i))
		time.Sleep(150 * time.Millisecond)
	}
	if in.Fail {
		return nil, errors.New("the job failed")
	}
	return toolloop.TextResult(fmt.Sprintf("done after %d steps", in.Steps)), nil
}

// recorder is a Reporter that keeps what a call reported.
type recorder struct {
	mu       sync.Mutex
	progress []string
	partial  strings.Builder
}

func (r *recorder) ReportProgress(_ *toolloop.Call, p toolloop.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, p.Message)
}

func (r *recorder) ReportPartial(_ *toolloop.Call, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial.WriteString(text)
}

func (r *recorder) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.partial.String()
}

// taskTool returns the source's tool named name (server__name).
func taskTool(t *testing.T, src *mcp.Source, name string) toolloop.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := src.Tools(ctx)
	require.NoError(t, err)
	for _, tl := range tools {
		if tl.Spec().Name == src.Name()+"__"+name {
			return tl
		}
	}
	t.Fatalf("the server has no tool %q", name)
	return nil
}

// runJob runs tl as the background job job_1, with args.
func runJob(ctx context.Context, tl toolloop.Tool, rec *recorder, args string) (*toolloop.ToolResult, error) {
	call := &toolloop.Call{ID: "c1", Name: tl.Spec().Name, Arguments: json.RawMessage(args), Job: "job_1", Reporter: rec, MaxOutputBytes: 1 << 20}
	return tl.Run(ctx, call)
}
