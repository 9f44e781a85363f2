package toolloop

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tableEntry(name, version string) *entry {
	return &entry{spec: ToolSpec{Name: name, Description: version}}
}

// checkTable requires t to hold exactly want.
func checkTable(t *testing.T, tab nameTable, want map[string]*entry, hash func(string) uint64) {
	t.Helper()
	require.Equal(t, len(want), tab.len())
	for name, e := range want {
		require.Same(t, e, tab.getHash(hash(name), name), "name %q", name)
	}
	got := tab.appendTo(nil)
	require.Len(t, got, len(want))
	for _, e := range got {
		require.Same(t, want[e.spec.Name], e)
	}
}

// The table agrees with a map through random puts, new names and
// replacements, including names whose hashes are equal in all their bits
// or in their first ones; and every table it published before is
// unchanged.
func TestNameTable(t *testing.T) {
	hashes := map[string]func(string) uint64{
		"real": hashName,
		// Few distinct hashes: lists of equal hashes past the last level.
		"colliding": func(s string) uint64 { return hashName(s) % 7 },
		// Hashes equal in their low bits: deep paths before they part.
		"deep": func(s string) uint64 { return hashName(s) &^ (1<<50 - 1) },
	}
	for hname, hash := range hashes {
		t.Run(hname, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			var published []nameTable
			var states []map[string]*entry
			want := map[string]*entry{}
			b := nameTable{}.builder()
			b.hash = hash
			for step := range 3000 {
				name := "tool_" + strconv.Itoa(rng.IntN(1500))
				e := tableEntry(name, strconv.Itoa(step))
				prev := b.put(e)
				assert.Same(t, want[name], prev, "put returns the entry it replaced")
				want[name] = e
				if rng.IntN(50) == 0 { // publish, as Register does after each call
					published = append(published, b.table())
					states = append(states, maps.Clone(want))
				}
			}
			checkTable(t, b.table(), want, hash)
			for i, tab := range published {
				checkTable(t, tab, states[i], hash)
			}
			assert.Nil(t, b.table().getHash(hash("absent"), "absent"))
		})
	}
}

func TestNameTableEmpty(t *testing.T) {
	var tab nameTable
	assert.Nil(t, tab.get("x"))
	assert.Zero(t, tab.len())
	assert.Empty(t, tab.appendTo(nil))
}

// A builder made from a published table never changes it, however many
// puts it makes.
func TestNameTableBuilderLeavesOriginal(t *testing.T) {
	b := nameTable{}.builder()
	for i := range 200 {
		b.put(tableEntry("n"+strconv.Itoa(i), "v1"))
	}
	base := b.table()
	names := func(tab nameTable) []string {
		var out []string
		for _, e := range tab.appendTo(nil) {
			out = append(out, e.spec.Name+"="+e.spec.Description)
		}
		slices.Sort(out)
		return out
	}
	before := names(base)
	for range 2 {
		b2 := base.builder()
		for i := range 400 {
			b2.put(tableEntry("n"+strconv.Itoa(i), "v2"))
		}
		assert.Equal(t, 400, b2.table().len())
		assert.Equal(t, "v2", b2.table().get("n7").spec.Description)
	}
	assert.Equal(t, before, names(base))
	assert.Equal(t, "v1", base.get("n7").spec.Description)
	assert.Nil(t, base.get("n300"))
}
