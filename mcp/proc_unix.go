//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes cmd the leader of a new process group.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills what is left of the process group led by pid, once its
// leader has been reaped. Usually nothing is.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// terminateGroup sends SIGTERM to the process group led by pid.
func terminateGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
}
