package builtin

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// sniffLen is how much of a file is looked at to tell text from binary.
const sniffLen = 8000

// readText reads a workspace file that the tools treat as text: it must be
// a regular file (symbolic links inside the workspace are followed) no
// larger than MaxFileBytes, and have no NUL byte near its start.
func (w *workspace) readText(rel string) ([]byte, fs.FileInfo, error) {
	f, err := openRead(w.root, rel)
	if err != nil {
		return nil, nil, fsError(display(rel), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fsError(display(rel), err)
	}
	if fi.IsDir() {
		return nil, nil, invalid("%s is a directory; use list_directory to see what it holds", shown(rel))
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, invalid("%s is not a regular file (%s)", shown(rel), fi.Mode().Type())
	}
	if fi.Size() > w.opts.MaxFileBytes {
		return nil, nil, invalid("%s is %d bytes, larger than the %d-byte limit of this tool; use grep_search to find the lines you need, or exec_shell with head, tail or sed to see parts of it",
			shown(rel), fi.Size(), w.opts.MaxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, w.opts.MaxFileBytes+1))
	if err != nil {
		return nil, nil, fsError(display(rel), err)
	}
	if int64(len(data)) > w.opts.MaxFileBytes {
		return nil, nil, invalid("%s grew past the %d-byte limit while being read", shown(rel), w.opts.MaxFileBytes)
	}
	if isBinary(data) {
		return data, fi, &binaryError{rel: rel, mime: mimeType(rel, data)}
	}
	return data, fi, nil
}

// openRead opens a file for reading without blocking: opening a FIFO
// that has no writer would otherwise hang. For a regular file the flag
// changes nothing, except that os then skips four fcntl calls per open,
// which matters when grep_search opens thousands of files.
func openRead(dir *os.Root, name string) (*os.File, error) {
	return dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// binaryError reports a file that is not text.
type binaryError struct {
	rel  string
	mime string
}

func (e *binaryError) Error() string {
	return shown(e.rel) + " is a binary file (" + e.mime + "); this tool works on UTF-8 text only"
}

func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
}

// mimeType guesses a file's MIME type from its name and content.
func mimeType(name string, data []byte) string {
	if t := extTypes[strings.ToLower(filepath.Ext(name))]; t != "" {
		return t
	}
	return http.DetectContentType(data[:min(len(data), 512)])
}

// extTypes are the types the content sniffer cannot tell apart from plain
// text. The table is fixed, so results do not depend on the host's MIME
// database.
var extTypes = map[string]string{
	".go": "text/x-go; charset=utf-8", ".json": "application/json", ".md": "text/markdown; charset=utf-8",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8", ".ts": "text/x-typescript; charset=utf-8",
	".py": "text/x-python; charset=utf-8", ".rs": "text/x-rust; charset=utf-8", ".c": "text/x-c; charset=utf-8",
	".h": "text/x-c; charset=utf-8", ".java": "text/x-java; charset=utf-8", ".sh": "application/x-sh",
	".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".xml": "text/xml; charset=utf-8",
	".csv": "text/csv; charset=utf-8", ".svg": "image/svg+xml", ".txt": "text/plain; charset=utf-8",
}

// fileChange is one file to write or remove in a [workspace.commit].
type fileChange struct {
	rel    string
	data   []byte
	remove bool

	// What was there before, for rolling back.
	existed bool
	old     []byte
	perm    fs.FileMode

	dir *os.Root // the parent directory, once prepared
	tmp string   // the temporary file in dir, once written
}

// commit makes a set of changes all or none: it writes every new content
// to a temporary file beside its target first, and only when all are
// written renames them into place and removes what is to be removed. If a
// rename fails, the changes already made are undone. Folders it created
// for new files are removed again on failure.
//
// Each rename is atomic, so a crash leaves every file either whole and old
// or whole and new, never half written.
func (w *workspace) commit(changes []*fileChange) (err error) {
	var madeDirs []string
	defer func() {
		for _, c := range changes {
			if c.tmp != "" {
				_ = c.dir.Remove(c.tmp)
			}
			if c.dir != nil {
				_ = c.dir.Close()
			}
		}
		if err != nil {
			for i := len(madeDirs) - 1; i >= 0; i-- {
				_ = w.root.Remove(madeDirs[i])
			}
		}
	}()
	for _, c := range changes {
		dir := filepath.Dir(c.rel)
		if !c.remove {
			made, err := w.mkdirAll(dir)
			madeDirs = append(madeDirs, made...)
			if err != nil {
				return err
			}
		}
		d, err := w.root.OpenRoot(dir)
		if err != nil {
			return fsError(display(dir), err)
		}
		c.dir = d
		if c.remove {
			continue
		}
		if c.tmp, err = writeTemp(d, c.data, c.perm); err != nil {
			return fsError(display(c.rel), err)
		}
	}
	for i, c := range changes {
		base := filepath.Base(c.rel)
		var err error
		if c.remove {
			err = c.dir.Remove(base)
		} else {
			err = c.dir.Rename(c.tmp, base)
			if err == nil {
				c.tmp = ""
			}
		}
		if err != nil {
			w.rollback(changes[:i])
			return fsError(display(c.rel), err)
		}
	}
	for _, c := range changes {
		syncDir(c.dir)
	}
	return nil
}

// rollback undoes changes that commit already made, best effort.
func (w *workspace) rollback(done []*fileChange) {
	for i := len(done) - 1; i >= 0; i-- {
		c := done[i]
		base := filepath.Base(c.rel)
		if !c.existed {
			_ = c.dir.Remove(base)
			continue
		}
		if tmp, err := writeTemp(c.dir, c.old, c.perm); err == nil {
			if c.dir.Rename(tmp, base) != nil {
				_ = c.dir.Remove(tmp)
			}
		}
	}
}

// mkdirAll creates dir and its missing parents inside the workspace, and
// returns the folders it created, outermost first.
func (w *workspace) mkdirAll(dir string) ([]string, error) {
	if dir == "." {
		return nil, nil
	}
	var missing []string
	for d := dir; d != "."; d = filepath.Dir(d) {
		fi, err := w.root.Lstat(d)
		if err == nil {
			if !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
				return nil, invalid("%s: is not a directory", shown(d))
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fsError(display(d), err)
		}
		missing = append(missing, d)
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := w.root.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, fsError(display(missing[i]), err)
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// writeTemp writes data to a new temporary file in dir, flushed to disk,
// and returns its name.
func writeTemp(dir *os.Root, data []byte, perm fs.FileMode) (string, error) {
	if perm == 0 {
		perm = 0o644
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	name := ".toolloop-" + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		// The umask may have narrowed perm; the file keeps the mode it had.
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = dir.Remove(name)
		return "", err
	}
	return name, nil
}

func syncDir(dir *os.Root) {
	if d, err := dir.Open("."); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// target looks at the file a write would replace: it refuses directories
// and symbolic links (a link inside the workspace is named with its
// target instead; one that leads out is denied), and returns the file's
// content and mode if it exists.
func (w *workspace) target(rel string) (c *fileChange, err error) {
	c = &fileChange{rel: rel}
	fi, err := w.root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return nil, fsError(display(rel), err)
	case fi.Mode()&fs.ModeSymlink != 0:
		if _, err := w.root.Stat(rel); err != nil && isEscape(err) {
			return nil, fsError(display(rel), err)
		}
		dest, _ := w.root.Readlink(rel)
		return nil, invalid("%s is a symbolic link (to %s); name the file it points to instead", shown(rel), quoteName(dest))
	case fi.IsDir():
		return nil, invalid("%s is a directory", shown(rel))
	case !fi.Mode().IsRegular():
		return nil, invalid("%s is not a regular file", shown(rel))
	}
	c.existed, c.perm = true, fi.Mode().Perm()
	return c, nil
}
