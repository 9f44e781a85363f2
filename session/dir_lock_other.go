//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package session

import (
	"os"
	"path/filepath"
	"sync"
)

// dirLock is the lock a [Dir] takes around each change to its folder. On
// this platform it is a mutex per folder shared by the Dirs of this
// process only: two processes must not open the same folder at once.
type dirLock struct {
	f  *os.File
	mu *sync.Mutex
}

// folderLocks holds a mutex per folder path, for the Dirs of this
// process.
var folderLocks sync.Map // absolute lock file path -> *sync.Mutex

func openDirLock(path string) (*dirLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	mu, _ := folderLocks.LoadOrStore(abs, new(sync.Mutex))
	return &dirLock{f: f, mu: mu.(*sync.Mutex)}, nil
}

func (l *dirLock) lock() error {
	l.mu.Lock()
	return nil
}

func (l *dirLock) unlock() error {
	l.mu.Unlock()
	return nil
}

func (l *dirLock) close() error { return l.f.Close() }
