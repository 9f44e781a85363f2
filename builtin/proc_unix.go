//go:build unix

package builtin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
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

// limitSignal says which resource limit, if any, the way a command ended
// points to: killed by SIGXFSZ or SIGXCPU, or a shell that reports a
// child killed by one (exit code 128 + the signal); "kill" for SIGKILL,
// which ends a process that ignores SIGXCPU at the hard CPU limit.
func limitSignal(ps *os.ProcessState) string {
	if ps == nil {
		return ""
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return ""
	}
	sig := syscall.Signal(-1)
	switch {
	case ws.Signaled():
		sig = ws.Signal()
	case ws.Exited() && ws.ExitStatus() > 128:
		sig = syscall.Signal(ws.ExitStatus() - 128)
	}
	switch sig {
	case syscall.SIGXFSZ:
		return limitFileSize
	case syscall.SIGXCPU:
		return limitCPUTime
	case syscall.SIGKILL:
		return "kill"
	}
	return ""
}

// signalNote explains an exit code above 128, which shells give for a
// command killed by a signal (128 + its number), as an exec_shell
// command killed by one exits in a PID namespace, where the init
// process above it reports its end so.
func signalNote(code int) string {
	if code <= 128 {
		return ""
	}
	name := unix.SignalName(syscall.Signal(code - 128))
	if name == "" {
		return ""
	}
	return fmt.Sprintf(", as a shell does when the command it runs is killed by signal %d (%s)", code-128, name)
}
