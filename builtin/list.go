package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/toolloop/toolloop"
)

// Limits of list_directory.
const (
	defaultListDepth = 2
	maxListDepth     = 10
	maxListEntries   = 1000
)

type listDirectoryIn struct {
	Path  string `json:"path,omitempty" jsonschema_description:"Directory to list, relative to the workspace root. Default: the workspace root."`
	Depth int    `json:"depth,omitempty" jsonschema:"minimum=1,maximum=10" jsonschema_description:"How many levels to list: 1 lists only the directory's own entries. Default 2."`
}

func (w *workspace) listDirectoryTool() toolloop.Tool {
	desc := fmt.Sprintf(`List the files and folders in a workspace directory, down to a depth (default %d, at most %d).

Prints one entry per line as a path relative to the workspace root: folders end in "/", files show their size, symbolic links show their target (links are not followed). A name that holds a control character (newline, tab, escape...), another unprintable character or bytes that are not UTF-8, or that starts with a double quote or starts or ends with a space, is shown Go-quoted, such as "a\nb.txt": the other tools take a path in that quoted form too. Leaves out .git, node_modules and whatever .gitignore files ignore, and says how many entries it left out. Lists at most %d entries, shallowest first; when there are more it says so, and you can list a subfolder or use a smaller depth. To find files by name pattern use file_search; to search contents use grep_search.`,
		defaultListDepth, maxListDepth, maxListEntries)
	return newTool(toolDef{name: ListDirectory, description: desc, annotations: titled(readOnly, "List directory")}, w.listDirectory)
}

type listEntry struct {
	rel  string
	line string
	dir  bool
}

func (w *workspace) listDirectory(ctx context.Context, _ *toolloop.Call, in *listDirectoryIn) (*toolloop.ToolResult, error) {
	rel, err := w.rel(in.Path, true)
	if err != nil {
		return nil, err
	}
	depth := in.Depth
	if depth <= 0 {
		depth = defaultListDepth
	}
	depth = min(depth, maxListDepth)
	if fi, err := w.root.Stat(rel); err != nil {
		return nil, fsError(display(rel), err)
	} else if !fi.IsDir() {
		return nil, invalid("%s is not a directory; use read_file to read a file", shown(rel))
	}
	wk := w.walker()
	// Breadth first, so that when the listing is cut it still shows every
	// shallow entry: level by level, each level in lexical order.
	var entries []listEntry
	more := false
	level := []string{display(rel)}
	for d := 1; d <= depth && len(level) > 0 && !more; d++ {
		var next []string
		for _, dirRel := range level {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			err := wk.walk(ctx, dirRel, 1, func(dir *os.Root, child string, de fs.DirEntry, _ int) error {
				if len(entries) >= maxListEntries {
					more = true
					return errStop
				}
				e := describe(dir, child, de)
				entries = append(entries, e)
				if e.dir {
					next = append(next, child)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			if more {
				break
			}
		}
		level = next
	}
	slices.SortFunc(entries, func(a, b listEntry) int { return strings.Compare(a.rel, b.rel) })
	var b strings.Builder
	dirs, files := 0, 0
	for _, e := range entries {
		b.WriteString(e.line)
		b.WriteByte('\n')
		if e.dir {
			dirs++
		} else {
			files++
		}
	}
	if len(entries) == 0 {
		b.WriteString("(empty)\n")
	}
	fmt.Fprintf(&b, "[%s, %s", plural(dirs, "folder", "folders"), plural(files, "file", "files"))
	if wk.skipped > 0 {
		fmt.Fprintf(&b, "; %s left out (.git, node_modules or .gitignore)", plural(wk.skipped, "entry", "entries"))
	}
	b.WriteString("]")
	if more {
		fmt.Fprintf(&b, "\n[listing stopped at %d entries; list a subfolder or use a smaller depth to see the rest]", maxListEntries)
	}
	r := toolloop.TextResult(b.String())
	r.Meta.Extra = map[string]any{"entries": len(entries), "truncated": more}
	return r, nil
}

// describe formats one entry, looking at it through its parent's handle.
func describe(dir *os.Root, rel string, de fs.DirEntry) listEntry {
	name := de.Name()
	switch {
	case de.IsDir():
		return listEntry{rel: rel, line: quoteName(rel + "/"), dir: true}
	case de.Type()&fs.ModeSymlink != 0:
		dest, err := dir.Readlink(name)
		if err != nil {
			dest = "?"
		}
		return listEntry{rel: rel, line: quoteName(rel) + " -> " + quoteName(dest)}
	}
	line := quoteName(rel)
	if fi, err := dir.Lstat(name); err == nil && fi.Mode().IsRegular() {
		line += " (" + size(fi.Size()) + ")"
	}
	return listEntry{rel: rel, line: line}
}

// size formats a byte count for people and models.
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
