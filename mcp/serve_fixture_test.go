package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// serveStdioEnv makes the test binary serve the fixture's tools on stdio
// instead of running the tests, for the TypeScript client to spawn. It is
// read in init, before TestMain, so that main_test.go need not know it.
const serveStdioEnv = "TOOLLOOP_SERVE_FIXTURE"

func init() {
	if os.Getenv(serveStdioEnv) != "stdio" {
		return
	}
	f := newServeFixture()
	if err := mcp.Serve(context.Background(), f.loop, nil); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// serveFixture is a loop whose registry has one tool for each behaviour
// the server must get right.
type serveFixture struct {
	loop *toolloop.AgentLoop
	// canceled counts calls of slow that saw their context end.
	canceled atomic.Int64
	// ran records the paths danger was run with.
	mu  sync.Mutex
	ran []string
}

func (f *serveFixture) dangerRuns() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ran...)
}

func newServeFixture() *serveFixture {
	f := &serveFixture{}
	reg := &toolloop.ToolRegistry{}

	type echoIn struct {
		Text string `json:"text"`
	}
	echo := toolloop.NewTool("echo", "Echoes its text.", func(_ context.Context, in echoIn) (any, error) {
		return "echo: " + in.Text, nil
	})
	echo.Annotations = toolloop.Annotations{Title: "Echo", ReadOnly: true, Idempotent: true}

	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := toolloop.NewTool("add", "Adds two integers.", func(_ context.Context, in addIn) (any, error) {
		return map[string]int{"sum": in.A + in.B}, nil
	})

	fail := toolloop.NewTool("fail", "Always fails.", func(context.Context, struct{}) (any, error) {
		return nil, errors.New("the disk is on fire")
	})

	type dangerIn struct {
		Path string `json:"path"`
	}
	danger := toolloop.NewTool("danger", "Deletes a path; needs approval.", func(_ context.Context, in dangerIn) (any, error) {
		f.mu.Lock()
		f.ran = append(f.ran, in.Path)
		f.mu.Unlock()
		return "deleted " + in.Path, nil
	})
	danger.Annotations = toolloop.Annotations{Destructive: true, OpenWorld: true}

	cancellations := toolloop.NewTool("cancellations", "How many calls of slow saw their cancellation.", func(context.Context, struct{}) (any, error) {
		return map[string]int64{"canceled": f.canceled.Load()}, nil
	})

	// grow adds a tool to the registry, which clients are told of.
	grow := toolloop.NewTool("grow", "Adds the tool grown.", func(context.Context, struct{}) (any, error) {
		err := reg.Register(toolloop.NewTool("grown", "Added by grow.", func(context.Context, struct{}) (any, error) { return "grown", nil }))
		if err != nil && !errors.Is(err, toolloop.ErrToolNameTaken) {
			return nil, err
		}
		return "grew", nil
	})

	reg.MustRegister(echo, add, fail, danger, cancellations, grow, &slowTool{f: f})
	f.loop = &toolloop.AgentLoop{
		Tools: reg,
		Guard: toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if c.Name == "danger" {
				return toolloop.Verdict{Decision: toolloop.Ask, Reason: "it deletes files", Rule: "ask-danger"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		}),
		Limits: toolloop.Limits{ReportInterval: -1}, // every progress report is sent
	}
	return f
}

// slowTool reports steps of progress, then either finishes or, with wait,
// waits for its context to end and counts that.
type slowTool struct{ f *serveFixture }

func (*slowTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{
		Name:        "slow",
		Description: "Reports progress for a number of steps; with wait, runs until cancelled.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":100},"wait":{"type":"boolean"}},"required":["steps"]}`),
	}
}

func (t *slowTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in struct {
		Steps int  `json:"steps"`
		Wait  bool `json:"wait"`
	}
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	for i := 1; i <= in.Steps; i++ {
		call.ReportProgress(toolloop.Progress{Done: float64(i), Total: float64(in.Steps), Message: "step"})
		if !in.Wait {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if !in.Wait {
		// The TypeScript client drops the progress notifications that it
		// reads in the same chunk as the reply (it handles notifications
		// a microtask later, and forgets the call's progress handler when
		// the reply comes): leave a gap between them.
		time.Sleep(100 * time.Millisecond)
	}
	if in.Wait {
		<-ctx.Done()
		t.f.canceled.Add(1)
		return nil, ctx.Err()
	}
	return toolloop.TextResult("done"), nil
}
