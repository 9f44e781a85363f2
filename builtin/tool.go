package builtin

import (
	"context"
	"time"

	"github.com/toolloop/toolloop"
)

// tool is one workspace tool: a fixed spec and a function that runs it
// with decoded arguments.
type tool[In any] struct {
	spec toolloop.ToolSpec
	run  func(ctx context.Context, call *toolloop.Call, in *In) (*toolloop.ToolResult, error)
}

// toolDef is what a tool constructor fills in.
type toolDef struct {
	name        string
	description string
	annotations toolloop.Annotations
	exclusive   bool
	timeout     time.Duration
	// background lets the model run the tool as a background job (see
	// toolloop.ToolSpec.Background).
	background bool
}

// newTool builds a tool whose input schema is inferred from In, the same
// way toolloop.NewTool does, so the schema and the decoding never disagree.
func newTool[In any](d toolDef, run func(ctx context.Context, call *toolloop.Call, in *In) (*toolloop.ToolResult, error)) *tool[In] {
	schema, err := toolloop.SchemaFor[In]()
	if err != nil {
		panic("builtin: tool " + d.name + ": " + err.Error())
	}
	return &tool[In]{
		spec: toolloop.ToolSpec{
			Name:        d.name,
			Description: d.description,
			InputSchema: schema,
			Annotations: d.annotations,
			Timeout:     d.timeout,
			Exclusive:   d.exclusive,
			Background:  d.background,
		},
		run: run,
	}
}

// Spec implements [toolloop.Tool].
func (t *tool[In]) Spec() toolloop.ToolSpec { return t.spec }

// Run implements [toolloop.Tool]: it decodes the arguments and runs the
// tool.
func (t *tool[In]) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in In
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t.run(ctx, call, &in)
}

// Annotations of the kinds of tool.
var (
	readOnly = toolloop.Annotations{ReadOnly: true, Idempotent: true}
	writes   = toolloop.Annotations{Destructive: true, JudgmentRequired: true}
)

func titled(a toolloop.Annotations, title string) toolloop.Annotations {
	a.Title = title
	return a
}

// invalid returns an invalid_args error for the model.
func invalid(format string, args ...any) error {
	return toolloop.Errorf(toolloop.KindInvalidArgs, format, args...)
}

// denied returns a denied error for the model.
func denied(format string, args ...any) error {
	return toolloop.Errorf(toolloop.KindDenied, format, args...)
}

// failed returns an execution_failed error for the model.
func failed(format string, args ...any) error {
	return toolloop.Errorf(toolloop.KindExecutionFailed, format, args...)
}
