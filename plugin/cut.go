package plugin

import "github.com/toolloop/toolloop"

// cutResult fits the text and JSON blocks of r into budget bytes in all,
// as the host's loop would once the result arrived (with
// [toolloop.TruncateContent]), so that no more crosses to the host than
// the host keeps. r itself is left as the tool returned it; the result is
// marked Truncated and records the size the tool produced.
func cutResult(r *toolloop.ToolResult, budget int) *toolloop.ToolResult {
	content, cut := toolloop.TruncateContent(r.Content, budget)
	if !cut {
		return r
	}
	out := *r
	out.Content = content
	out.Meta.Truncated = true
	out.Meta.Bytes = max(out.Meta.Bytes, contentBytes(r.Content)) // the loop keeps the larger size
	return &out
}

// contentBytes is the size of the blocks a budget applies to.
func contentBytes(cs []toolloop.Content) int {
	n := 0
	for _, c := range cs {
		n += len(c.Text) + len(c.JSON)
	}
	return n
}
