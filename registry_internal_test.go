package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cachedSchemas is how many schemas the registry's cache holds.
func cachedSchemas(r *ToolRegistry) int {
	r.schemas.mu.Lock()
	defer r.schemas.mu.Unlock()
	return len(r.schemas.m)
}

func entryOf(t *testing.T, r *ToolRegistry, name string) *entry {
	t.Helper()
	e := r.resolve(context.Background(), name)
	require.NotNil(t, e, "tool %s", name)
	return e
}

// Tools with identical schemas share one compiled schema, white space
// aside, whether registered in one call, one at a time, or by a source;
// a different schema gets its own.
func TestIdenticalSchemasCompiledOnce(t *testing.T) {
	ctx := context.Background()
	const schema = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`
	const spaced = "{ \"type\": \"object\",\n  \"properties\": {\"path\": {\"type\": \"string\"}}, \"required\": [\"path\"] }"
	var reg ToolRegistry
	require.NoError(t, reg.Register(vtTool{name: "a", schema: schema}, vtTool{name: "b", schema: schema}))
	require.NoError(t, reg.Register(vtTool{name: "c", schema: spaced}))
	require.NoError(t, reg.AddSource(ctx, NewSource("srv", SourceMCP, vtTool{name: "d", schema: schema})))
	require.NoError(t, reg.Register(vtTool{name: "other", schema: `{"type":"object","properties":{"path":{"type":"integer"}}}`}))

	a := entryOf(t, &reg, "a")
	for _, name := range []string{"b", "c", "d"} {
		e := entryOf(t, &reg, name)
		assert.Same(t, a.schema, e.schema, "tool %s", name)
		assert.Same(t, a.fast, e.fast, "tool %s", name)
	}
	assert.NotSame(t, a.schema, entryOf(t, &reg, "other").schema)
	assert.Equal(t, 2, cachedSchemas(&reg))
	assert.JSONEq(t, spaced, string(entryOf(t, &reg, "c").spec.InputSchema), "each tool keeps its own schema text")

	// The shared schema still judges each tool's arguments.
	assert.Nil(t, entryOf(t, &reg, "c").validate(json.RawMessage(`{"path":"x"}`)))
	assert.NotNil(t, entryOf(t, &reg, "c").validate(json.RawMessage(`{"path":1}`)))
	assert.NotNil(t, entryOf(t, &reg, "d").validate(json.RawMessage(`{}`)))
}

// The cache holds the schemas of the tools the registry has, no others:
// a failed Register adds none, and a refresh that drops tools drops
// their schemas.
func TestSchemaCacheFollowsTools(t *testing.T) {
	ctx := context.Background()
	schema := func(i int) string {
		return `{"type":"object","properties":{"f` + strconv.Itoa(i) + `":{"type":"string"}}}`
	}
	var reg ToolRegistry
	require.NoError(t, reg.Register(vtTool{name: "kept", schema: schema(0)}))
	assert.Equal(t, 1, cachedSchemas(&reg))

	err := reg.Register(vtTool{name: "new", schema: schema(1)}, vtTool{name: "kept", schema: schema(2)})
	require.ErrorIs(t, err, ErrToolNameTaken)
	assert.Equal(t, 1, cachedSchemas(&reg), "a failed Register caches nothing")

	src := &fixedNotifier{name: "srv"}
	src.tools = []Tool{vtTool{name: "r1", schema: schema(3)}, vtTool{name: "r2", schema: schema(4)}, vtTool{name: "r3", schema: schema(0)}}
	require.NoError(t, reg.AddSource(ctx, src))
	assert.Equal(t, 3, cachedSchemas(&reg))

	src.set(vtTool{name: "r1", schema: schema(3)})
	require.NoError(t, reg.Refresh(ctx))
	assert.Equal(t, 2, cachedSchemas(&reg), "the schema of r2 is gone; r3's is kept's too")
	assert.Same(t, entryOf(t, &reg, "r1").schema, reg.schemas.get(entryOf(t, &reg, "r1").key).schema)

	src.set()
	require.NoError(t, reg.Refresh(ctx))
	assert.Equal(t, 1, cachedSchemas(&reg))
}

// fixedNotifier is a source whose list a test sets.
type fixedNotifier struct {
	name    string
	tools   []Tool
	changed func()
}

func (s *fixedNotifier) Name() string                          { return s.name }
func (s *fixedNotifier) Kind() SourceKind                      { return SourceMCP }
func (s *fixedNotifier) Tools(context.Context) ([]Tool, error) { return s.tools, nil }
func (s *fixedNotifier) Notify(changed func())                 { s.changed = changed }
func (s *fixedNotifier) set(tools ...Tool) {
	s.tools = tools
	s.changed()
}

// A schema compiler that panics, on one schema or on many compiled at
// once, fails the registration; the program goes on.
func TestSchemaCompilerPanicIsAnError(t *testing.T) {
	saved := compileSchemaFunc
	t.Cleanup(func() { compileSchemaFunc = saved })
	compileSchemaFunc = func(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
		if name == "boom" {
			panic("compiler bug")
		}
		return saved(name, raw)
	}
	for _, n := range []int{1, 4 * compileJobsPerWorker} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var tools []Tool
			for i := range n - 1 {
				tools = append(tools, vtTool{name: "t" + strconv.Itoa(i), schema: `{"type":"object","title":"` + strconv.Itoa(i) + `"}`})
			}
			tools = append(tools, vtTool{name: "boom", schema: `{"type":"object","title":"boom"}`})
			var reg ToolRegistry
			err := reg.Register(tools...)
			require.Error(t, err)
			assert.Empty(t, reg.Specs(context.Background()))
		})
	}
}

// The error of a failed registration is the one the first faulty tool,
// in order, gives, whether its name or its schema is at fault.
func TestCompileToolsFirstErrorInOrder(t *testing.T) {
	bad := vtTool{name: "bad_schema", schema: `{"type":"string"}`}
	ok := func(name string) Tool { return vtTool{name: name, schema: `{"type":"object"}`} }
	tests := []struct {
		name  string
		tools []Tool
		taken bool // ErrToolNameTaken, else a schema error
	}{
		{"schema first", []Tool{ok("a"), bad, ok("a")}, false},
		{"name first", []Tool{ok("a"), ok("a"), bad}, true},
		{"taken before", []Tool{ok("old"), bad}, true},
		{"invalid name after", []Tool{bad, ok("no spaces")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reg ToolRegistry
			require.NoError(t, reg.Register(ok("old")))
			err := reg.Register(tt.tools...)
			require.Error(t, err)
			assert.Equal(t, tt.taken, errors.Is(err, ErrToolNameTaken), "%v", err)
		})
	}
}

// Register's shadowing, worked out a tool at a time, is what a full
// rebuild works out.
func TestRegisterShadowingMatchesRebuild(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 10))
	names := []string{"a", "b", "c", "d", "e", "f"}
	pick := func() []Tool {
		var tools []Tool
		for _, n := range names {
			if rng.IntN(2) == 0 {
				tools = append(tools, vtTool{name: n, schema: `{"type":"object"}`})
			}
		}
		return tools
	}
	for range 50 {
		reg := ToolRegistry{AllowShadowing: true}
		require.NoError(t, reg.AddSource(ctx, NewSource("m", SourceMCP, pick()...)))
		require.NoError(t, reg.AddSource(ctx, NewSource("b", SourceBuiltin, pick()...)))
		require.NoError(t, reg.AddSource(ctx, NewSource("p", SourcePlugin, pick()...)))
		require.NoError(t, reg.AddSource(ctx, NewSource("l", SourceLocal, pick()...)))
		for _, tool := range pick() {
			require.NoError(t, reg.Register(tool))
		}
		incremental := reg.Shadowed()
		reg.mu.Lock()
		reg.rebuild()
		reg.mu.Unlock()
		require.Equal(t, reg.Shadowed(), incremental)
	}
}

// ValidToolName is the pattern ^[a-zA-Z0-9_-]{1,64}$.
func TestValidToolNameIsPattern(t *testing.T) {
	re := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	rng := rand.New(rand.NewPCG(11, 12))
	const alphabet = "aZ09_-.é \n\x00"
	for range 20000 {
		b := make([]byte, rng.IntN(70))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(3) > 0 {
				b[i] = "abcXYZ789_-"[rng.IntN(11)]
			}
		}
		require.Equal(t, re.Match(b), ValidToolName(string(b)), "%q", b)
	}
}
