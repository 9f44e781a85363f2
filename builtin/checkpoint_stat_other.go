//go:build !linux

package builtin

import (
	"io/fs"
	"os"
	"runtime"
)

// statOf is the part of a file's metadata that a snapshot compares.
// Outside Linux it is the size, modification time and mode only, so a
// file whose content changed without a change of size or modification
// time (one whose time was put back on purpose) is not seen.
func statOf(fi fs.FileInfo) statKey {
	return statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
}

// canList reports whether a directory's entries can be listed by this
// process, as far as its permission bits tell.
func canList(fi fs.FileInfo) bool {
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o500 == 0o500 || os.Geteuid() == 0
}
