//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockLog takes an exclusive lock on the log at path, held until unlock or
// the process's end (so a crash never leaves it held).
func lockLog(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", path, errLocked)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
