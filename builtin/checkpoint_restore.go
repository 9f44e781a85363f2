package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/toolloop/toolloop"
)

// restore changes the workspace from the state have (just recorded) to
// the state want (read from the store). It touches only paths that one of
// the two records with their content, and never a path that exists on
// disk but is in neither (an ignored file); every file system access goes
// through the workspace's os.Root, so nothing outside the workspace is
// written, whatever links the workspace holds. It restores what it can
// and returns an error naming the paths it could not.
func (c *Checkpoints) restore(want, have map[string]*entry) error {
	root := c.ws.root
	var failures []string
	fail := func(rel, why string) { failures = append(failures, display(rel)+": "+why) }

	// A path is left alone when either state holds it, or a directory
	// above it, without its content.
	protected := func(rel string) bool {
		for p := rel; p != "."; p = path.Dir(p) {
			if w := want[p]; w != nil && w.skip != "" {
				return true
			}
			if h := have[p]; h != nil && h.skip != "" {
				return true
			}
		}
		return false
	}

	// Directories that cannot be written to are opened up for the
	// restore; the last step puts the permissions wanted back.
	opened := map[string]fs.FileMode{}
	for rel, h := range have {
		if h.isDir() && h.skip == "" && h.mode.Perm()&0o300 != 0o300 && !protected(rel) {
			if root.Chmod(osPath(rel), h.mode.Perm()|0o700) == nil {
				opened[rel] = h.mode.Perm()
			}
		}
	}

	// Remove what the wanted state does not hold, or holds as another kind
	// of thing; deepest first, so directories are empty when their turn
	// comes.
	gone := map[string]bool{}
	for _, rel := range slices.Backward(slices.Sorted(mapKeys(have))) {
		h := have[rel]
		if h.skip != "" || protected(rel) {
			continue
		}
		if w := want[rel]; w != nil && w.mode.Type() == h.mode.Type() {
			continue
		}
		err := root.Remove(osPath(rel))
		switch {
		case err == nil || errors.Is(err, fs.ErrNotExist):
			gone[rel] = true
		case h.isDir():
			fail(rel, "the directory was not removed: it holds files that are not recorded (ignored or skipped)")
		default:
			fail(rel, "not removed: "+fsError(display(rel), err).Error())
		}
	}

	// Create and update, parents first.
	for _, rel := range slices.Sorted(mapKeys(want)) {
		w := want[rel]
		if w.skip != "" || protected(rel) {
			continue
		}
		h := have[rel]
		if gone[rel] {
			h = nil
		}
		if h == nil {
			if fi, err := root.Lstat(osPath(rel)); err == nil {
				if w.isDir() && fi.IsDir() {
					continue
				}
				fail(rel, "left as it is: it exists but is not recorded (it may be ignored now)")
				continue
			}
		}
		if err := c.restoreEntry(rel, w, h); err != nil {
			fail(rel, err.Error())
		}
	}

	// Directory permissions last, deepest first, so that a read-only
	// directory is filled before it is closed.
	dirs := slices.Sorted(mapKeys(want))
	for _, rel := range slices.Backward(dirs) {
		w := want[rel]
		if !w.isDir() || w.skip != "" || protected(rel) {
			continue
		}
		delete(opened, rel)
		if fi, err := root.Lstat(osPath(rel)); err == nil && fi.IsDir() && fi.Mode().Perm() != w.mode.Perm() {
			if err := root.Chmod(osPath(rel), w.mode.Perm()); err != nil {
				fail(rel, "permissions not restored: "+err.Error())
			}
		}
	}
	for rel, perm := range opened { // directories left in place that were opened up
		_ = root.Chmod(osPath(rel), perm)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%s not restored: %s", plural(len(failures), "path was", "paths were"), strings.Join(failures, "; "))
	}
	return nil
}

// restoreEntry makes one path what the wanted state holds; h is what is
// there now, or nil if nothing is.
func (c *Checkpoints) restoreEntry(rel string, w, h *entry) error {
	root := c.ws.root
	switch {
	case w.isDir():
		if h != nil {
			return nil
		}
		return root.Mkdir(osPath(rel), 0o700)
	case w.isLink():
		if h != nil && h.hash == w.hash {
			return nil
		}
		dest, err := c.readBlob(w.hash)
		if err != nil {
			return err
		}
		if h != nil {
			if err := root.Remove(osPath(rel)); err != nil {
				return err
			}
		}
		return root.Symlink(string(dest), osPath(rel))
	}
	perm := w.mode.Perm()
	if h != nil && h.hash == w.hash {
		if h.mode.Perm() == perm {
			return nil
		}
		return root.Chmod(osPath(rel), perm)
	}
	data, err := c.readBlob(w.hash)
	if err != nil {
		return err
	}
	dir, err := root.OpenRoot(osPath(path.Dir(rel)))
	if err != nil {
		return err
	}
	defer dir.Close()
	tmp, err := writeTemp(dir, data, perm)
	if err != nil {
		return err
	}
	if perm == 0 { // writeTemp writes 0 as 0644
		err = dir.Chmod(tmp, 0)
	}
	if err == nil {
		err = dir.Rename(tmp, path.Base(rel))
	}
	if err != nil {
		_ = dir.Remove(tmp)
	}
	return err
}

// Rewind is the name of the tool that rewinds the workspace, offered when
// [Options.Checkpoints] is set.
const Rewind = "rewind"

type rewindIn struct {
	CallID string `json:"call_id" jsonschema:"minLength=1" jsonschema_description:"The ID of one of your earlier tool calls of write_file, edit_file, apply_patch, exec_shell or rewind. The workspace goes back to how it was just before that call."`
}

func (w *workspace) rewindTool() toolloop.Tool {
	desc := `Undo changes to the workspace: put it back to how it was just before one of your earlier calls of write_file, edit_file, apply_patch, exec_shell or rewind, given by that call's ID.

Every file changed or deleted since then gets its earlier content and permissions back, and every file and folder created since then is removed, whichever tool or command made the change. Files ignored by .gitignore, .git and node_modules folders, and files too large to record are left as they are. A rewind is itself recorded: to undo a rewind, rewind to the rewind call's own ID. The result lists what changed.`
	return newTool(toolDef{name: Rewind, description: desc, annotations: titled(writes, "Rewind workspace"), exclusive: true}, w.rewind)
}

func (w *workspace) rewind(ctx context.Context, call *toolloop.Call, in *rewindIn) (*toolloop.ToolResult, error) {
	c := w.ckpt
	cp, target, err := c.rewind(ctx, checkpointOf(call), in.CallID)
	if errors.Is(err, ErrNoCheckpoint) {
		return nil, invalid("there is no checkpoint for call %q; %s", in.CallID, c.recentCalls())
	}
	if target == nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, failed("the rewind failed, and nothing was changed: %v", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rewound to before call %s (%s", in.CallID, target.cp.Tool)
	if target.cp.Turn > 0 {
		fmt.Fprintf(&b, ", turn %d", target.cp.Turn)
	}
	fmt.Fprintf(&b, "): %s\n", plural(len(cp.Changes), "path changed", "paths changed"))
	for i, ch := range cp.Changes {
		if i == maxRewindLines {
			fmt.Fprintf(&b, "... and %d more\n", len(cp.Changes)-i)
			break
		}
		fmt.Fprintf(&b, "%s %s\n", changeMark(ch.Kind), ch.Path)
	}
	fmt.Fprintf(&b, "To undo this rewind, rewind to call %s.", cp.CallID)
	res := toolloop.TextResult(b.String())
	if err != nil {
		res = toolloop.ErrorResult(failed("%s\n%v", b.String(), err))
	}
	r := c.recordOf(cp.CallID)
	if r != nil {
		c.annotate(res, r, nil)
	}
	res.Meta.Extra["rewound_to"] = in.CallID
	return res, nil
}

// maxRewindLines is how many changed paths the rewind tool's result lists.
const maxRewindLines = 50

func changeMark(k ChangeKind) string {
	switch k {
	case ChangeAdded:
		return "+"
	case ChangeDeleted:
		return "-"
	}
	return "~"
}

// recordOf returns the newest record of a call, or nil.
func (c *Checkpoints) recordOf(callID string) *record {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, _ := c.find(callID)
	return r
}

// recentCalls tells the model which calls it can rewind to.
func (c *Checkpoints) recentCalls() string {
	list := c.List()
	if len(list) == 0 {
		return "no call that can change files has been made yet"
	}
	var ids []string
	for _, cp := range list[max(0, len(list)-10):] {
		ids = append(ids, fmt.Sprintf("%s (%s)", cp.CallID, cp.Tool))
	}
	return "the most recent calls that can be rewound to are, oldest first: " + strings.Join(ids, ", ")
}
