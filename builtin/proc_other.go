//go:build !unix

package builtin

import "os/exec"

// inGroup is a no-op where process groups do not exist: cancelling cmd
// kills only the shell.
func inGroup(*exec.Cmd) {}

// killGroup does nothing where process groups do not exist.
func killGroup(*exec.Cmd) error { return nil }
