package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/toolloop/toolloop"
)

type applyPatchIn struct {
	Patch string `json:"patch" jsonschema:"minLength=1" jsonschema_description:"The patch: either the *** Begin Patch ... *** End Patch form, or a unified diff (as made by diff -u or git diff) with ---/+++ file headers and @@ hunks. Paths are relative to the workspace root."`
}

func (w *workspace) applyPatchTool() toolloop.Tool {
	desc := `Apply a patch to one or more text files in the workspace, all or none. Two forms are accepted.

1. The *** Begin Patch form:

*** Begin Patch
*** Add File: src/new.py
+every line of the new file, after a +
*** Update File: src/app.py
*** Move to: src/main.py
@@ class Greeter
@@     def greet(self):
         name = self.name
-        print("Hi")
+        print("Hello", name)
*** Delete File: src/old.py
*** End Patch

Add File creates a file that must not exist. Update File changes one that exists, and Move to (optional) renames it to a path that must not exist. Each hunk starts with @@: the text after @@, if any, is a line to find first, such as a class or function header, and several @@ lines in a row narrow the search. Hunk lines start with a space (context), - (removed) or + (added); give about 3 lines of context around each change. Hunks apply in file order, each after the one before. Context and removed lines must match the file; where they do not match exactly, a match ignoring trailing whitespace, then leading and trailing whitespace, then Unicode dashes, quotes and spaces versus ASCII ones is used, and the result says so. A hunk of only + lines with no @@ text adds them at the end of the file. "*** End of File" after a hunk means it ends the file. New lines get the file's line endings (CRLF or LF).

2. A unified diff, as diff -u or git diff prints: for each file a "--- old" and "+++ new" header (/dev/null for a created or deleted file; a/ and b/ prefixes are fine) followed by @@ -start,count +start,count @@ hunks whose context and removed lines must match the file exactly. The counts in each @@ header must equal the lines in its hunk. A hunk whose lines are not at the line number its header gives is applied where they match nearest to it.

If any hunk of any file does not apply, nothing is changed and the error names the file and the hunk. Binary files are not supported. Prefer edit_file for a single small change.`
	return newTool(toolDef{name: ApplyPatch, description: desc, annotations: titled(writes, "Apply patch"), exclusive: true}, w.applyPatch)
}

// patched is the state of one file while a patch is worked out in memory.
type patched struct {
	change *fileChange
	data   []byte
	exists bool
	// verbs says what the patch did to the file, for the summary.
	verbs []string
}

func (w *workspace) applyPatch(ctx context.Context, _ *toolloop.Call, in *applyPatchIn) (*toolloop.ToolResult, error) {
	if env, ok, err := findEnvelope(in.Patch); ok {
		if err != nil {
			return nil, err
		}
		return w.applyEnvelope(ctx, env)
	}
	files, _, err := gitdiff.Parse(strings.NewReader(in.Patch))
	if err != nil {
		return nil, invalid("the patch could not be parsed: %v; nothing was changed", err)
	}
	if len(files) == 0 {
		return nil, invalid("the patch has no file changes: expected \"--- path\" and \"+++ path\" headers followed by @@ hunks")
	}
	traditional := !strings.Contains(in.Patch, "diff --git ")
	set := newPatchSet(w)
	var notes []string
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		oldName, newName := w.patchNames(f, traditional)
		label := newName
		if f.IsDelete {
			label = oldName
		}
		if f.IsBinary {
			return nil, invalid("file %d of the patch (%s) is a binary patch, which is not supported; nothing was changed", i+1, label)
		}
		var src, dst *patched
		if !f.IsNew {
			if src, err = set.load(oldName, true); err != nil {
				return nil, patchErr(i, label, err)
			}
			if !src.exists {
				return nil, invalid("file %d of the patch: %s does not exist; nothing was changed", i+1, oldName)
			}
		}
		if f.IsDelete {
			dst = src
		} else if dst, err = set.load(newName, true); err != nil {
			return nil, patchErr(i, label, err)
		}
		if (f.IsNew || f.IsRename || f.IsCopy) && dst.exists && dst != src {
			return nil, invalid("file %d of the patch creates %s, which already exists; nothing was changed", i+1, newName)
		}
		var base []byte
		if src != nil {
			base = src.data
		}
		out, moved, err := applyFile(base, f)
		if err != nil {
			return nil, invalid("%s: %v; nothing was changed", label, err)
		}
		notes = append(notes, prefixAll(label+": ", moved)...)
		if int64(len(out)) > w.opts.MaxFileBytes {
			return nil, invalid("%s would be %d bytes after the patch, more than the %d-byte limit; nothing was changed", label, len(out), w.opts.MaxFileBytes)
		}
		switch {
		case f.IsDelete:
			if len(out) > 0 {
				return nil, invalid("the patch deletes %s but does not remove all of its lines; nothing was changed", oldName)
			}
			dst.exists, dst.data = false, nil
			dst.verbs = append(dst.verbs, "deleted")
		case f.IsRename:
			src.exists, src.data = false, nil
			src.verbs = append(src.verbs, "renamed to "+newName)
			dst.exists, dst.data = true, out
			dst.change.perm = src.change.perm
			dst.verbs = append(dst.verbs, "renamed from "+oldName)
		default:
			verb := "modified"
			if f.IsNew || f.IsCopy {
				verb = "created"
			}
			dst.exists, dst.data = true, out
			dst.verbs = append(dst.verbs, verb)
		}
		if f.NewMode != 0 && dst.exists {
			dst.change.perm = f.NewMode.Perm()
		}
	}
	return set.commit(notes)
}

// patchSet is the files a patch touches, worked out in memory in the
// patch's order and written all or none by commit. Both patch forms use
// it, so confinement, links, size limits and modes behave the same.
type patchSet struct {
	w     *workspace
	state map[string]*patched
	order []string
}

func newPatchSet(w *workspace) *patchSet {
	return &patchSet{w: w, state: map[string]*patched{}}
}

// load returns the state of the file the patch names, reading it the
// first time. A binary file is refused when textOnly; a patch may still
// delete one.
func (s *patchSet) load(name string, textOnly bool) (*patched, error) {
	w := s.w
	rel, err := w.rel(name, false)
	if err != nil {
		return nil, err
	}
	if p := s.state[rel]; p != nil {
		return p, nil
	}
	c, err := w.target(rel)
	if err != nil {
		return nil, err
	}
	p := &patched{change: c, exists: c.existed}
	if c.existed {
		data, _, err := w.readText(rel)
		var be *binaryError
		switch {
		case errors.As(err, &be) && textOnly:
			return nil, invalid("%s", be.Error())
		case err != nil && !errors.As(err, &be):
			return nil, err
		}
		p.data, c.old = data, data
	}
	s.state[rel] = p
	s.order = append(s.order, rel)
	return p, nil
}

// commit writes every change all or none and reports them, with notes
// about how the hunks applied.
func (s *patchSet) commit(notes []string) (*toolloop.ToolResult, error) {
	var changes []*fileChange
	var summary []string
	for _, rel := range s.order {
		p := s.state[rel]
		c := p.change
		switch {
		case p.exists:
			c.data = p.data
		case c.existed:
			c.remove = true
		default:
			continue // created and deleted again
		}
		changes = append(changes, c)
		summary = append(summary, shown(rel)+" ("+strings.Join(p.verbs, ", ")+")")
	}
	if err := s.w.commit(changes); err != nil {
		return nil, err
	}
	text := "applied the patch: " + strings.Join(summary, "; ")
	if len(changes) == 0 {
		text = "applied the patch: it changes no file"
	}
	if len(notes) > 0 {
		text += "\n" + strings.Join(notes, "\n")
	}
	r := toolloop.TextResult(text)
	r.Meta.Extra = map[string]any{"files": len(changes)}
	return r, nil
}

func patchErr(i int, label string, err error) error {
	var te *toolloop.ToolError
	if errors.As(err, &te) {
		return &toolloop.ToolError{Kind: te.Kind, Message: fmt.Sprintf("file %d of the patch (%s): %s; nothing was changed", i+1, label, te.Message)}
	}
	return err
}

func prefixAll(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

// patchNames returns the workspace paths a file diff names. Git diffs
// have their a/ and b/ prefixes removed by the parser already; for
// traditional diffs, a leading a/ or b/ is removed unless the path with it
// names an existing file.
func (w *workspace) patchNames(f *gitdiff.File, traditional bool) (oldName, newName string) {
	oldName, newName = f.OldName, f.NewName
	if !traditional {
		return oldName, newName
	}
	strip := func(name string) string {
		rest, ok := strings.CutPrefix(name, "a/")
		if !ok {
			rest, ok = strings.CutPrefix(name, "b/")
		}
		if !ok || rest == "" {
			return name
		}
		if rel, err := w.rel(name, false); err == nil {
			if _, err := w.root.Lstat(rel); err == nil || !errors.Is(err, fs.ErrNotExist) {
				return name
			}
		}
		return rest
	}
	return strip(oldName), strip(newName)
}

// applyFile applies the text hunks of f to src. Hunks whose lines are not
// at the position their header gives are moved to the nearest position
// where they match; moved describes each such move.
func applyFile(src []byte, f *gitdiff.File) (out []byte, moved []string, err error) {
	lines := splitLines(src)
	next := 0 // the first line the next hunk may start at
	for i, frag := range f.TextFragments {
		want := oldLines(frag)
		stated := int(max(frag.OldPosition-1, 0))
		at := -1
		if len(want) == 0 {
			at = min(stated, len(lines))
		} else {
			at = findLines(lines, want, stated, next)
		}
		if at < 0 {
			return nil, nil, hunkError(i, len(f.TextFragments), frag, lines, want, stated)
		}
		if at != stated && len(want) > 0 {
			moved = append(moved, fmt.Sprintf("hunk %d applied at line %d (its header said %d)", i+1, at+1, stated+1))
		}
		delta := int64(at - stated)
		frag.OldPosition += delta
		if frag.NewPosition > 0 {
			frag.NewPosition += delta
		}
		if len(want) > 0 && frag.OldPosition == 0 {
			frag.OldPosition = 1
		}
		next = at + len(want)
	}
	var buf bytes.Buffer
	if err := gitdiff.Apply(&buf, bytes.NewReader(src), f); err != nil {
		var ae *gitdiff.ApplyError
		if errors.As(err, &ae) && ae.Fragment > 0 {
			return nil, nil, fmt.Errorf("hunk %d of %d does not apply at line %d: %v", ae.Fragment, len(f.TextFragments), ae.Line, errors.Unwrap(err))
		}
		return nil, nil, fmt.Errorf("the patch does not apply: %v", err)
	}
	return buf.Bytes(), moved, nil
}

// oldLines returns the lines a hunk expects in the file: its context and
// removed lines, newlines included.
func oldLines(frag *gitdiff.TextFragment) []string {
	var want []string
	for _, l := range frag.Lines {
		if l.Old() {
			want = append(want, l.Line)
		}
	}
	return want
}

// splitLines splits data into lines that keep their newlines.
func splitLines(data []byte) []string {
	var lines []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, string(data))
			break
		}
		lines = append(lines, string(data[:i+1]))
		data = data[i+1:]
	}
	return lines
}

// findLines returns the start of the run of lines equal to want that is
// nearest to stated and not before from, or -1.
func findLines(lines, want []string, stated, from int) int {
	match := func(at int) bool {
		if at < from || at+len(want) > len(lines) {
			return false
		}
		for j, w := range want {
			if lines[at+j] != w {
				return false
			}
		}
		return true
	}
	for d := 0; stated-d >= from || stated+d < len(lines); d++ {
		if match(stated + d) {
			return stated + d
		}
		if d > 0 && match(stated-d) {
			return stated - d
		}
	}
	return -1
}

// hunkError explains why a hunk matches nowhere: the first line that
// differs at the position its header gives.
func hunkError(i, n int, frag *gitdiff.TextFragment, lines, want []string, stated int) error {
	head := strings.TrimSpace(frag.Header())
	msg := fmt.Sprintf("hunk %d of %d (%s) does not apply: its context and removed lines are not in the file", i+1, n, head)
	for j, w := range want {
		k := stated + j
		if k >= len(lines) {
			msg += fmt.Sprintf("; the file has only %s, but the hunk expects %q at line %d", plural(len(lines), "line", "lines"), strings.TrimSuffix(w, "\n"), k+1)
			break
		}
		if lines[k] != w {
			msg += fmt.Sprintf("; at line %d the file has %q where the hunk expects %q", k+1, strings.TrimSuffix(lines[k], "\n"), strings.TrimSuffix(w, "\n"))
			break
		}
	}
	return errors.New(msg + "; read the file again and regenerate the hunk")
}
