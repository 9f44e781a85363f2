package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
)

// Limits on the paths the model may pass.
const (
	maxPathBytes = 4096
	maxNameBytes = 255
)

// escapeErr is the error os.Root reports when a path leads outside the
// root. The os package does not export it, so it is learned once, from a
// path that must escape, and then compared by identity: errors are never
// classified by their text.
var (
	escapeOnce sync.Once
	escapeErr  error
)

func learnEscapeError(root *os.Root) {
	escapeOnce.Do(func() {
		_, err := root.Lstat("../toolloop-probe")
		var pe *fs.PathError
		if errors.As(err, &pe) {
			escapeErr = pe.Err
		}
	})
}

func isEscape(err error) bool {
	return escapeErr != nil && errors.Is(err, escapeErr)
}

// rel turns a path from the model into a clean path relative to the
// workspace root, or fails with invalid_args for a malformed path and
// denied for one outside the workspace or in a hidden name (see
// [Options.Hidden]). The empty path is the root itself
// when emptyOK, and an error otherwise. A path in the quoted form the
// tools show names that need it in (see [quoteName]) is unquoted first,
// so the model can pass back what it was shown.
//
// rel is only a first, lexical check that gives clear messages; the
// confinement itself is os.Root's, which also refuses symbolic links that
// lead out.
func (w *workspace) rel(p string, emptyOK bool) (string, error) {
	if strings.HasPrefix(p, `"`) {
		if u, err := strconv.Unquote(p); err == nil {
			p = u
		}
	}
	switch {
	case p == "" && emptyOK:
		return ".", nil
	case p == "":
		return "", invalid("the path is empty")
	case strings.IndexByte(p, 0) >= 0:
		return "", invalid("the path %q contains a NUL byte", p)
	case len(p) > maxPathBytes:
		return "", invalid("the path is %d bytes long; the limit is %d", len(p), maxPathBytes)
	}
	if filepath.IsAbs(p) {
		r, ok := w.inside(filepath.Clean(p))
		if !ok {
			return "", denied("the path %q is outside the workspace; use a path relative to the workspace root", p)
		}
		p = r
	}
	c := filepath.Clean(p)
	if !filepath.IsLocal(c) && c != "." {
		return "", denied("the path %q leads outside the workspace; use a path relative to the workspace root", p)
	}
	for _, part := range strings.Split(c, string(filepath.Separator)) {
		if len(part) > maxNameBytes {
			return "", invalid("the path %q has a name longer than %d bytes", truncName(p), maxNameBytes)
		}
	}
	if h := w.reachesHidden(c); h != "" {
		return "", denied("%s is in %s, which this workspace keeps from its tools: it cannot be read, listed, searched or changed with them", quoteName(p), quoteName(h))
	}
	return c, nil
}

// isHidden reports whether a file or folder name is one of
// [Options.Hidden].
func (w *workspace) isHidden(name string) bool {
	for _, h := range w.opts.Hidden {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// maxLinkHops bounds the symbolic links reachesHidden follows, as the
// kernel bounds them (os.Root then reports too many links).
const maxLinkHops = 40

// reachesHidden returns the hidden name that the clean workspace-relative
// path rel names or leads into, through symbolic links too, or "". It
// resolves the links the way os.Root will, one path component at a time;
// a link that leads out of the workspace is os.Root's to refuse. A link
// swapped in between this check and the tool's open is not caught: only a
// shell command could do that, and a shell is not fenced by name anyway.
func (w *workspace) reachesHidden(rel string) string {
	if len(w.opts.Hidden) == 0 {
		return ""
	}
	sep := string(filepath.Separator)
	todo := strings.Split(rel, sep)
	done := "."
	for hops := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if done == "." {
				return "" // leads out
			}
			done = filepath.Dir(done)
			continue
		}
		if w.isHidden(part) {
			return part
		}
		next := filepath.Join(done, part)
		fi, err := w.root.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			done = next // a folder, a file, or nothing yet: the rest is checked by name
			continue
		}
		if hops++; hops > maxLinkHops {
			return ""
		}
		dest, err := w.root.Readlink(next)
		if err != nil {
			done = next
			continue
		}
		if filepath.IsAbs(dest) {
			r, ok := w.inside(filepath.Clean(dest))
			if !ok {
				return "" // leads out
			}
			done, dest = ".", r
		}
		todo = append(strings.Split(dest, sep), todo...)
	}
	return ""
}

// inside returns abs relative to the workspace, if it lies in it, by the
// workspace's own path or its path with symbolic links resolved.
func (w *workspace) inside(abs string) (string, bool) {
	for _, base := range []string{w.dir, w.realDir} {
		if abs == base {
			return ".", true
		}
		if r, ok := strings.CutPrefix(abs, base+string(filepath.Separator)); ok {
			return r, true
		}
		if base == string(filepath.Separator) {
			return strings.TrimPrefix(abs, base), true
		}
	}
	return "", false
}

func truncName(p string) string {
	if len(p) > 80 {
		return p[:60] + "..."
	}
	return p
}

// fsError turns a file system error about the workspace path p into an
// error the model can act on, with the kind that fits.
func fsError(p string, err error) error {
	p = quoteName(p)
	var errno syscall.Errno
	switch {
	case err == nil:
		return nil
	case isEscape(err):
		return denied("%s: the path leads outside the workspace (through .. or a symbolic link); only files inside the workspace can be used", p)
	case errors.Is(err, fs.ErrNotExist):
		return invalid("%s: no such file or directory", p)
	case errors.Is(err, syscall.ELOOP):
		return invalid("%s: too many levels of symbolic links", p)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return invalid("%s: the name is too long", truncName(p))
	case errors.Is(err, syscall.ENOTDIR):
		return invalid("%s: a component of the path is not a directory", p)
	case errors.Is(err, syscall.EISDIR):
		return invalid("%s: is a directory", p)
	case errors.Is(err, fs.ErrExist):
		return invalid("%s: already exists", p)
	case errors.Is(err, fs.ErrPermission):
		return denied("%s: permission denied by the file system", p)
	case errors.Is(err, syscall.EINVAL):
		return invalid("%s: invalid path", p)
	case errors.As(err, &errno):
		return failed("%s: %v", p, errno)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// os.Root's own refusals (such as its limit on path steps) carry no
		// errno; they are refusals all the same.
		return denied("%s: %v", p, pe.Err)
	}
	return failed("%s: %v", p, err)
}

// display is a workspace-relative path in the form the walkers and
// pattern matchers use: slash-separated, and "." for the root.
func display(rel string) string {
	if rel == "." {
		return "."
	}
	return filepath.ToSlash(rel)
}

// shown is how a workspace-relative path is shown to the model.
func shown(rel string) string { return quoteName(display(rel)) }

// quoteName returns a path or name as the tools show it to the model:
// verbatim, unless it could fake or hide output or be misread. Then it is
// Go-quoted (strconv.Quote): in double quotes, with \" and \\ escaped and
// escapes such as \n, \r, \t, \x1b, \u2028 and \xff for the rest. A name is
// quoted if it holds a control character (C0, DEL or C1: newline,
// carriage return, tab, escape...) or another character that is not
// printable (a line or paragraph separator, a bidirectional override, a
// space other than U+0020), or bytes that are not UTF-8, or if it starts
// with a double quote or starts or ends with a space. So a shown path
// that starts with a double quote is always a quoted one, and a name
// cannot make a listing show a line of its own.
func quoteName(s string) string {
	if s == "" {
		return s
	}
	if s[0] == '"' || s[0] == ' ' || s[len(s)-1] == ' ' || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// joinRel joins a workspace-relative directory and a name.
func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
