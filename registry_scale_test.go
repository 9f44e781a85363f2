package toolloop_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

// countingTool counts the calls to its Spec.
type countingTool struct {
	specTool
	specs atomic.Int32
}

func (t *countingTool) Spec() toolloop.ToolSpec {
	t.specs.Add(1)
	return t.specTool.Spec()
}

// Register looks only at the tools it is given: registering tools one at
// a time reads each tool's spec once, not once per later Register.
func TestRegisterLooksOnlyAtNewTools(t *testing.T) {
	ctx := context.Background()
	var reg toolloop.ToolRegistry
	tools := make([]*countingTool, 300)
	for i := range tools {
		tools[i] = &countingTool{specTool: *namedTool(fmt.Sprintf("tool_%03d", i), "")}
		require.NoError(t, reg.Register(tools[i]))
	}
	for i, tool := range tools {
		assert.EqualValues(t, 1, tool.specs.Load(), "tool %d", i)
	}
	assert.Len(t, reg.Specs(ctx), len(tools))
	assert.Equal(t, []string{"tool_123"}, reg.Suggest("tool_123")[:1])
	for i, tool := range tools {
		assert.EqualValues(t, 1, tool.specs.Load(), "tool %d", i)
	}
}

// Lookups, Specs and Suggest from other goroutines while tools are
// registered one at a time see every tool from the moment its Register
// returns, and a consistent registry throughout. Run with -race.
func TestLookupDuringRegister(t *testing.T) {
	ctx := context.Background()
	const n = 400
	var reg toolloop.ToolRegistry
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("srv__tool_%03d", i)
	}
	var registered atomic.Int32 // how many Registers have returned
	var failures atomic.Int32
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 3 {
		wg.Go(func() {
			for {
				k := int(registered.Load())
				for _, name := range names[:k] {
					if _, ok := reg.Lookup(ctx, name); !ok {
						failures.Add(1)
					}
				}
				specs := specNames(reg.Specs(ctx))
				if len(specs) < k || !slices.IsSorted(specs) {
					failures.Add(1)
				}
				if k > 0 {
					if got := reg.Suggest(names[k-1] + "x"); len(got) == 0 || got[0] != names[k-1] {
						failures.Add(1)
					}
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	for i, name := range names {
		require.NoError(t, reg.Register(namedTool(name, "")))
		registered.Store(int32(i + 1))
	}
	close(done)
	wg.Wait()
	assert.Zero(t, failures.Load())
	assert.Equal(t, names, specNames(reg.Specs(ctx)))
}

// With AllowShadowing, tools registered one at a time take over names
// other sources had: they resolve, Shadowed lists each loser once, by
// name, and each new loss is logged once.
func TestRegisterOneAtATimeShadows(t *testing.T) {
	ctx := context.Background()
	logs := &levelRecorder{}
	reg := toolloop.ToolRegistry{AllowShadowing: true, Logger: slog.New(logs)}
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("m", toolloop.SourceMCP, namedTool("x", "mcp"), namedTool("y", "mcp"))))
	require.NoError(t, reg.AddSource(ctx, toolloop.NewSource("b", toolloop.SourceBuiltin, namedTool("x", "builtin"))))
	require.Len(t, logs.levels(), 1, "builtin x hides mcp x")

	require.NoError(t, reg.Register(namedTool("y", "local")))
	require.NoError(t, reg.Register(namedTool("x", "local")))
	require.NoError(t, reg.Register(namedTool("z", "local")))
	assert.Equal(t, "local", lookupDesc(t, &reg, "x"))
	assert.Equal(t, "local", lookupDesc(t, &reg, "y"))
	assert.Equal(t, []toolloop.Shadowing{
		{Name: "x", Winner: "local:local", Loser: "builtin:b"},
		{Name: "x", Winner: "local:local", Loser: "mcp:m"},
		{Name: "y", Winner: "local:local", Loser: "mcp:m"},
	}, reg.Shadowed())
	assert.Equal(t, []slog.Level{slog.LevelInfo, slog.LevelInfo, slog.LevelInfo, slog.LevelInfo}, logs.levels())
	assert.Equal(t, []string{"x", "y", "z"}, specNames(reg.Specs(ctx)))
}
