//go:build linux

package builtin

import (
	"io/fs"
	"os"
	"syscall"
)

// statOf is the part of a file's metadata that a snapshot compares: on
// Linux the change time too, which no user can set, so a file whose
// modification time was put back is still seen to have changed.
func statOf(fi fs.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.ino = st.Ino
		k.ctime = st.Ctim.Nano()
	}
	return k
}

// canList reports whether a directory's entries can be listed by this
// process: its owner read and search bits are set, or the process runs as
// root.
func canList(fi fs.FileInfo) bool {
	return fi.Mode().Perm()&0o500 == 0o500 || os.Geteuid() == 0
}
