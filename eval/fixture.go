package eval

import (
	"context"
	"fmt"
	"slices"

	"github.com/toolloop/toolloop"
)

// FixtureTools returns the tools that serve c's fixtures, sorted by name:
// each answers a call with its first result whose Arguments match the
// call's arguments. The runner registers them for each trial; a program
// that builds its loop itself may register them too.
func FixtureTools(c *Case) ([]toolloop.Tool, error) {
	names := make([]string, 0, len(c.Fixtures))
	for name := range c.Fixtures {
		names = append(names, name)
	}
	slices.Sort(names)
	tools := make([]toolloop.Tool, 0, len(names))
	for _, name := range names {
		f := c.Fixtures[name]
		desc := f.Description
		if desc == "" {
			desc = "The " + name + " tool."
		}
		t, err := toolloop.NewSchemaTool(name, desc, f.InputSchema, func(_ context.Context, call *toolloop.Call) (any, error) {
			return f.answer(call)
		})
		if err != nil {
			return nil, fmt.Errorf("eval: case %q: fixture %s: %w", c.ID, name, err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

func (f *Fixture) answer(call *toolloop.Call) (any, error) {
	for _, r := range f.Results {
		if r.Arguments != nil && !MatchJSON(r.Arguments, call.Arguments) {
			continue
		}
		if r.Error != "" {
			kind := r.ErrorKind
			if kind == "" {
				kind = toolloop.KindExecutionFailed
			}
			return nil, &toolloop.ToolError{Kind: kind, Message: r.Error}
		}
		var out []toolloop.Content
		if r.Text != "" || r.JSON == nil {
			out = append(out, toolloop.TextContent(r.Text))
		}
		if r.JSON != nil {
			out = append(out, toolloop.JSONContent(r.JSON))
		}
		return out, nil
	}
	return nil, toolloop.Errorf(toolloop.KindInvalidArgs, "no canned result of %s matches the arguments %s", call.Name, call.Arguments)
}
