package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
// denied for one outside the workspace. The empty path is the root itself
// when emptyOK, and an error otherwise.
//
// rel is only a first, lexical check that gives clear messages; the
// confinement itself is os.Root's, which also refuses symbolic links that
// lead out.
func (w *workspace) rel(p string, emptyOK bool) (string, error) {
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
	return c, nil
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

// display is how a workspace-relative path is shown to the model.
func display(rel string) string {
	if rel == "." {
		return "."
	}
	return filepath.ToSlash(rel)
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
