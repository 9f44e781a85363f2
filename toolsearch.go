package toolloop

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ToolSearchName is the name of the tool search tool the loop offers the
// model when [AgentLoop.Deferred] is set.
const ToolSearchName = "tool_search"

// The tool search tool's limits on results.
const (
	defaultSearchResults = 5
	maxSearchResults     = 20
)

// loadedTools returns the deferred tools the transcript's tool search
// results loaded, or nil if none did.
func loadedTools(msgs []Message) map[string]bool {
	var loaded map[string]bool
	for i := range msgs {
		r := msgs[i].Result
		if r == nil || r.Name != ToolSearchName || r.Status != StatusOK || len(r.Meta.LoadedTools) == 0 {
			continue
		}
		if loaded == nil {
			loaded = make(map[string]bool)
		}
		for _, n := range r.Meta.LoadedTools {
			loaded[n] = true
		}
	}
	return loaded
}

// searchSchema is the tool search tool's input schema, compiled once.
var searchSchema = sync.OnceValues(func() (*entry, error) {
	es, err := compileTools(SourceBuiltin, loopSource, []Tool{&searchTool{}})
	if err != nil {
		return nil, err
	}
	return es[0], nil
})

// loopSource is the source name of the tools the loop itself offers.
const loopSource = "toolloop"

// searchTool is the tool search tool of one run.
type searchTool struct{ rn *runState }

func (*searchTool) Spec() ToolSpec {
	return ToolSpec{
		Name: ToolSearchName,
		Description: "Search the tools that are available but not loaded yet, by what they do. " +
			"Give a few words (a task, a service, an action); the best matches are listed with their " +
			"descriptions and are loaded: from your next turn on you can call them like any other tool. " +
			"Search again with other words if nothing fits.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","minLength":1,"description":"Words describing the tool you need, or its name."},` +
			`"max_results":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to list; 5 if not given."}},` +
			`"required":["query"],"additionalProperties":false}`),
		Annotations: Annotations{Title: "Tool search", ReadOnly: true, Idempotent: true},
	}
}

func (t *searchTool) Run(ctx context.Context, call *Call) (*ToolResult, error) {
	var in struct {
		Query      string `json:"query"`
		MaxResults int    `json:"max_results"`
	}
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	n := in.MaxResults
	if n <= 0 {
		n = defaultSearchResults
	}
	n = min(n, maxSearchResults)
	var tools []ToolInfo
	if reg := t.rn.l.Tools; reg != nil {
		tools = reg.Tools(ctx)
	}
	found := searchTools(tools, t.rn.l.Deferred, in.Query, n)
	if len(found) == 0 {
		return &ToolResult{Content: []Content{TextContent(fmt.Sprintf(
			"No tool matches %q. Search again with other words, or use the tools you have.", in.Query))}}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tool(s) loaded; you can call them from your next turn on:\n", len(found))
	names := make([]string, len(found))
	for i, ti := range found {
		names[i] = ti.Name
		fmt.Fprintf(&b, "- %s: %s\n", ti.Name, summary(ti.Description, 300))
	}
	res := &ToolResult{Content: []Content{TextContent(b.String())}}
	res.Meta.LoadedTools = names
	return res, nil
}

// summary is the first line of s, cut to at most n bytes at a rune
// boundary.
func summary(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// searchTools ranks the deferred tools against query and returns the best
// n. A tool scores for each query word found in its name (most), as a
// whole word of its description, or inside a word of either; the whole
// query naming a tool exactly puts it first.
func searchTools(tools []ToolInfo, deferred ToolSelector, query string, n int) []*ToolInfo {
	words := searchWords(query, nil)
	q := strings.ToLower(strings.TrimSpace(query))
	type hit struct {
		t     *ToolInfo
		score int
	}
	var hits []hit
	var buf []string
	for i := range tools {
		t := &tools[i]
		if deferred == nil || !deferred(t) {
			continue
		}
		score := 0
		name := strings.ToLower(t.Name)
		if name == q {
			score += 1000
		}
		buf = searchWords(t.Name, buf[:0])
		nameWords := len(buf)
		buf = searchWords(t.Description, buf)
		for _, w := range words {
			best := 0
			for j, tw := range buf {
				s := 0
				switch {
				case tw == w && j < nameWords:
					s = 6
				case tw == w:
					s = 3
				case len(w) >= 3 && strings.Contains(tw, w) && j < nameWords:
					s = 3
				case len(w) >= 3 && strings.Contains(tw, w):
					s = 1
				}
				best = max(best, s)
			}
			score += best
		}
		if score > 0 {
			hits = append(hits, hit{t, score})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.t.Name, b.t.Name)
	})
	out := make([]*ToolInfo, 0, min(n, len(hits)))
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.t)
	}
	return out
}

// searchWords appends the lower-case words of s to dst: runs of letters
// and digits, a name's snake_case, kebab-case and camelCase parts apart.
func searchWords(s string, dst []string) []string {
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			dst = append(dst, strings.ToLower(s[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
		switch {
		case !alnum:
			flush(i)
		case start < 0:
			start = i
		case 'A' <= c && c <= 'Z' && 'a' <= s[i-1] && s[i-1] <= 'z':
			flush(i) // camelCase boundary
			start = i
		}
	}
	flush(len(s))
	return dst
}
