package toolloop

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClosestNames(t *testing.T) {
	names := []string{"github__create_issue", "github__list_issues", "list_dir", "read_file", "read_files", "search", "write_file"}
	tests := []struct {
		query string
		n     int
		want  []string
	}{
		{"read_file", 3, []string{"read_file", "read_files"}}, // exact first, then by distance
		{"read_fil", 3, []string{"read_file", "read_files"}},
		{"write_fil", 3, []string{"write_file"}},
		{"raed_file", 1, []string{"read_file"}},
		{"READ_FILE", 2, []string{"read_file", "read_files"}},
		{"create_issue", 3, []string{"github__create_issue"}},
		{"list_issues", 3, []string{"github__list_issues"}},
		{"file", 3, []string{"read_file", "read_files", "write_file"}}, // contained in: ties keep input order
		{"searchable", 3, []string{"search"}},                          // contains a name
		{"weather", 3, []string{}},
		{"read_file_contents_now", 3, []string{"read_file"}},     // contains a name
		{"list", 3, []string{"github__list_issues", "list_dir"}}, // contained in, far in edits
		{"ab", 3, []string{}},
		{"", 3, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			assert.Equal(t, tt.want, closestNames(tt.query, names, tt.n))
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"abc", "abd", 1},
		{"abc", "acb", 2},
		{"kitten", "sitting", 3},
		{"read_file", "raed_file", 2},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, editDistance(tt.a, tt.b), "%q %q", tt.a, tt.b)
		assert.Equal(t, tt.want, editDistance(tt.b, tt.a), "%q %q", tt.b, tt.a)
		for k := range tt.want + 2 {
			want := min(tt.want, k+1)
			assert.Equal(t, want, boundedEditDistance(tt.a, tt.b, k), "%q %q within %d", tt.a, tt.b, k)
			assert.Equal(t, want, boundedEditDistance(tt.b, tt.a, k), "%q %q within %d", tt.b, tt.a, k)
		}
	}
}

// The bounded distances, by the band and bit-parallel, are the full one,
// capped at k+1, on random strings over a small alphabet, where distances
// of every size occur, and on strings longer than the band's stack buffer
// and than a machine word.
func TestBoundedEditDistanceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		a, b := randomString(rng, "abc_", 12), randomString(rng, "abc_", 12)
		switch rng.IntN(20) {
		case 0:
			a, b = a+strings.Repeat("x", 90), b+strings.Repeat("x", 95)
		case 1:
			a, b = strings.Repeat("y", 52)+a, strings.Repeat("y", 50)+b // around 64 bytes
		}
		d := editDistance(a, b)
		dist := newDistancer(a)
		for k := range 12 {
			require.Equal(t, min(d, k+1), boundedEditDistance(a, b, k), "%q %q within %d", a, b, k)
			require.Equal(t, min(d, k+1), dist.within(b, k), "%q %q within %d (bit-parallel)", a, b, k)
		}
	}
}

// The index's suggestions are exactly those of measuring every name, on
// random sets of names and queries made to land near them, far from them,
// inside them and around them.
func TestClosestNamesMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "abcdeio_-0XY"
	var queries, found int
	for range 300 {
		names := make([]string, 1+rng.IntN(60))
		for i := range names {
			names[i] = randomString(rng, alphabet, 1+rng.IntN(18))
		}
		names = append(names, names[0]) // a duplicate keeps its place too
		ix := newNameIndex(names)
		for range 40 {
			q := randomQuery(rng, names, alphabet)
			for _, n := range []int{1, 3, len(names)} {
				require.Equal(t, closestNamesExhaustive(q, names, n), ix.closest(q, n), "query %q among %q", q, names)
			}
			queries++
			if len(ix.closest(q, 1)) > 0 {
				found++
			}
		}
	}
	// The queries are not all misses, nor all hits.
	assert.Greater(t, found, queries/4)
	assert.Less(t, found, queries)
}

// At the registry's scale, with names like an MCP server's.
func TestClosestNamesMatchesExhaustiveLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"get", "list", "create", "update", "delete", "issue", "file", "user", "read", "write", "search", "page", "github", "slack", "db"}
	names := make([]string, 3000)
	for i := range names {
		var parts []string
		for range 1 + rng.IntN(4) {
			parts = append(parts, words[rng.IntN(len(words))])
		}
		names[i] = strings.Join(parts, "_")
		if rng.IntN(3) == 0 {
			names[i] = words[rng.IntN(len(words))] + "__" + names[i]
		}
	}
	ix := newNameIndex(names)
	found := 0
	for range 300 {
		q := randomQuery(rng, names, "abcdefghilrstu_")
		got := ix.closest(q, 3)
		require.Equal(t, closestNamesExhaustive(q, names, 3), got, "query %q", q)
		if len(got) > 0 {
			found++
		}
	}
	assert.Greater(t, found, 100)
}

func randomString(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// randomQuery returns a name with a few slips, a piece of one, a name
// inside more text, a changed case, or random text.
func randomQuery(rng *rand.Rand, names []string, alphabet string) string {
	name := names[rng.IntN(len(names))]
	switch rng.IntN(6) {
	case 0:
		b := []byte(name)
		for range rng.IntN(4) {
			switch i := rng.IntN(len(b) + 1); rng.IntN(3) {
			case 0:
				b = slices.Insert(b, i, alphabet[rng.IntN(len(alphabet))])
			case 1:
				if i < len(b) {
					b = slices.Delete(b, i, i+1)
				}
			default:
				if i < len(b) {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				}
			}
		}
		return string(b)
	case 1:
		i := rng.IntN(len(name))
		return name[i : i+rng.IntN(len(name)-i+1)]
	case 2:
		return randomString(rng, alphabet, rng.IntN(3)) + name + randomString(rng, alphabet, rng.IntN(3))
	case 3:
		return strings.ToUpper(name)
	case 4:
		return "é" + name
	}
	return randomString(rng, alphabet, rng.IntN(25))
}

// closestNamesExhaustive is closestNames by the definition: the edit
// distance to every name.
func closestNamesExhaustive(name string, names []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	q := strings.ToLower(name)
	limit := max(2, len(q)/3)
	var out []scored
	for _, cand := range names {
		c := strings.ToLower(cand)
		d := editDistance(q, c)
		switch {
		case d <= limit:
		case len(q) >= 3 && (strings.Contains(c, q) || strings.Contains(q, c)):
			d = limit + 1
		default:
			continue
		}
		out = append(out, scored{cand, d})
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Compare(a.d, b.d) })
	res := make([]string, 0, min(n, len(out)))
	for i := 0; i < len(out) && i < n; i++ {
		res = append(res, out[i].name)
	}
	return res
}

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
