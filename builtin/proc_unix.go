//go:build unix

package builtin

import (
	"errors"
	"os/exec"
	"syscall"
)

// inGroup makes cmd the leader of a new session, and so of a new process
// group, and makes cancelling it kill the whole group, so that no child or
// grandchild it started outlives it. A new session also has no
// controlling terminal: a command cannot open the agent's terminal as
// /dev/tty, to prompt on it or to push input into it.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills cmd's process group. Processes that left the group (with
// setsid, say) survive: only an OS sandbox contains those.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
