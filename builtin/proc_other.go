//go:build !unix

package builtin

import (
	"os"
	"os/exec"
)

// inGroup is a no-op where process groups do not exist: cancelling cmd
// kills only the shell.
func inGroup(*exec.Cmd) {}

// killGroup does nothing where process groups do not exist.
func killGroup(*exec.Cmd) error { return nil }

// limitSignal finds no resource limit where there are no signals.
func limitSignal(*os.ProcessState) string { return "" }

// signalNote has nothing to explain where there are no signals.
func signalNote(int) string { return "" }
