package plugin

import (
	"slices"

	"github.com/toolloop/toolloop"
)

// cutResult fits the text and JSON blocks of r into budget bytes in all,
// as the host's loop would once the result arrived, so that no more
// crosses to the host than the host keeps: blocks smaller than their fair
// share keep everything and the rest share what is left, each cut with
// [toolloop.TruncateText], which keeps a head and a tail around a marker
// saying how many bytes were cut. A JSON block that must be cut is cut as
// text, and becomes a text block. Images, audio and other data are not
// counted, as the loop does not count them. r itself is left as the tool
// returned it; the result is marked Truncated.
func cutResult(r *toolloop.ToolResult, budget int) *toolloop.ToolResult {
	sizes := make([]int, len(r.Content))
	total := 0
	for i, c := range r.Content {
		sizes[i] = len(c.Text) + len(c.JSON)
		total += sizes[i]
	}
	if total <= budget {
		return r
	}
	shares := fairShares(sizes, budget)
	out := *r
	out.Content = slices.Clone(r.Content)
	for i := range out.Content {
		c := &out.Content[i]
		if sizes[i] <= shares[i] {
			continue
		}
		if len(c.JSON) > 0 {
			c.Text = toolloop.TruncateText(string(c.JSON), shares[i])
			c.JSON, c.Type = nil, toolloop.ContentText
			continue
		}
		c.Text = toolloop.TruncateText(c.Text, shares[i])
	}
	out.Meta.Truncated = true
	out.Meta.Bytes = max(out.Meta.Bytes, total) // the loop keeps the larger size
	return &out
}

// fairShares splits budget over blocks of the given sizes: small blocks
// get all they need, and the large ones share the rest equally.
func fairShares(sizes []int, budget int) []int {
	shares := make([]int, len(sizes))
	idx := make([]int, 0, len(sizes))
	for i, s := range sizes {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return sizes[a] - sizes[b] })
	left := max(budget, 0)
	for k, i := range idx {
		shares[i] = min(sizes[i], left/(len(idx)-k))
		left -= shares[i]
	}
	return shares
}
