package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

// specTool is a tool that is nothing but its spec. Its Run answers with
// its description, so a test can tell which of several same-named tools a
// registry resolved to.
type specTool struct{ spec toolloop.ToolSpec }

func (t *specTool) Spec() toolloop.ToolSpec { return t.spec }

func (t *specTool) Run(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) {
	return toolloop.TextResult(t.spec.Description), nil
}

// namedTool returns a spec-only tool with a two-field schema.
func namedTool(name, desc string) *specTool {
	return &specTool{spec: toolloop.ToolSpec{
		Name:        name,
		Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}}}`),
	}}
}

func schemaTool(name, schema string) *specTool {
	return &specTool{spec: toolloop.ToolSpec{Name: name, InputSchema: json.RawMessage(schema)}}
}

// specNames lists the names of specs, in order.
func specNames(specs []toolloop.ToolSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// lookupDesc returns the description of the tool name resolves to, or ""
// when it does not resolve.
func lookupDesc(t *testing.T, reg *toolloop.ToolRegistry, name string) string {
	t.Helper()
	tool, ok := reg.Lookup(context.Background(), name)
	if !ok {
		return ""
	}
	return tool.Spec().Description
}

func TestValidToolName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"read_file", true},
		{"a", true},
		{"A-Z_09-x", true},
		{"github__create_issue", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{"read file", false},
		{" read", false},
		{"read.file", false},
		{"read/file", false},
		{"read:file", false},
		{"résumé", false},
		{"工具", false},
		{"tab\tname", false},
		{"line\n", false},
		{"emoji😀", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.name), func(t *testing.T) {
			assert.Equal(t, tt.want, toolloop.ValidToolName(tt.name))

			var reg toolloop.ToolRegistry
			err := reg.Register(namedTool(tt.name, "d"))
			if tt.want {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err, "Register must refuse an invalid name")
				assert.Empty(t, reg.Specs(context.Background()))
			}
		})
	}
}

func TestRegisterRejectsMisuse(t *testing.T) {
	tests := []struct {
		name  string
		tools []toolloop.Tool
	}{
		{"duplicate names", []toolloop.Tool{namedTool("a", "1"), namedTool("b", "2"), namedTool("a", "3")}},
		{"nil tool", []toolloop.Tool{namedTool("a", "1"), nil}},
		{"invalid name", []toolloop.Tool{namedTool("a", "1"), namedTool("no spaces", "2")}},
		{"schema not JSON", []toolloop.Tool{schemaTool("a", `{"type":"object",`)}},
		{"schema an array", []toolloop.Tool{schemaTool("a", `[{"type":"object"}]`)}},
		{"schema a string", []toolloop.Tool{schemaTool("a", `"object"`)}},
		{"schema null", []toolloop.Tool{schemaTool("a", `null`)}},
		{"schema true", []toolloop.Tool{schemaTool("a", `true`)}},
		{"type string", []toolloop.Tool{schemaTool("a", `{"type":"string"}`)}},
		{"type missing", []toolloop.Tool{schemaTool("a", `{"properties":{"x":{"type":"string"}}}`)}},
		{"type object or null", []toolloop.Tool{schemaTool("a", `{"type":["object","null"]}`)}},
		{"unknown type", []toolloop.Tool{schemaTool("a", `{"type":"object","properties":{"a":{"type":"nosuchtype"}}}`)}},
		{"bad keyword value", []toolloop.Tool{schemaTool("a", `{"type":"object","minProperties":"two"}`)}},
		{"bad pattern", []toolloop.Tool{schemaTool("a", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`)}},
		{"dangling local ref", []toolloop.Tool{schemaTool("a", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var reg toolloop.ToolRegistry
			require.NoError(t, reg.Register(namedTool("kept", "already registered")))

			err := reg.Register(tt.tools...)
			require.Error(t, err)
			assert.Equal(t, []string{"kept"}, specNames(reg.Specs(ctx)), "a failed Register adds nothing")
			_, ok := reg.Lookup(ctx, "a")
			assert.False(t, ok)

			// AddSource refuses the same tools, adds nothing, and leaves the
			// source's name free.
			err = reg.AddSource(ctx, toolloop.NewSource("src", toolloop.SourceMCP, tt.tools...))
			require.Error(t, err)
			assert.Equal(t, []string{"kept"}, specNames(reg.Specs(ctx)))
			require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("src", toolloop.SourceMCP, namedTool("ok", "fixed"))))
			assert.Equal(t, "fixed", lookupDesc(t, &reg, "ok"))
		})
	}
}

func TestRegisterTwiceInLocalSource(t *testing.T) {
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.Register(namedTool("a", "first")))
	require.Error(t, reg.Register(namedTool("a", "second")))
	assert.Equal(t, "first", lookupDesc(t, &reg, "a"))
	assert.Panics(t, func() { reg.MustRegister(namedTool("a", "third")) })
	assert.Equal(t, "first", lookupDesc(t, &reg, "a"))
}

func TestSchemaAcceptedForms(t *testing.T) {
	tests := []struct {
		name   string
		schema string
	}{
		{"type array of object", `{"type":["object"]}`},
		{"local ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`},
		{"known draft", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"}}}`},
		{"2020-12 draft", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reg toolloop.ToolRegistry
			assert.NoError(t, reg.Register(schemaTool("a", tt.schema)))
		})
	}
}

// A schema may not make the host read a file or fetch a URL through $ref
// or $schema: registration fails, and nothing is read.
func TestSchemaRefusesRemoteDocuments(t *testing.T) {
	// A real file holding a valid schema: if the registry read it, the
	// schema would compile.
	file := filepath.Join(t.TempDir(), "string.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"type":"string"}`), 0o600))
	fileURL := "file://" + filepath.ToSlash(file)

	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()

	tests := []struct {
		name   string
		schema string
	}{
		{"file ref", `{"type":"object","properties":{"a":{"$ref":"` + fileURL + `"}}}`},
		{"bare path ref", `{"type":"object","properties":{"a":{"$ref":"` + filepath.ToSlash(file) + `"}}}`},
		{"relative ref", `{"type":"object","properties":{"a":{"$ref":"string.json"}}}`},
		{"http ref", `{"type":"object","properties":{"a":{"$ref":"` + srv.URL + `/string.json"}}}`},
		{"http metaschema", `{"$schema":"` + srv.URL + `/meta.json","type":"object"}`},
		{"file metaschema", `{"$schema":"` + fileURL + `","type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reg toolloop.ToolRegistry
			err := reg.Register(schemaTool("a", tt.schema))
			assert.Error(t, err)
			assert.Empty(t, reg.Specs(context.Background()))
		})
	}
	assert.Zero(t, hits.Load(), "the registry fetched a schema over HTTP")
}

func TestEmptySchemaDefaultsToEmptyObject(t *testing.T) {
	for _, raw := range []json.RawMessage{nil, {}} {
		var reg toolloop.ToolRegistry
		require.NoError(t, reg.Register(&specTool{spec: toolloop.ToolSpec{Name: "noargs", InputSchema: raw}}))
		specs := reg.Specs(context.Background())
		require.Len(t, specs, 1)
		assert.JSONEq(t, `{"type":"object","properties":{}}`, string(specs[0].InputSchema))
	}
}

func TestAddSourceErrors(t *testing.T) {
	ctx := context.Background()
	var reg toolloop.ToolRegistry

	assert.Error(t, reg.AddSource(ctx, nil))

	assert.Error(t, reg.AddSource(ctx, toolloop.NewSource("odd", toolloop.SourceKind("remote"), namedTool("a", "1"))),
		"unknown source kind")

	boom := errors.New("server unreachable")
	err := reg.AddSource(ctx, &listSource{name: "down", kind: toolloop.SourceMCP, err: boom})
	require.Error(t, err)
	assert.ErrorIs(t, err, boom)

	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("srv", toolloop.SourceMCP, namedTool("a", "first"))))
	err = reg.AddSource(ctx, toolloop.NewSource("srv", toolloop.SourcePlugin, namedTool("b", "second")))
	assert.Error(t, err, "a source name is unique within a registry, whatever the kind")
	assert.Equal(t, []string{"a"}, specNames(reg.Specs(ctx)))
	assert.Equal(t, "first", lookupDesc(t, &reg, "a"))
}

func TestResolutionOrder(t *testing.T) {
	ctx := context.Background()
	reg := toolloop.ToolRegistry{AllowShadowing: true}
	// Added in the reverse of resolution order.
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("m1", toolloop.SourceMCP,
		namedTool("x", "mcp m1"), namedTool("y", "mcp m1"), namedTool("only_mcp", "mcp m1"))))
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("m2", toolloop.SourceMCP,
		namedTool("y", "mcp m2"), namedTool("z", "mcp m2"))))
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("p1", toolloop.SourcePlugin,
		namedTool("x", "plugin p1"), namedTool("z", "plugin p1"))))
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("b1", toolloop.SourceBuiltin,
		namedTool("x", "builtin b1"))))

	tests := []struct{ name, want string }{
		{"x", "builtin b1"},    // builtin beats plugin and mcp, though added last
		{"z", "plugin p1"},     // plugin beats mcp, though added later
		{"y", "mcp m1"},        // same kind: the source added first wins
		{"only_mcp", "mcp m1"}, // no competition
		{"nope", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, lookupDesc(t, &reg, tt.name), "tool %s", tt.name)
	}

	assert.ElementsMatch(t, []toolloop.Shadowing{
		{Name: "x", Winner: "builtin:b1", Loser: "plugin:p1"},
		{Name: "x", Winner: "builtin:b1", Loser: "mcp:m1"},
		{Name: "y", Winner: "mcp:m1", Loser: "mcp:m2"},
		{Name: "z", Winner: "plugin:p1", Loser: "mcp:m2"},
	}, reg.Shadowed())

	// Each name appears once in the specs, as its winner.
	specs := reg.Specs(ctx)
	assert.Equal(t, []string{"only_mcp", "x", "y", "z"}, specNames(specs))
	for _, s := range specs {
		assert.Equal(t, lookupDesc(t, &reg, s.Name), s.Description)
	}
}

// Registered tools are of their own kind, local, which resolves before
// every other kind.
func TestRegisterIsLocal(t *testing.T) {
	ctx := context.Background()
	reg := toolloop.ToolRegistry{AllowShadowing: true}
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("b", toolloop.SourceBuiltin, namedTool("x", "builtin"))))
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("p", toolloop.SourcePlugin, namedTool("x", "plugin"))))
	require.NoError(t, reg.Register(namedTool("x", "local")))
	assert.Equal(t, "local", lookupDesc(t, &reg, "x"))
	assert.ElementsMatch(t, []toolloop.Shadowing{
		{Name: "x", Winner: "local:" + toolloop.LocalSource, Loser: "builtin:b"},
		{Name: "x", Winner: "local:" + toolloop.LocalSource, Loser: "plugin:p"},
	}, reg.Shadowed())

	// A source of kind local resolves with Register's tools, after them.
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("mine", toolloop.SourceLocal, namedTool("x", "mine"), namedTool("y", "mine"))))
	assert.Equal(t, "local", lookupDesc(t, &reg, "x"))
	assert.Equal(t, "mine", lookupDesc(t, &reg, "y"))
}

// Without AllowShadowing a tool name belongs to one source: Register and
// AddSource refuse a taken name, add nothing, and say what to do.
func TestTakenToolNameIsRefused(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		first func(*toolloop.ToolRegistry) error
		then  func(*toolloop.ToolRegistry) error
	}{
		{"register over a builtin source",
			func(r *toolloop.ToolRegistry) error {
				return r.AddSource(ctx, toolloop.NewSource("workspace", toolloop.SourceBuiltin, namedTool("read_file", "builtin")))
			},
			func(r *toolloop.ToolRegistry) error {
				return r.Register(namedTool("ok", "new"), namedTool("read_file", "mine"))
			}},
		{"builtin source over registered",
			func(r *toolloop.ToolRegistry) error { return r.Register(namedTool("read_file", "mine")) },
			func(r *toolloop.ToolRegistry) error {
				return r.AddSource(ctx, toolloop.NewSource("workspace", toolloop.SourceBuiltin, namedTool("ok", "new"), namedTool("read_file", "builtin")))
			}},
		{"plugin over mcp",
			func(r *toolloop.ToolRegistry) error {
				return r.AddSource(ctx, toolloop.NewSource("srv", toolloop.SourceMCP, namedTool("read_file", "mcp")))
			},
			func(r *toolloop.ToolRegistry) error {
				return r.AddSource(ctx, toolloop.NewSource("p", toolloop.SourcePlugin, namedTool("ok", "new"), namedTool("read_file", "plugin")))
			}},
		{"twice in the local source",
			func(r *toolloop.ToolRegistry) error { return r.Register(namedTool("read_file", "mine")) },
			func(r *toolloop.ToolRegistry) error {
				return r.Register(namedTool("ok", "new"), namedTool("read_file", "again"))
			}},
		{"twice in one source",
			func(r *toolloop.ToolRegistry) error { return r.Register(namedTool("read_file", "mine")) },
			func(r *toolloop.ToolRegistry) error {
				return r.AddSource(ctx, toolloop.NewSource("p", toolloop.SourcePlugin, namedTool("ok", "new"), namedTool("ok", "again")))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reg toolloop.ToolRegistry
			require.NoError(t, tt.first(&reg))
			before := lookupDesc(t, &reg, "read_file")
			err := tt.then(&reg)
			require.ErrorIs(t, err, toolloop.ErrToolNameTaken)
			assert.Equal(t, before, lookupDesc(t, &reg, "read_file"), "the first tool keeps its name")
			assert.Empty(t, lookupDesc(t, &reg, "ok"), "nothing of the refused call was added")
			assert.Empty(t, reg.Shadowed())
		})
	}
}

// A name conflict that appears at run time, when a source's list
// changes, cannot be refused: it resolves by kind, is logged as a
// warning, and is listed by Shadowed.
func TestTakenToolNameAtRefreshShadows(t *testing.T) {
	ctx := context.Background()
	logs := &levelRecorder{}
	reg := toolloop.ToolRegistry{Logger: slog.New(logs)}
	src := &listSource{name: "srv", kind: toolloop.SourceMCP}
	require.NoError(t, reg.AddSource(ctx, src))
	require.NoError(t, reg.Register(namedTool("g", "local")))
	src.set(nil, namedTool("g", "mcp"))
	require.NoError(t, reg.Refresh(ctx))
	assert.Equal(t, "local", lookupDesc(t, &reg, "g"))
	assert.Equal(t, []toolloop.Shadowing{{Name: "g", Winner: "local:local", Loser: "mcp:srv"}}, reg.Shadowed())
	assert.Equal(t, []slog.Level{slog.LevelWarn}, logs.levels())
}

// levelRecorder is a slog.Handler that records the levels of the records
// it handles.
type levelRecorder struct {
	mu  sync.Mutex
	got []slog.Level
}

func (h *levelRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *levelRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r.Level)
	return nil
}
func (h *levelRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *levelRecorder) WithGroup(string) slog.Handler      { return h }
func (h *levelRecorder) levels() []slog.Level {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// A user source that happens to be called "local" must not lose its tools
// when Register later adds tools to the registry's own local source.
func TestRegisterKeepsUserSourceNamedLocal(t *testing.T) {
	ctx := context.Background()
	var reg toolloop.ToolRegistry
	require.Error(t, reg.AddSource(ctx, toolloop.NewSource(toolloop.LocalSource, toolloop.SourceMCP, namedTool("remote_tool", "from mcp"))),
		"the name Register uses is reserved")
	require.NoError(t, reg.Register(namedTool("mine", "registered")))
	assert.Equal(t, "registered", lookupDesc(t, &reg, "mine"))
}

func TestSpecsSortedByName(t *testing.T) {
	ctx := context.Background()
	var reg toolloop.ToolRegistry
	assert.Empty(t, reg.Specs(ctx), "the zero registry is empty and usable")
	require.NoError(t, reg.Register(namedTool("zeta", ""), namedTool("alpha", ""), namedTool("Mid", "")))
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("m", toolloop.SourceMCP, namedTool("beta_2", ""), namedTool("beta-1", ""), namedTool("_x", ""))))
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("p", toolloop.SourcePlugin, namedTool("a0", ""))))

	got := specNames(reg.Specs(ctx))
	assert.True(t, slices.IsSorted(got), "specs not sorted: %v", got)
	assert.Equal(t, []string{"Mid", "_x", "a0", "alpha", "beta-1", "beta_2", "zeta"}, got)
	// Stable from call to call.
	assert.Equal(t, got, specNames(reg.Specs(ctx)))
}

// listSource is a Source whose list can change, and which reports changes
// through Notifier.
type listSource struct {
	name string
	kind toolloop.SourceKind

	mu       sync.Mutex
	tools    []toolloop.Tool
	err      error
	changed  func()
	notified int
	lists    int
}

func (s *listSource) Name() string              { return s.name }
func (s *listSource) Kind() toolloop.SourceKind { return s.kind }

func (s *listSource) Tools(context.Context) ([]toolloop.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.err != nil {
		return nil, s.err
	}
	return slices.Clone(s.tools), nil
}

func (s *listSource) Notify(changed func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = changed
	s.notified++
}

// set replaces the list (or sets a listing error) and reports the change.
func (s *listSource) set(err error, tools ...toolloop.Tool) {
	s.mu.Lock()
	s.tools, s.err = tools, err
	changed := s.changed
	s.mu.Unlock()
	changed()
}

func TestNotifierRefresh(t *testing.T) {
	ctx := context.Background()
	src := &listSource{name: "srv", kind: toolloop.SourceMCP, tools: []toolloop.Tool{namedTool("a", "v1"), namedTool("b", "v1")}}
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(ctx, src))
	require.Equal(t, 1, src.notified, "Notify is called once, when the source is added")
	assert.Equal(t, []string{"a", "b"}, specNames(reg.Specs(ctx)))
	assert.NoError(t, reg.Refresh(ctx), "nothing changed")

	t.Run("new list seen by next Lookup", func(t *testing.T) {
		src.set(nil, namedTool("a", "v2"), namedTool("c", "v2"))
		assert.Equal(t, "v2", lookupDesc(t, &reg, "a"))
		assert.Equal(t, "v2", lookupDesc(t, &reg, "c"))
		assert.Equal(t, "", lookupDesc(t, &reg, "b"), "a removed tool no longer resolves")
		assert.Equal(t, []string{"a", "c"}, specNames(reg.Specs(ctx)))
	})

	t.Run("new list seen by next Specs", func(t *testing.T) {
		src.set(nil, namedTool("d", "v3"))
		assert.Equal(t, []string{"d"}, specNames(reg.Specs(ctx)))
		assert.Equal(t, "v3", lookupDesc(t, &reg, "d"))
	})

	t.Run("failing listing keeps old tools", func(t *testing.T) {
		boom := errors.New("server gone")
		src.set(boom)
		err := reg.Refresh(ctx)
		require.Error(t, err)
		assert.ErrorIs(t, err, boom)
		assert.Equal(t, []string{"d"}, specNames(reg.Specs(ctx)))
		assert.Equal(t, "v3", lookupDesc(t, &reg, "d"))
	})

	t.Run("failing Lookup refresh keeps old tools", func(t *testing.T) {
		src.set(errors.New("still gone"))
		assert.Equal(t, "v3", lookupDesc(t, &reg, "d"))
		assert.Equal(t, []string{"d"}, specNames(reg.Specs(ctx)))
	})

	t.Run("invalid new list keeps old tools", func(t *testing.T) {
		src.set(nil, namedTool("e", "v4"), namedTool("bad name", "v4"))
		assert.Error(t, reg.Refresh(ctx))
		assert.Equal(t, []string{"d"}, specNames(reg.Specs(ctx)))
		src.set(nil, namedTool("e", "v5"), schemaTool("f", `{"type":"array"}`))
		assert.Error(t, reg.Refresh(ctx))
		assert.Equal(t, "", lookupDesc(t, &reg, "e"))
	})

	t.Run("recovers", func(t *testing.T) {
		src.set(nil, namedTool("e", "v6"))
		assert.NoError(t, reg.Refresh(ctx))
		assert.Equal(t, []string{"e"}, specNames(reg.Specs(ctx)))
	})

	t.Run("shadowing follows the new list", func(t *testing.T) {
		require.NoError(t, reg.Register(namedTool("g", "local")))
		assert.Empty(t, reg.Shadowed())
		src.set(nil, namedTool("e", "v7"), namedTool("g", "v7"))
		assert.Equal(t, "local", lookupDesc(t, &reg, "g"))
		assert.Equal(t, []toolloop.Shadowing{{Name: "g", Winner: "local:local", Loser: "mcp:srv"}}, reg.Shadowed())
		src.set(nil, namedTool("e", "v8"))
		assert.Equal(t, "v8", lookupDesc(t, &reg, "e"))
		assert.Empty(t, reg.Shadowed())
	})
}

// Lookups, Specs, Suggest, Shadowed, Refresh and change notifications from
// many goroutines at once. Run with -race.
func TestRegistryConcurrent(t *testing.T) {
	ctx := context.Background()
	src := &listSource{name: "srv", kind: toolloop.SourceMCP, tools: []toolloop.Tool{namedTool("stable", "s"), namedTool("v0", "")}}
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.Register(namedTool("local_tool", "l")))
	require.NoError(t, reg.AddSource(ctx, src))

	const workers, iters = 4, 200
	var wg sync.WaitGroup
	var failures atomic.Int32
	for w := range workers {
		wg.Add(3)
		go func() { // readers
			defer wg.Done()
			for range iters {
				if _, ok := reg.Lookup(ctx, "stable"); !ok {
					failures.Add(1)
				}
				if _, ok := reg.Lookup(ctx, "local_tool"); !ok {
					failures.Add(1)
				}
				names := specNames(reg.Specs(ctx))
				if !slices.IsSorted(names) || !slices.Contains(names, "stable") {
					failures.Add(1)
				}
				_ = reg.Suggest("stabel")
				_ = reg.Shadowed()
			}
		}()
		go func() { // the source changes its list
			defer wg.Done()
			for i := range iters {
				src.set(nil, namedTool("stable", "s"), namedTool(fmt.Sprintf("v%d_%d", w, i), ""), namedTool("local_tool", "shadowed"))
			}
		}()
		go func() { // explicit refreshes
			defer wg.Done()
			for range iters {
				if err := reg.Refresh(ctx); err != nil {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, failures.Load())
	// Once the changes stop, the registry settles on the last list.
	src.set(nil, namedTool("stable", "s"), namedTool("final", ""))
	assert.Equal(t, []string{"final", "local_tool", "stable"}, specNames(reg.Specs(ctx)))
}

func TestSuggest(t *testing.T) {
	var reg toolloop.ToolRegistry
	assert.Empty(t, reg.Suggest("read_file"), "empty registry")
	require.NoError(t, reg.Register(
		namedTool("read_file", ""), namedTool("write_file", ""), namedTool("list_dir", ""), namedTool("search", ""),
	))
	require.NoError(t, reg.AddSource(context.Background(), toolloop.NewSource("github", toolloop.SourceMCP,
		namedTool("github__create_issue", ""), namedTool("github__list_issues", ""))))

	tests := []struct {
		query string
		first string // the closest suggestion; "" means none
	}{
		{"read_fil", "read_file"},
		{"raed_file", "read_file"},
		{"Read_File", "read_file"},
		{"readfile", "read_file"},
		{"write_files", "write_file"},
		{"create_issue", "github__create_issue"}, // an MCP tool without its server prefix
		{"list_issues", "github__list_issues"},
		{"github_create_issue", "github__create_issue"},
		{"serach", "search"},
		{"weather", ""},
		{"x", ""},
		{"deploy_to_production", ""},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := reg.Suggest(tt.query)
			assert.LessOrEqual(t, len(got), 3)
			if tt.first == "" {
				assert.Empty(t, got)
				return
			}
			require.NotEmpty(t, got)
			assert.Equal(t, tt.first, got[0], "suggestions: %v", got)
		})
	}
}
