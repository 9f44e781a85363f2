//go:build linux

package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux, commands are confined with Landlock, applied to one OS thread
// only: a goroutine locks itself to a fresh thread, gives that thread a
// private network namespace (root) or none, sets no_new_privs, drops its
// capabilities, restricts it with landlock_restrict_self, installs a
// seccomp filter, starts the command from it (a child inherits the
// creating thread's credentials, Landlock domain, seccomp filter and
// namespaces), waits for it, and exits while still locked, so the runtime
// throws the thread away. The rest of the process is never restricted.
// Root unshares IPC and PID namespaces on the thread too. Other users
// cannot: a thread cannot move to a new user namespace in a program with
// several threads, so their commands get user, IPC, PID and network
// namespaces from clone(2) instead, or none where user namespaces are
// not allowed.

// netMode is how a platform sandbox keeps commands off the network.
type netMode int

const (
	netAllowed   netMode = iota // Sandbox.AllowNetwork: nothing is done
	netUnshare                  // a network namespace made on the thread, loopback up
	netCloneUser                // user and network namespaces made by clone(2)
	netTCP                      // Landlock refuses TCP connect and bind only
	netOpen                     // nothing can be done
)

// nsMode is how a platform sandbox gives commands IPC and PID namespaces.
type nsMode int

const (
	nsNone    nsMode = iota // none: the in-process path, Landlock only
	nsUnshare               // unshared on the thread (root)
	nsUser                  // made by clone(2) with a user namespace
)

// platform is the Linux sandbox of a workspace: a Landlock ruleset,
// built once, that each command's thread restricts itself with, and how
// commands get their namespaces, system call filter and limits.
type platform struct {
	ruleset int
	net     netMode
	ns      nsMode
	filter  *unix.SockFprog // nil where seccomp cannot be used
	traced  bool            // limits are set while the command stops at its exec
}

// Landlock access rights by ABI version.
const (
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
)

// llFSRights returns the file system rights Landlock ABI abi handles.
// Newer rights (LANDLOCK_ACCESS_FS_RESOLVE_UNIX, ABI 9) are left to a
// later version of this package, which will test them.
func llFSRights(abi int) uint64 {
	r := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: EXECUTE to MAKE_SYM
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// landlockABI returns the kernel's Landlock ABI version, or 0 when it has
// none (too old, or Landlock is not enabled).
var landlockABI = sync.OnceValue(func() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
})

// canUnshareNet reports whether a thread of this process can move to a
// new network namespace and bring its loopback up (it has CAP_SYS_ADMIN
// and CAP_NET_ADMIN).
var canUnshareNet = sync.OnceValue(func() bool {
	return onDiscardedThread(privateNetwork) == nil
})

// canCloneUserNS reports whether clone(2) can give a child new user,
// network, IPC and PID namespaces. The probe starts a program that does
// not exist: if clone worked, the error is the exec's ENOENT.
var canCloneUserNS = sync.OnceValue(func() bool {
	_, err := syscall.ForkExec("/nonexistent/toolloop-probe", nil, &syscall.ProcAttr{
		Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWPID},
	})
	return errors.Is(err, syscall.ENOENT)
})

// canUnshareNS reports whether a thread of this process can move to new
// IPC and PID namespaces (it has CAP_SYS_ADMIN).
//
// The first process a thread starts after unshare(CLONE_NEWPID) is the
// namespace's init, and once it has ended the thread can start no other.
// The os package, the first time it starts a process, first starts one
// of its own to check that the kernel has pidfds: that check must not
// happen on a command's thread, so the probe has it happen here.
var canUnshareNS = sync.OnceValue(func() bool {
	if p, err := os.StartProcess("/nonexistent/toolloop-probe", []string{"probe"}, &os.ProcAttr{}); err == nil {
		_ = p.Kill()
		_, _ = p.Wait()
	}
	return onDiscardedThread(func() error { return unix.Unshare(unix.CLONE_NEWIPC | unix.CLONE_NEWPID) }) == nil
})

// newPlatform builds the Landlock ruleset for a workspace and says how
// commands will be confined. It returns a nil platform, and no error,
// where the kernel cannot confine them.
func newPlatform(p *sandboxPaths, o *Sandbox) (*platform, Confinement, error) {
	abi := landlockABI()
	if abi < 1 {
		return nil, Confinement{Summary: "Commands run unconfined, because this Linux kernel has no Landlock: they can read, change and delete anything the user running the agent can, and use the network."}, nil
	}
	// Root unshares the namespaces on the thread: a user namespace would
	// add nothing (the kernel exempts root from the process limit all
	// the same) and costs a fork without vfork, milliseconds a command.
	ns := nsNone
	switch {
	case canUnshareNS():
		ns = nsUnshare
	case canCloneUserNS():
		ns = nsUser
	}
	net := netAllowed
	switch {
	case o.AllowNetwork:
	case canUnshareNet():
		net = netUnshare
	case ns == nsUser:
		net = netCloneUser
	case abi >= 4:
		net = netTCP
	default:
		net = netOpen
	}
	filter, err := syscallFilter()
	if err != nil {
		return nil, Confinement{}, err
	}
	plain, userNS := canTrace()
	attr := unix.LandlockRulesetAttr{Handled_access_fs: llFSRights(abi)}
	if net == netTCP {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	// The struct grew with the ABI: pass the size this kernel knows.
	size := unsafe.Offsetof(attr.Handled_access_net)
	switch {
	case abi >= 6:
		size = unsafe.Offsetof(attr.Quiet_access_fs)
	case abi >= 4:
		size = unsafe.Offsetof(attr.Scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return nil, Confinement{}, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	pl := &platform{ruleset: int(fd), net: net, ns: ns, filter: filter, traced: plain}
	if ns == nsUser {
		pl.traced = userNS
	}
	if err := pl.addRules(p, attr.Handled_access_fs); err != nil {
		_ = pl.close()
		return nil, Confinement{}, err
	}
	return pl, Confinement{
		Mechanism: "landlock", Writes: true, Reads: true,
		NetworkOff: net == netUnshare || net == netCloneUser,
		Isolated:   ns != nsNone && filter != nil,
		Summary:    summary(p, net, ns, filter != nil),
	}, nil
}

// readableDevices are the only files in /dev that commands may read.
// The others stay closed: terminals (/dev/pts/N of the person running
// the agent, /dev/tty*, the consoles' /dev/vcs*), disks, whose raw
// blocks hold every file, and the host's POSIX shared memory
// (/dev/shm).
var readableDevices = []string{"/dev/random", "/dev/urandom"}

// addRules allows reading everything but the unreadable paths and /dev,
// listing every folder, writing the writable paths, and using the null
// devices and reading the random ones.
func (pl *platform) addRules(p *sandboxPaths, handled uint64) error {
	if err := pl.allow("/", unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
		return err
	}
	for _, d := range readableDevices {
		if err := pl.allow(d, llRead); err != nil && !isPathError(err) {
			return err
		}
	}
	for _, r := range readableRoots(append(slices.Clone(p.unreadable), "/dev")) {
		// A file may vanish or refuse to open: it stays unreadable.
		if err := pl.allow(r, llRead); err != nil && !isPathError(err) {
			return err
		}
	}
	for _, r := range p.readable {
		if err := pl.allow(r, llRead); err != nil {
			return err
		}
	}
	for _, w := range p.writable {
		if err := pl.allow(w, handled); err != nil {
			return err
		}
	}
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/full"} {
		if err := pl.allow(dev, llFileRights); err != nil && !isPathError(err) {
			return err
		}
	}
	return nil
}

func isPathError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe)
}

// allow adds a rule granting access beneath path, or to the file at
// path (only the rights that apply to files), as far as the ruleset
// handles them.
func (pl *platform) allow(path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFileRights
	}
	access &= llFSRights(landlockABI())
	if access == 0 {
		return nil
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(pl.ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", path, errno)
	}
	return nil
}

// readableRoots returns the fewest files and folders whose trees cover
// the file system except the hidden paths and the folders above them.
// Symbolic links are left out: Landlock checks the file a link leads to.
func readableRoots(hidden []string) []string {
	under := func(p, dir string) bool {
		return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
	}
	var roots []string
	var walk func(dir string)
	walk = func(dir string) {
		if slices.ContainsFunc(hidden, func(h string) bool { return under(dir, h) }) {
			return
		}
		if !slices.ContainsFunc(hidden, func(h string) bool { return under(h, dir) }) {
			roots = append(roots, dir)
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Type()&fs.ModeSymlink == 0 {
				walk(filepath.Join(dir, e.Name()))
			}
		}
	}
	walk("/")
	return roots
}

func (pl *platform) close() error { return unix.Close(pl.ruleset) }

// initShell runs as the first process of a PID namespace, the command
// under it: the namespace's init ignores the signals it has no handler
// for that come from inside the namespace (kill $$, kill -9 $$), and the
// command should not. It waits for the command, reaping whatever
// processes are orphaned meanwhile, and exits with its status; its death
// kills everything left in the namespace.
var initShell = []string{"/bin/sh", "-c", `"$@"; exit $?`, "sh"}

// command returns argv, under initShell in a PID namespace; Landlock
// needs no wrapper program.
func (pl *platform) command(argv []string) []string {
	if pl.ns == nsNone {
		return argv
	}
	return append(slices.Clone(initShell), argv...)
}

// limits returns the limits commands get, from the options'.
func (pl *platform) limits(opts ResourceLimits) ResourceLimits {
	return limitsInForce(opts, pl.ns == nsUser)
}

// start starts cmd from a thread confined by the workspace's ruleset and
// filter, in its namespaces, with limits l, and returns the function
// that waits for it.
func (pl *platform) start(cmd *exec.Cmd, l ResourceLimits) (func() error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if pl.ns == nsUser {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWIPC | syscall.CLONE_NEWPID
		if pl.net == netCloneUser {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
		}
	}
	return launch(cmd, pl.confine, rlimits(l), pl.traced)
}

// confine restricts the calling thread, for the command it will start.
func (pl *platform) confine() error {
	if pl.net == netUnshare {
		if err := privateNetwork(); err != nil {
			return err
		}
	}
	if pl.ns == nsUnshare {
		if err := unix.Unshare(unix.CLONE_NEWIPC | unix.CLONE_NEWPID); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWIPC|CLONE_NEWPID): %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(pl.ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	if pl.filter != nil {
		if err := loadFilter(pl.filter); err != nil {
			return err
		}
	}
	return nil
}

// onDiscardedThread runs f on an OS thread of its own, which the runtime
// ends when f returns, so that whatever f does to the thread (namespaces,
// credentials, Landlock) dies with it. The thread is never the main
// thread: the runtime cannot end that one, and the process's credentials,
// as other processes see them in /proc, are the main thread's.
func onDiscardedThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// Hold the main thread while another goroutine, which
			// therefore runs elsewhere, does the work.
			errc <- onDiscardedThread(f)
			runtime.UnlockOSThread()
			return
		}
		errc <- f()
		// Returning while locked ends the thread.
	}()
	return <-errc
}

// privateNetwork moves the calling thread into a new network namespace
// and brings its loopback interface up, so that commands can talk to
// servers they start themselves and to nothing else.
func privateNetwork() error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	return nil
}

// dropCapabilities empties the calling thread's capability bounding set
// (where it may) and its capability sets. With no_new_privs set, a
// program it runs, even as root, gets no capability back.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Permitted|data[1].Permitted == 0 {
		return nil
	}
	const capSetPCap = 8
	if data[0].Effective&(1<<capSetPCap) != 0 {
		for c := 0; c < 64; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
				break // past the last capability
			} else if err != nil {
				return fmt.Errorf("dropping capability %d: %w", c, err)
			}
		}
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// summary describes Landlock confinement to the model.
func summary(p *sandboxPaths, net netMode, ns nsMode, filtered bool) string {
	var b strings.Builder
	b.WriteString("Commands run in a sandbox (Linux Landlock). They can create, change and delete files only in the workspace, in $HOME and $TMPDIR (private folders kept for this session)")
	if extra := p.writable[3:]; len(extra) > 0 {
		b.WriteString(" and in " + strings.Join(extra, ", "))
	}
	b.WriteString("; elsewhere writes fail with \"Permission denied\". They cannot read files in users' home folders")
	if len(p.readable) > 0 {
		b.WriteString(" (but can read " + strings.Join(p.readable, ", ") + ")")
	}
	b.WriteString(" nor devices other than /dev/null, /dev/zero and /dev/random, and cannot gain privileges. ")
	switch net {
	case netAllowed:
		b.WriteString("They may use the network.")
	case netUnshare:
		b.WriteString("They have no network: no DNS, no connections to the internet or to this machine's services; servers they start on localhost can be reached from inside the sandbox only.")
	case netCloneUser:
		b.WriteString("They have no network, localhost included: no DNS, no connections, no listening on localhost.")
	case netTCP:
		b.WriteString("TCP connections and listening are refused; other network protocols (UDP, DNS) are not confined on this machine.")
	case netOpen:
		b.WriteString("Their network access is not confined on this machine.")
	}
	if ns != nsNone {
		b.WriteString(" Each command has its own process and IPC namespaces: it cannot signal other processes of this machine (ps still lists them), and every process it starts, in the background or detached (setsid, nohup, daemons), is killed when the command ends.")
	}
	if ns == nsUser {
		b.WriteString(" It runs in a user namespace, where user and file owner IDs show as nobody.")
	}
	if filtered {
		b.WriteString(" The kernel keyrings (keyctl) and extended attributes (setfattr) are off limits: those calls fail with \"Operation not permitted\".")
	}
	return b.String()
}
