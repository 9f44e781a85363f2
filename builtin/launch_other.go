//go:build !linux

package builtin

import "os/exec"

// startUnconfined starts cmd and returns the function that waits for it.
// Resource limits and a parent-death signal are Linux's only: elsewhere
// the command's processes are not limited, and a command can outlive a
// program that is killed.
func startUnconfined(cmd *exec.Cmd, _ ResourceLimits) (func() error, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd.Wait, nil
}

// unconfinedLimits returns none: the package sets limits on Linux only.
func unconfinedLimits(ResourceLimits) ResourceLimits { return ResourceLimits{} }
