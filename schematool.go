package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// SchemaTool is a [Tool] built by [NewSchemaTool] from an explicit JSON
// Schema and a function that reads the arguments itself. Set its exported
// fields before registering it; the registry reads the spec once.
type SchemaTool struct {
	// Annotations, Timeout and Exclusive go into the tool's [ToolSpec].
	Annotations Annotations
	Timeout     time.Duration
	Exclusive   bool

	name, description string
	schema            json.RawMessage
	fn                func(context.Context, *Call) (any, error)
}

// NewSchemaTool builds a tool from an input schema written out, rather
// than inferred from a Go type as [NewTool] does: for a schema that comes
// from a file or another system, or that a struct cannot express.
//
// The schema must be a JSON Schema of an object that compiles without
// loading other documents, as for any tool; nil means an object with no
// constraints. NewSchemaTool checks it, and the name, at once and
// returns an error saying what is wrong; the registry checks them again
// when the tool is registered. Like any tool, fn is called only with
// arguments that satisfy the schema: read them with [Call.Bind] or from
// call.Arguments. Its result becomes the tool's output as for NewTool: a
// string is text, a *ToolResult, Content or []Content is used as is, nil
// is an empty success, and any other value is marshalled to a JSON block.
// An error fails the call (see [Tool]).
func NewSchemaTool(name, description string, schema json.RawMessage, fn func(ctx context.Context, call *Call) (any, error)) (*SchemaTool, error) {
	if fn == nil {
		return nil, errors.New("toolloop: NewSchemaTool " + name + ": nil function")
	}
	if !ValidToolName(name) {
		return nil, fmt.Errorf("toolloop: NewSchemaTool: invalid tool name %q: want 1 to 64 of a-z, A-Z, 0-9, _ and -", name)
	}
	if len(schema) == 0 {
		schema = emptyObjectSchema
	}
	if _, err := compileSchema(name, schema); err != nil {
		return nil, fmt.Errorf("toolloop: NewSchemaTool %s: %w", name, err)
	}
	return &SchemaTool{name: name, description: description, schema: slices.Clone(schema), fn: fn}, nil
}

// Spec implements [Tool].
func (t *SchemaTool) Spec() ToolSpec {
	return ToolSpec{
		Name:        t.name,
		Description: t.description,
		InputSchema: t.schema,
		Annotations: t.Annotations,
		Timeout:     t.Timeout,
		Exclusive:   t.Exclusive,
	}
}

// Run implements [Tool]: it calls the function and turns its output into
// a result.
func (t *SchemaTool) Run(ctx context.Context, call *Call) (*ToolResult, error) {
	out, err := t.fn(ctx, call)
	if err != nil {
		return nil, err
	}
	res := new(ToolResult)
	if err := setResult(res, out, call.MaxOutputBytes); err != nil {
		return nil, err
	}
	return res, nil
}
