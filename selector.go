package toolloop

// ToolInfo is a registered tool as the loop's tool filters see it: its
// spec and where it comes from.
type ToolInfo struct {
	ToolSpec
	// Source and SourceName say where the tool comes from.
	Source     SourceKind `json:"source"`
	SourceName string     `json:"source_name,omitempty"`
}

// ToolSelector picks tools by what they are, for [AgentLoop.Deferred] and
// for building a [ToolFilter]. Use [SelectNames], [SelectSources],
// [SelectAnnotations], or any function.
type ToolSelector func(t *ToolInfo) bool

// ToolFilter decides, before each model turn, which tools the model is
// sent: it reports whether t goes out on the turn st describes. It sees
// every registered tool once per turn, so it must be cheap; it runs on the
// loop's goroutine and must not keep st.
type ToolFilter func(st *TurnState, t *ToolInfo) bool

// SelectNames selects the tools of the given names.
func SelectNames(names ...string) ToolSelector {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return func(t *ToolInfo) bool { return set[t.Name] }
}

// SelectSources selects the tools of the given sources: a name matches a
// source's name (an MCP server's, a plugin's, [LocalSource]) or a kind
// ("mcp", "plugin", "builtin", "local").
func SelectSources(names ...string) ToolSelector {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return func(t *ToolInfo) bool { return set[t.SourceName] || set[string(t.Source)] }
}

// SelectAnnotations selects the tools whose annotations satisfy f, such
// as the read-only ones.
func SelectAnnotations(f func(Annotations) bool) ToolSelector {
	return func(t *ToolInfo) bool { return f(t.Annotations) }
}

// Or selects the tools s or o selects.
func (s ToolSelector) Or(o ToolSelector) ToolSelector {
	return func(t *ToolInfo) bool { return s(t) || o(t) }
}

// Not selects the tools s does not.
func (s ToolSelector) Not() ToolSelector {
	return func(t *ToolInfo) bool { return !s(t) }
}

// Only is the tool filter that sends the tools s selects on every turn.
func Only(s ToolSelector) ToolFilter {
	return func(_ *TurnState, t *ToolInfo) bool { return s(t) }
}
