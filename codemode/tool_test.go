package codemode

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

type readArgs struct {
	Path string `json:"path" jsonschema:"description=Path relative to the workspace."`
}

func readFile() toolloop.Tool {
	return toolloop.NewTool("read_file", "Read a file.", func(_ context.Context, in readArgs) (any, error) { return "text of " + in.Path, nil })
}

func writeFile() toolloop.Tool {
	return toolloop.NewTool("write_file", "Write a file.", func(context.Context, readArgs) (any, error) { return "ok", nil })
}

// specOf is the spec the registry holds for name.
func specOf(t *testing.T, reg *toolloop.ToolRegistry, name string) toolloop.ToolSpec {
	t.Helper()
	for _, s := range reg.Specs(t.Context()) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no tool %s", name)
	return toolloop.ToolSpec{}
}

func TestSpec(t *testing.T) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(readFile(), writeFile())
	code := New(&reg, nil)
	code.Timeout = 42
	reg.MustRegister(code)

	s := specOf(t, &reg, DefaultName)
	assert.Equal(t, "run_code", s.Name)
	assert.EqualValues(t, 42, s.Timeout)
	assert.JSONEq(t, string(codeSchema), string(s.InputSchema))
	assert.True(t, strings.HasPrefix(s.Description, "Run a JavaScript program"))
	assert.Contains(t, s.Description, "declare const tools: {")
	assert.Contains(t, s.Description, "read_file(args: {")
	assert.Contains(t, s.Description, "/** Path relative to the workspace. */")
	assert.Contains(t, s.Description, "write_file(")
	assert.NotContains(t, s.Description, "run_code(", "the code tool offers itself")
	assert.Equal(t, code.API(t.Context()), s.Description[strings.Index(s.Description, "declare const"):len(s.Description)-len("```\n")])
}

func TestSelectorAndOtherCodeTools(t *testing.T) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(readFile(), writeFile())
	other := New(&reg, nil)
	other.Name = "other_code"
	reg.MustRegister(other)

	ro := New(&reg, toolloop.SelectNames("read_file", "other_code"))
	api := ro.API(t.Context())
	assert.Contains(t, api, "read_file(")
	assert.NotContains(t, api, "write_file(")
	assert.NotContains(t, api, "other_code(", "programs do not nest")
}

// specTool is a tool with a given spec that answers "ok".
type specTool struct{ spec toolloop.ToolSpec }

func (s specTool) Spec() toolloop.ToolSpec { return s.spec }
func (s specTool) Run(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) {
	return toolloop.TextResult("ok"), nil
}

// The code tool is read-only when all its tools are, destructive or open
// to the world when any is, so guards that read annotations see it right.
func TestAnnotationsFollowTheTools(t *testing.T) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(specTool{toolloop.ToolSpec{Name: "look", Annotations: toolloop.Annotations{ReadOnly: true}}})
	a := New(&reg, nil).Spec().Annotations
	assert.True(t, a.ReadOnly)
	assert.False(t, a.Destructive)

	reg.MustRegister(specTool{toolloop.ToolSpec{Name: "rm", Annotations: toolloop.Annotations{Destructive: true, OpenWorld: true}}})
	a = New(&reg, nil).Spec().Annotations
	assert.False(t, a.ReadOnly)
	assert.True(t, a.Destructive)
	assert.True(t, a.OpenWorld)
	assert.False(t, New(&reg, toolloop.SelectNames("look")).Spec().Annotations.Destructive)
}

// dynamicSource is a source whose tools change, like an MCP server's.
type dynamicSource struct {
	mu      sync.Mutex
	tools   []toolloop.Tool
	changed func()
}

func (s *dynamicSource) Name() string              { return "server" }
func (s *dynamicSource) Kind() toolloop.SourceKind { return toolloop.SourceMCP }
func (s *dynamicSource) Notify(changed func())     { s.mu.Lock(); s.changed = changed; s.mu.Unlock() }
func (s *dynamicSource) Tools(context.Context) ([]toolloop.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]toolloop.Tool(nil), s.tools...), nil
}
func (s *dynamicSource) add(t toolloop.Tool) {
	s.mu.Lock()
	s.tools = append(s.tools, t)
	changed := s.changed
	s.mu.Unlock()
	changed()
}

// Added as a source, the code tool's description follows the registry's
// tools: a program run after a change finds the new tool, and the spec
// the registry holds describes it from then on.
func TestSourceFollowsChanges(t *testing.T) {
	ctx := t.Context()
	var reg toolloop.ToolRegistry
	reg.MustRegister(readFile())
	srv := &dynamicSource{}
	require.NoError(t, reg.AddSource(ctx, srv))
	code := New(&reg, nil)
	require.NoError(t, reg.AddSource(ctx, code.Source()))
	assert.NotContains(t, specOf(t, &reg, DefaultName).Description, "write_file(")

	srv.add(writeFile())
	require.NoError(t, reg.Refresh(ctx))
	assert.Contains(t, code.API(ctx), "write_file(", "API reads the registry now")
	assert.Contains(t, code.current(ctx).names, "write_file", "a program sees the new tool at once")
	require.NoError(t, reg.Refresh(ctx))
	assert.Contains(t, specOf(t, &reg, DefaultName).Description, "write_file(", "the registry read the spec again")

	// Nothing changed: no refresh is asked for.
	before := specOf(t, &reg, DefaultName)
	code.current(ctx)
	require.NoError(t, reg.Refresh(ctx))
	assert.Equal(t, before.Description, specOf(t, &reg, DefaultName).Description)
}

// Registered (not as a source), the description is the registry's tools
// when New ran.
func TestRegisteredDescriptionIsFixedAtNew(t *testing.T) {
	var reg toolloop.ToolRegistry
	reg.MustRegister(readFile())
	code := New(&reg, nil)
	reg.MustRegister(writeFile(), code)
	d := specOf(t, &reg, DefaultName).Description
	assert.Contains(t, d, "read_file(")
	assert.NotContains(t, d, "write_file(")
	assert.Contains(t, code.current(t.Context()).names, "write_file", "but programs can call it")
}

func TestRunOutsideALoop(t *testing.T) {
	var reg toolloop.ToolRegistry
	code := New(&reg, nil)
	_, err := code.Run(t.Context(), &toolloop.Call{ID: "c", Name: DefaultName, Arguments: []byte(`{"code":"return 1"}`)})
	var te *toolloop.ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, toolloop.KindExecutionFailed, te.Kind)

	_, err = code.Run(t.Context(), &toolloop.Call{ID: "c", Name: DefaultName, Arguments: []byte(`{"code":"  "}`)})
	require.ErrorAs(t, err, &te)
	assert.Equal(t, toolloop.KindInvalidArgs, te.Kind)
}
