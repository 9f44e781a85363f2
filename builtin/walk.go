package builtin

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// skipDirs are never walked into, whatever .gitignore says.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// maxIgnoreBytes caps how much of one .gitignore file is read.
const maxIgnoreBytes = 1 << 20

// errStop ends a walk early without an error.
var errStop = errors.New("stop walking")

// walker walks a directory tree inside the workspace through os.Root
// handles: each directory is opened from its parent's handle, so a path
// swapped for a symbolic link mid-walk cannot lead it out, and symbolic
// links are reported but never followed. It skips .git, node_modules and
// what .gitignore files ignore, and the workspace's hidden names.
type walker struct {
	root *os.Root
	// hidden reports the names left out without being counted
	// ([Options.Hidden]); nil hides nothing.
	hidden func(name string) bool
	// skipped counts the entries left out because they are ignored.
	skipped int
}

// walker returns a walker of the workspace.
func (w *workspace) walker() *walker { return &walker{root: w.root, hidden: w.isHidden} }

// visit is called for every entry of a walk. dir is the entry's parent
// directory, open for the duration of the call; rel is the entry's
// slash-separated path relative to the workspace; depth is 1 for the
// entries of the starting directory. Returning fs.SkipDir for a directory
// skips its contents; errStop ends the walk.
type visit func(dir *os.Root, rel string, d fs.DirEntry, depth int) error

// walk visits the tree under start (a clean workspace-relative directory)
// depth first, in lexical order, down to maxDepth (0 for no limit).
func (w *walker) walk(ctx context.Context, start string, maxDepth int, fn visit) error {
	dir := w.root
	if start != "." {
		d, err := w.root.OpenRoot(start)
		if err != nil {
			return fsError(display(start), err)
		}
		defer d.Close()
		dir = d
	}
	err := w.walkDir(ctx, dir, display(start), w.ancestorPatterns(start), 1, maxDepth, fn)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

func (w *walker) walkDir(ctx context.Context, dir *os.Root, rel string, pats []gitignore.Pattern, depth, maxDepth int, fn visit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, pats, m := w.readDir(dir, rel, pats)
	for _, d := range entries {
		name := d.Name()
		child := joinRel(rel, name)
		if w.ignored(m, child, d) {
			continue
		}
		err := fn(dir, child, d, depth)
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if !d.IsDir() || (maxDepth > 0 && depth >= maxDepth) {
			continue
		}
		sub, err := dir.OpenRoot(name)
		if err != nil {
			continue // removed, replaced or unreadable since it was listed
		}
		err = w.walkDir(ctx, sub, child, pats, depth+1, maxDepth, fn)
		_ = sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readDir lists dir sorted by name, and adds the patterns of its
// .gitignore to pats, returning the matcher for its entries.
func (w *walker) readDir(dir *os.Root, rel string, pats []gitignore.Pattern) ([]fs.DirEntry, []gitignore.Pattern, gitignore.Matcher) {
	entries, _ := listDir(dir)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, d := range entries {
		if d.Name() == ".gitignore" && d.Type().IsRegular() {
			pats = append(slices.Clip(pats), readPatterns(dir, ".gitignore", domain(rel))...)
			break
		}
	}
	var m gitignore.Matcher
	if len(pats) > 0 {
		m = gitignore.NewMatcher(pats)
	}
	return entries, pats, m
}

// ignored reports whether an entry is left out of walks, and counts it
// unless it is hidden.
func (w *walker) ignored(m gitignore.Matcher, rel string, d fs.DirEntry) bool {
	if w.hidden != nil && w.hidden(d.Name()) {
		return true
	}
	if (d.IsDir() && skipDirs[d.Name()]) || (m != nil && m.Match(strings.Split(rel, "/"), d.IsDir())) {
		w.skipped++
		return true
	}
	return false
}

// ancestorPatterns returns the ignore patterns that apply to the entries
// of start from the folders above it: .git/info/exclude and the .gitignore
// of the root and of every folder down to start's parent. start's own
// .gitignore is read when it is walked.
func (w *walker) ancestorPatterns(start string) []gitignore.Pattern {
	pats := readPatterns(w.root, ".git/info/exclude", nil)
	if start == "." {
		return pats
	}
	parts := strings.Split(display(start), "/")
	for i := range parts {
		dir := strings.Join(parts[:i], "/")
		if dir == "" {
			dir = "."
		}
		pats = append(pats, readPatterns(w.root, joinRel(dir, ".gitignore"), parts[:i])...)
	}
	return pats
}

// readPatterns reads an ignore file; a missing or unreadable file has no
// patterns.
func readPatterns(dir *os.Root, name string, dom []string) []gitignore.Pattern {
	f, err := dir.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(io.LimitReader(f, maxIgnoreBytes))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, dom))
	}
	return ps
}

// domain returns the path components of a workspace-relative directory,
// the scope of the patterns of its .gitignore.
func domain(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}
