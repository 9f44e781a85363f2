package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// tool is one of a server's tools, as the loop sees it.
type tool struct {
	src    *Source
	remote string // the server's name for it
	spec   toolloop.ToolSpec
	// resource marks the resource tools, which the source answers itself
	// (see ServerConfig.ResourceTools).
	resource bool
}

// newTool wraps a listed tool under the given model-facing name. It fails
// if the loop could not register the tool, so that one bad tool does not
// keep the server's other tools out of the registry.
//
// taskSupport is how the tool runs as an MCP task on the server (see
// runTask): "optional" or "required" make it a tool the model may run in
// the background.
func (s *Source) newTool(name string, t *sdk.Tool, taskSupport string) (*tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %v", err)
	}
	if string(schema) == "null" {
		schema = nil
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" {
		desc = "The " + t.Name + " tool of the " + s.name + " MCP server."
	}
	tl := &tool{src: s, remote: t.Name, spec: toolloop.ToolSpec{
		Name:         name,
		Description:  desc,
		InputSchema:  schema,
		OutputSchema: s.outputSchema(t),
		Annotations:  annotations(t),
		Timeout:      s.cfg.Timeout,
		Background:   taskSupport != "",
	}}
	tl.resource = s.isResourceTool(t)
	// The registry compiles schemas with rules of its own (an object
	// schema, no remote references); try it on a scratch registry.
	var probe toolloop.ToolRegistry
	if err := probe.Register(tl); err != nil {
		return nil, err
	}
	return tl, nil
}

// annotations maps the server's hints, with the protocol's defaults for
// hints it leaves out: a tool is assumed destructive (unless read-only) and
// open-world. Hints from a server you do not trust are claims, not facts.
func annotations(t *sdk.Tool) toolloop.Annotations {
	a := toolloop.Annotations{Title: t.Title, Destructive: true, OpenWorld: true}
	if x := t.Annotations; x != nil {
		if a.Title == "" {
			a.Title = x.Title
		}
		a.ReadOnly = x.ReadOnlyHint
		a.Idempotent = x.IdempotentHint
		if x.DestructiveHint != nil {
			a.Destructive = *x.DestructiveHint
		}
		if x.OpenWorldHint != nil {
			a.OpenWorld = *x.OpenWorldHint
		}
	}
	if a.ReadOnly {
		a.Destructive = false
	}
	return a
}

// Spec implements [toolloop.Tool].
func (t *tool) Spec() toolloop.ToolSpec { return t.spec }

// Run implements [toolloop.Tool]: it calls the tool on the server, under
// its original name. The server's progress notifications for the call are
// reported through call.ReportProgress. A cancelled or timed-out ctx sends
// the server the protocol's cancellation notice.
//
// A result whose structured content does not match the tool's output
// schema is an error result of kind execution_failed naming the mismatch,
// as the protocol asks of clients; a result with isError is not checked,
// nor is structured content cut to the output budget.
//
// A call with call.Job set, of a tool the server runs as an MCP task, and
// every call of a tool that requires tasks, runs as a task (see the
// package documentation's "Tasks").
func (t *tool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	if t.resource {
		return t.src.runResourceTool(ctx, t.remote, call)
	}
	return t.src.call(ctx, t.remote, call)
}
