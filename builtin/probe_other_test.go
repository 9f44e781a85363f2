//go:build !linux

package builtin

// runTestProbe runs no probe: the helper programs are Linux's only.
func runTestProbe() (int, bool) { return 0, false }
