package toolloop

import (
	"cmp"
	"slices"
	"strings"
)

// closestNames returns up to n of names that look like a slip for name:
// within a small edit distance, or containing it, or contained in it.
// Closest come first; ties keep alphabetical order.
func closestNames(name string, names []string, n int) []string {
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
		case len(q) >= 3 && strings.HasSuffix(c, "__"+q):
			d = limit + 1 // an MCP tool's name without its server prefix
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
