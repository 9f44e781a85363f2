package builtin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxPatchBytes is the largest file a diff shows line by line; a larger
// one gets a line saying it changed.
const maxPatchBytes = 1 << 20

// diffText renders what a call changed: first a "# " line for each change
// a diff of contents does not show, then git's unified diff of the
// recorded files. With limit >= 0 it stops at about limit bytes, cut at a
// line's end, and reports the cut. c.mu must be held.
func (c *Checkpoints) diffText(r *record, limit int) (string, bool, error) {
	before, err := c.entriesOf(r.before)
	if err != nil {
		return "", false, err
	}
	after, err := c.entriesOf(r.after)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, ch := range r.cp.Changes {
		rel := strings.TrimSuffix(ch.Path, "/")
		be, ae := before[rel], after[rel]
		switch {
		case ch.Skipped != "":
			fmt.Fprintf(&b, "# %s %s: content not recorded (%s)\n", ch.Kind, ch.Path, c.skipText(ch.Skipped))
		case be != nil && ae != nil && be.mode.Type() == ae.mode.Type() && !ae.isLink():
			if be.mode.Perm() != ae.mode.Perm() {
				fmt.Fprintf(&b, "# permissions of %s: %04o -> %04o\n", ch.Path, be.mode.Perm(), ae.mode.Perm())
			}
		case strings.HasSuffix(ch.Path, "/") && ch.Kind == ChangeModified:
			fmt.Fprintf(&b, "# %s is now a directory\n", ch.Path)
		case strings.HasSuffix(ch.Path, "/"):
			fmt.Fprintf(&b, "# %s directory %s\n", ch.Kind, ch.Path)
		}
	}
	from, err := c.treeOf(r.before.files)
	if err != nil {
		return "", false, err
	}
	to, err := c.treeOf(r.after.files)
	if err != nil {
		return "", false, err
	}
	changes, err := object.DiffTree(from, to)
	if err != nil {
		return "", false, err
	}
	sort.Sort(changes)
	for _, ch := range changes {
		if limit >= 0 && b.Len() > limit {
			break
		}
		if c.tooLarge(ch.From) || c.tooLarge(ch.To) {
			name := cmpOr(ch.To.Name, ch.From.Name)
			fmt.Fprintf(&b, "diff --git a/%s b/%s\n# contents not shown: larger than %d bytes\n", name, name, maxPatchBytes)
			continue
		}
		p, err := ch.Patch()
		if err != nil {
			return "", false, err
		}
		b.WriteString(p.String())
	}
	s := b.String()
	if limit >= 0 && len(s) > limit {
		s = s[:strings.LastIndexByte(s[:limit+1], '\n')+1]
		return s, true, nil
	}
	return s, false, nil
}

// entriesOf returns a snapshot's entries, reading them from the store for
// a snapshot of an earlier source.
func (c *Checkpoints) entriesOf(s *state) (map[string]*entry, error) {
	if s.entries != nil {
		return s.entries, nil
	}
	return c.load(s)
}

func (c *Checkpoints) treeOf(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	return object.GetTree(c.repo, h)
}

func (c *Checkpoints) tooLarge(e object.ChangeEntry) bool {
	if e.Name == "" {
		return false
	}
	n, err := c.repo.EncodedObjectSize(e.TreeEntry.Hash)
	return err == nil && n > maxPatchBytes
}

// skipText says why a path's content is not recorded.
func (c *Checkpoints) skipText(why string) string {
	switch why {
	case skipLarge:
		return fmt.Sprintf("larger than the limit of %d bytes a file", c.opts.MaxFileBytes)
	case skipTotal:
		return fmt.Sprintf("beyond the limit of %d bytes a snapshot", c.opts.MaxTotalBytes)
	case skipSpecial:
		return "not a regular file, directory or symbolic link"
	}
	return "it could not be read"
}
