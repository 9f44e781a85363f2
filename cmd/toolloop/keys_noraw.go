//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package main

import "os"

// newRawKeys: this system's terminal is read line by line (no Esc).
func newRawKeys(*os.File, *output, func() bool) keys { return nil }
