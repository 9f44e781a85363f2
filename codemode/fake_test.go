package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
)

// fakeCalls answers inner calls from functions by tool name, in place of
// a loop, and records them.
type fakeCalls struct {
	mu    sync.Mutex
	tools map[string]func(ctx context.Context, args json.RawMessage) (*toolloop.ToolResult, error)
	made  []string // "name args", in the order prepared
}

func (f *fakeCalls) prepare(name string, args json.RawMessage) runner {
	f.mu.Lock()
	f.made = append(f.made, name+" "+string(args))
	f.mu.Unlock()
	return fakeRun{f: f, name: name, args: args}
}

func (f *fakeCalls) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.made...)
}

type fakeRun struct {
	f    *fakeCalls
	name string
	args json.RawMessage
}

func (r fakeRun) Run(ctx context.Context) (*toolloop.ToolResult, error) {
	fn := r.f.tools[r.name]
	if fn == nil {
		return toolloop.ErrorResult(toolloop.Errorf(toolloop.KindNotFound, "no tool named %s", r.name)), nil
	}
	return fn(ctx, r.args)
}

// names are the tools the fake offers, sorted.
func (f *fakeCalls) names() []string {
	var ns []string
	for n := range f.tools {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// echo returns its arguments as a JSON block.
func echo(_ context.Context, args json.RawMessage) (*toolloop.ToolResult, error) {
	return &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.JSONContent(args)}}, nil
}

// text returns a text result.
func text(s string) func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
	return func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
		return toolloop.TextResult(s), nil
	}
}

// failing fails with the given kind.
func failing(kind toolloop.ErrorKind, msg string) func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
	return func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
		return toolloop.ErrorResult(toolloop.Errorf(kind, "%s", msg)), nil
	}
}

// slow answers after d, or when ctx ends.
func slow(d time.Duration) func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
	return func(ctx context.Context, args json.RawMessage) (*toolloop.ToolResult, error) {
		select {
		case <-time.After(d):
			return toolloop.TextResult(fmt.Sprintf("slept %s", d)), nil
		case <-ctx.Done():
			return toolloop.ErrorResult(ctx.Err()), nil
		}
	}
}

// runProgram runs code against f with limits l.
func runProgram(ctx context.Context, f *fakeCalls, l Limits, code string) (*outcome, error) {
	p := &program{code: code, tools: f.names(), limits: l.withDefaults(), calls: f, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), seed: seedOf("call_1")}
	return p.run(ctx)
}
