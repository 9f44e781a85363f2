//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package session

import (
	"os"
	"syscall"
)

// dirLock is the lock a [Dir] takes around each change to its folder:
// flock(2) on the folder's lock file, which excludes the other processes
// on the machine and the other Dirs of this process (each has an open
// file description of its own). It is not reentrant, and one goroutine
// of a Dir takes it at a time (Dir.mu).
type dirLock struct {
	f *os.File
}

func openDirLock(path string) (*dirLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) lock() error { return l.flock(syscall.LOCK_EX) }

func (l *dirLock) unlock() error { return l.flock(syscall.LOCK_UN) }

func (l *dirLock) flock(how int) error {
	rc, err := l.f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}

func (l *dirLock) close() error { return l.f.Close() }
