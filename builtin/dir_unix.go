//go:build unix

package builtin

import (
	"io/fs"
	"os"
	"syscall"
)

// listDir returns a directory's entries, read from a duplicate of its
// handle. For a file opened through an os.Root, os stats every entry to
// fill in its FileInfo; read from a plain duplicate, entries carry only
// the type the directory itself records, which is all a walk needs and
// saves a system call per entry. The entries' Info must not be used (it
// would look the name up by path): stat through the Root instead.
func listDir(dir *os.Root) ([]fs.DirEntry, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, derr := -1, error(nil)
	err = raw.Control(func(orig uintptr) {
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		fd, derr = syscall.Dup(int(orig))
		if derr == nil {
			syscall.CloseOnExec(fd)
		}
	})
	if err != nil || derr != nil {
		return f.ReadDir(-1)
	}
	d := os.NewFile(uintptr(fd), f.Name())
	defer d.Close()
	return d.ReadDir(-1)
}
