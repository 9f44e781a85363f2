//go:build linux

package builtin

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Linux every command, confined or not, starts from an OS thread of
// its own that lives until the command ends: the command's parent-death
// signal (SIGKILL) is tied to the thread that started it, so the thread
// must outlive it, and it dies with the program, however the program
// ends. In a PID namespace the command's first process is the
// namespace's init, whose death kills every process in it; so nothing a
// command starts outlives the program, SIGKILL included.
//
// Resource limits are set on the command's first process while it is
// stopped at its exec, before it runs an instruction of its own: the
// child asks to be traced (PTRACE_TRACEME, the Ptrace field of
// SysProcAttr), the exec stops it, the thread sets the limits with
// prlimit and lets it go. Where tracing is refused (Yama's
// ptrace_scope 2 or 3, a seccomp profile, a debugger already tracing
// the program), the limits are set just after the exec instead, which
// leaves the command a moment to start processes that do not get them.

// rlimit is a resource limit to set on a command.
type rlimit struct {
	resource int
	lim      unix.Rlimit
}

// hostLimits are the program's own hard limits, which a command's limits
// may not exceed (a process may lower its limits, not raise them).
var hostLimits = sync.OnceValue(func() map[int]uint64 {
	m := map[int]uint64{}
	for _, r := range []int{unix.RLIMIT_DATA, unix.RLIMIT_FSIZE, unix.RLIMIT_NPROC, unix.RLIMIT_CPU, unix.RLIMIT_CORE} {
		var l unix.Rlimit
		if err := unix.Getrlimit(r, &l); err == nil {
			m[r] = l.Max
		} else {
			m[r] = unix.RLIM_INFINITY
		}
	}
	return m
})

// rlimits turns the limits in force into the kernel's, capped at the
// program's own hard limits. No command dumps core: a process killed by
// a limit's signal would otherwise leave a core file in the workspace.
func rlimits(l ResourceLimits) []rlimit {
	host := hostLimits()
	var out []rlimit
	add := func(res int, soft, hard uint64) {
		hard = min(hard, host[res])
		out = append(out, rlimit{res, unix.Rlimit{Cur: min(soft, hard), Max: hard}})
	}
	if l.Memory > 0 {
		add(unix.RLIMIT_DATA, uint64(l.Memory), uint64(l.Memory))
	}
	if l.FileSize > 0 {
		add(unix.RLIMIT_FSIZE, uint64(l.FileSize), uint64(l.FileSize))
	}
	if l.Processes > 0 {
		add(unix.RLIMIT_NPROC, uint64(l.Processes), uint64(l.Processes))
	}
	if l.CPUTime > 0 {
		// SIGXCPU at the soft limit; SIGKILL a few seconds later for a
		// process that ignores it.
		secs := uint64(math.Ceil(l.CPUTime.Seconds()))
		add(unix.RLIMIT_CPU, secs, secs+5)
	}
	add(unix.RLIMIT_CORE, 0, 0)
	return out
}

// limitsInForce returns the limits commands get, from the options', with
// or without a user namespace of their own. RLIMIT_NPROC counts the
// processes of a user in a user namespace: in a namespace of the
// command's own, the command's; elsewhere all the user's, the program's
// threads and the user's other programs included, so there only a
// limit the options set applies. It never applies to root (user ID 0
// outside any user namespace), whom the kernel exempts.
func limitsInForce(opts ResourceLimits, ownUserNS bool) ResourceLimits {
	l := opts.withDefaults()
	if !ownUserNS && opts.Processes == 0 || os.Geteuid() == 0 {
		l.Processes = 0
	}
	return l
}

// canTrace reports whether a child started with cloneflags may ask to be
// traced by its parent. The probe starts a program that does not exist:
// if PTRACE_TRACEME worked, the error is the exec's ENOENT.
var canTrace = sync.OnceValues(func() (plain, userNS bool) {
	probe := func(flags uintptr) bool {
		var ok bool
		_ = onDiscardedThread(func() error {
			_, err := syscall.ForkExec("/nonexistent/toolloop-probe", nil, &syscall.ProcAttr{
				Sys: &syscall.SysProcAttr{Ptrace: true, Cloneflags: flags},
			})
			ok = errors.Is(err, syscall.ENOENT)
			return nil
		})
		return ok
	}
	return probe(0), canCloneUserNS() && probe(syscall.CLONE_NEWUSER|syscall.CLONE_NEWPID)
})

// launch starts cmd from a thread of its own: prepare (if not nil)
// changes the thread first (namespaces, Landlock, seccomp), the command
// gets the limits, and the thread waits for it. The thread is thrown
// away afterwards. It returns the function that waits for the command.
func launch(cmd *exec.Cmd, prepare func() error, limits []rlimit, traced bool) (wait func() error, err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Ptrace = traced && len(limits) > 0
	started := make(chan error, 1)
	done := make(chan error, 1)
	onOwnThread(func() {
		err := func() error {
			if prepare != nil {
				if err := prepare(); err != nil {
					return err
				}
			}
			if err := cmd.Start(); err != nil {
				return err
			}
			if err := setLimits(cmd.Process.Pid, limits, cmd.SysProcAttr.Ptrace); err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				return err
			}
			return nil
		}()
		started <- err
		if err == nil {
			done <- cmd.Wait()
		}
	})
	if err := <-started; err != nil {
		return nil, err
	}
	return sync.OnceValue(func() error { return <-done }), nil
}

// setLimits sets the limits on the process pid; when traced, it first
// waits for the process to stop at its exec, and lets it go after.
func setLimits(pid int, limits []rlimit, traced bool) error {
	if traced {
		var info unix.Siginfo
		for {
			// WNOWAIT: a process that died instead stays for cmd.Wait.
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT|unix.WALL, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return fmt.Errorf("waiting for the shell to start: %w", err)
			}
			break
		}
		const cldTrapped, cldStopped = 4, 5 // si_code of a stopped child (siginfo.h)
		if info.Code != cldTrapped && info.Code != cldStopped {
			return nil // it died: cmd.Wait reports how
		}
	}
	var err error
	for _, l := range limits {
		if e := unix.Prlimit(pid, l.resource, &l.lim, nil); e != nil && !errors.Is(e, unix.ESRCH) {
			err = errors.Join(err, fmt.Errorf("setting the command's resource limit %d: %w", l.resource, e))
		}
	}
	if traced {
		// Let it go, without the SIGTRAP of its exec.
		if _, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, 0, 0, 0); errno != 0 && errno != unix.ESRCH {
			err = errors.Join(err, fmt.Errorf("releasing the command: %w", errno))
		}
	}
	return err
}

// onOwnThread runs f on an OS thread of its own, in a new goroutine, and
// ends the thread when f returns, so that whatever f does to the thread
// (namespaces, credentials, Landlock, seccomp) dies with it. The thread
// is never the main thread, which the runtime cannot end and whose
// credentials are, as other processes see them in /proc, the process's.
func onOwnThread(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// Hold the main thread until f runs on another one.
			running := make(chan struct{})
			onOwnThread(func() {
				close(running)
				f()
			})
			<-running
			runtime.UnlockOSThread()
			return
		}
		f()
		// Returning while locked ends the thread.
	}()
}

// startUnconfined starts cmd with no sandbox, with the parent-death
// signal and the limits all the same.
func startUnconfined(cmd *exec.Cmd, l ResourceLimits) (func() error, error) {
	plain, _ := canTrace()
	return launch(cmd, nil, rlimits(l), plain)
}

// unconfinedLimits returns the limits an unconfined command gets.
func unconfinedLimits(opts ResourceLimits) ResourceLimits { return limitsInForce(opts, false) }
