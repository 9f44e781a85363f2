package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolloop/toolloop"
)

// Limits of file_search.
const (
	defaultFindResults = 200
	maxFindResults     = 1000
)

type fileSearchIn struct {
	Pattern    string `json:"pattern" jsonschema:"minLength=1" jsonschema_description:"Glob pattern: * and ? match within a name, ** matches any number of folders, {a,b} matches either, [abc] matches one of the characters. A pattern without / matches file names at any depth; one with / matches paths relative to the searched directory."`
	Path       string `json:"path,omitempty" jsonschema_description:"Directory to search, relative to the workspace root. Default: the whole workspace."`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"minimum=1,maximum=1000" jsonschema_description:"Most paths to return. Default 200."`
}

func (w *workspace) fileSearchTool() toolloop.Tool {
	desc := fmt.Sprintf(`Find files and folders in the workspace whose path matches a glob pattern, such as **/*_test.go, src/**/*.{ts,tsx} or Makefile. Use it to locate files by name; use grep_search to search their contents.

A pattern without / matches names at any depth (*.md finds every Markdown file); a pattern with / matches the whole path relative to the searched directory, where ** matches any number of folders. Returns matching paths relative to the workspace root in tree order, folders ending in "/"; a path with a control character or another unprintable character in it is shown Go-quoted (such as "a\nb.txt"), a form the other tools take too. Leaves out .git, node_modules and what .gitignore files ignore, and does not follow symbolic links. Returns at most max_results paths (default %d, at most %d) and says when there are more: narrow the pattern or the path.`,
		defaultFindResults, maxFindResults)
	return newTool(toolDef{name: FileSearch, description: desc, annotations: titled(readOnly, "Find files")}, w.fileSearch)
}

func (w *workspace) fileSearch(ctx context.Context, _ *toolloop.Call, in *fileSearchIn) (*toolloop.ToolResult, error) {
	rel, err := w.rel(in.Path, true)
	if err != nil {
		return nil, err
	}
	pattern := strings.TrimPrefix(in.Pattern, "./")
	if !doublestar.ValidatePattern(pattern) {
		return nil, invalid("the pattern %q is not a valid glob", in.Pattern)
	}
	limit := in.MaxResults
	if limit <= 0 {
		limit = defaultFindResults
	}
	limit = min(limit, maxFindResults)
	base := display(rel)
	byName := !strings.Contains(pattern, "/")
	start := rel
	if !byName {
		// Walk only below the pattern's literal leading folders.
		if dir, _ := doublestar.SplitPattern(pattern); dir != "." && dir != "" && !strings.ContainsAny(dir, `*?[{\`) {
			s, err := w.rel(path.Join(base, dir), true)
			if err != nil {
				return nil, err
			}
			if _, err := w.root.Lstat(s); err != nil {
				return toolloop.TextResult(fmt.Sprintf("[no paths match %q in %s]", in.Pattern, quoteName(base))), nil
			}
			start = s
		}
	}
	if fi, err := w.root.Stat(start); err != nil {
		return nil, fsError(display(start), err)
	} else if !fi.IsDir() {
		return nil, invalid("%s is not a directory", shown(start))
	}
	var found []string
	more := false
	wk := w.walker()
	err = wk.walk(ctx, start, 0, func(_ *os.Root, child string, d fs.DirEntry, _ int) error {
		name := child
		if byName {
			name = d.Name()
		} else if base != "." {
			name = strings.TrimPrefix(child, base+"/")
		}
		if ok, _ := doublestar.Match(pattern, name); !ok {
			return nil
		}
		if len(found) == limit {
			more = true
			return errStop
		}
		if d.IsDir() {
			child += "/"
		}
		found = append(found, child)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, f := range found {
		b.WriteString(quoteName(f))
		b.WriteByte('\n')
	}
	switch {
	case len(found) == 0:
		fmt.Fprintf(&b, "[no paths match %q in %s", in.Pattern, quoteName(base))
		if wk.skipped > 0 {
			fmt.Fprintf(&b, "; %s left out: .git, node_modules or .gitignore", plural(wk.skipped, "entry", "entries"))
		}
		b.WriteString("]")
	case more:
		fmt.Fprintf(&b, "[showing the first %d matching paths; there are more. Narrow the pattern or the path]", len(found))
	default:
		fmt.Fprintf(&b, "[%s]", plural(len(found), "matching path", "matching paths"))
	}
	r := toolloop.TextResult(b.String())
	r.Meta.Extra = map[string]any{"matches": len(found), "truncated": more}
	return r, nil
}
