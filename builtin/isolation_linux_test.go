//go:build linux

package builtin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
	"golang.org/x/sys/unix"
)

// The tests of issue 35: a confined command shares nothing with the host
// but the workspace and read-only system files, and nothing it starts
// outlives its call, its source or the program.

// isolated returns an escape target and a source whose commands are
// isolated, or skips where this machine cannot isolate them (no user
// namespaces and not root).
func isolated(t *testing.T) (*escapeTarget, *Source) {
	t.Helper()
	requireLandlock(t)
	e := newEscapeTarget(t)
	src := e.workspace(t, Sandbox{Required: true})
	requireIsolation(t, src)
	return e, src
}

func requireIsolation(t *testing.T, src *Source) {
	t.Helper()
	if !src.Confinement().Isolated {
		t.Skip("this machine gives commands no namespaces of their own (user namespaces are disabled, and the program is not root)")
	}
}

// marker is a string to put in the command lines of a test's processes,
// to find them in /proc; they are killed when the test ends, should the
// test fail.
func marker(t *testing.T) string {
	m := "toolloop-marker-" + strconv.Itoa(os.Getpid()) + "-" + strings.ReplaceAll(t.Name(), "/", "-")
	t.Cleanup(func() { killMarked(m) })
	return m
}

// requireGone waits for every process with marker to end.
func requireGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := withMarker(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var lines []string
			for _, pid := range left {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				lines = append(lines, strconv.Itoa(pid)+": "+strings.ReplaceAll(string(b), "\x00", " "))
			}
			t.Fatalf("processes of the command outlived it:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSandboxHostSharedMemory(t *testing.T) {
	_, src := isolated(t)
	key := 0x7a000000 + os.Getpid()&0xffff<<4
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	b, err := unix.SysvShmAttach(id, 0, 0)
	require.NoError(t, err)
	secret := "shm-secret-" + strconv.Itoa(os.Getpid())
	copy(b, secret)
	require.NoError(t, unix.SysvShmDetach(b))

	r := call(t, src, ExecShell, execShellIn{Command: probe(t, "shm-read", strconv.Itoa(key))})
	assert.NotContains(t, r.Text(), secret, "a command read the host's shared memory")
	assert.Contains(t, r.Text(), "refused: no such file or directory", "the segment is not there at all")

	// One the command makes is its own, gone when it ends.
	made := key + 1
	r = call(t, src, ExecShell, execShellIn{Command: probe(t, "shm-make", strconv.Itoa(made))})
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	if id, err := unix.SysvShmGet(made, 0, 0); err == nil {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		t.Fatal("the command's shared memory segment outlived it, in the host's namespace")
	}
}

func TestSandboxKeyring(t *testing.T) {
	_, src := isolated(t)
	secret := "key-secret-" + strconv.Itoa(os.Getpid())
	serial, err := unix.AddKey("user", "toolloop-test-"+strconv.Itoa(os.Getpid()), []byte(secret), unix.KEY_SPEC_USER_KEYRING)
	if err != nil {
		t.Skipf("this test cannot use the kernel keyring itself: %v", err)
	}
	t.Cleanup(func() { _, _ = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, serial, 0, 0, 0) })
	// Readable by the user, not only by its possessors, so that a
	// command in another user namespace could read it too.
	require.NoError(t, unix.KeyctlSetperm(serial, 0x3f3f0000))

	r := call(t, src, ExecShell, execShellIn{Command: probe(t, "key-read", strconv.Itoa(serial))})
	assert.NotContains(t, r.Text(), secret, "a command read the user's key")
	assert.Contains(t, r.Text(), "refused: operation not permitted")

	planted := "toolloop-planted-" + strconv.Itoa(os.Getpid())
	r = call(t, src, ExecShell, execShellIn{Command: probe(t, "key-add", planted)})
	assert.Contains(t, r.Text(), "refused: operation not permitted")
	if id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", planted, 0); err == nil {
		_, _ = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
		t.Fatal("a command planted a key in the user's keyring")
	}
}

// TestSandboxHostTerminal checks that a command cannot read the
// terminal of the person running the agent by its path, /dev/pts/N,
// where a line they typed waits.
func TestSandboxHostTerminal(t *testing.T) {
	_, src := isolated(t)
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal for this test: %v", err)
	}
	defer master.Close()
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	pts := "/dev/pts/" + strconv.Itoa(n)
	// Held open, as the person's shell holds its terminal.
	slave, err := os.OpenFile(pts, os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	defer slave.Close()
	_, err = master.Write([]byte("typed-secret\n"))
	require.NoError(t, err)

	r := call(t, src, ExecShell, execShellIn{Command: "head -n 1 " + pts, TimeoutSeconds: 10})
	assert.NotContains(t, r.Text(), "typed-secret", "a command read the person's terminal")
	assert.Contains(t, r.Text(), "Permission denied")
	r = call(t, src, ExecShell, execShellIn{Command: "echo injected > " + pts})
	assert.Contains(t, r.Text(), "Permission denied")
}

// TestSandboxDevices checks that /dev is closed but for the devices
// commands need: a raw disk would give root every file on it.
func TestSandboxDevices(t *testing.T) {
	_, src := isolated(t)
	r := call(t, src, ExecShell, execShellIn{Command: "head -c 4 /dev/urandom | wc -c && head -c 4 /dev/random | wc -c && head -c 4 /dev/zero | wc -c && echo x > /dev/null && ls /dev >/dev/null && echo ok"})
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	assert.Equal(t, "4\n4\n4\nok\n[exit code 0]", r.Text())

	entries, err := os.ReadDir("/dev")
	require.NoError(t, err)
	tried := 0
	for _, e := range entries {
		p := filepath.Join("/dev", e.Name())
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
			continue
		}
		f, err := os.Open(p) // a block device this program can read
		if err != nil {
			continue
		}
		f.Close()
		tried++
		r := call(t, src, ExecShell, execShellIn{Command: "head -c 512 " + p + " | wc -c"})
		assert.Contains(t, r.Text(), "Permission denied", "a command read the disk %s", p)
	}
	t.Logf("%d readable block devices tried", tried)
}

// TestSandboxExtendedAttributes checks that a command cannot set an
// extended attribute on a file outside the workspace (nor inside: no
// filter can tell the two apart), which Landlock does not cover.
func TestSandboxExtendedAttributes(t *testing.T) {
	e, src := isolated(t)
	scratch := filepath.Join(e.parent, "scratch")
	require.NoError(t, os.WriteFile(scratch, nil, 0o644))
	if err := unix.Setxattr(scratch, "user.probe", []byte("x"), 0); err != nil {
		t.Skipf("this file system takes no user extended attributes: %v", err)
	}
	sentinel := filepath.Join(e.outside, "sentinel.txt")
	for _, target := range []string{sentinel, filepath.Join(e.ws, "keep.txt")} {
		r := call(t, src, ExecShell, execShellIn{Command: probe(t, "xattr-set", target)})
		assert.Contains(t, r.Text(), "refused: operation not permitted", target)
		_, err := unix.Getxattr(target, "user.toolloop", make([]byte, 64))
		assert.ErrorIs(t, err, unix.ENODATA, "a command set an extended attribute on %s", target)
	}
}

// TestSandboxProcessesEndWithCall checks that every process a command
// starts, in the background, double-forked or in a session of its own,
// is killed when the call ends, and writes nothing afterwards.
func TestSandboxProcessesEndWithCall(t *testing.T) {
	e, src := isolated(t)
	m := marker(t)
	command := strings.NewReplacer("MARK", m).Replace(
		`setsid bash -c 'exec -a MARK-setsid sleep 300' >/dev/null 2>&1 </dev/null &
(bash -c 'exec -a MARK-double sleep 300' >/dev/null 2>&1 </dev/null &)
setsid bash -c 'while :; do date > tick; sleep 0.1; done # MARK' >/dev/null 2>&1 </dev/null &
nohup bash -c 'exec -a MARK-nohup sleep 300' >/dev/null 2>&1 </dev/null &
until [ -e tick ]; do sleep 0.05; done; echo started`)
	r := call(t, src, ExecShell, execShellIn{Command: command})
	require.Equal(t, "started\n[exit code 0]", r.Text())
	requireGone(t, m)
	tick := filepath.Join(e.ws, "tick")
	require.NoError(t, os.Remove(tick))
	time.Sleep(500 * time.Millisecond)
	assert.NoFileExists(t, tick, "a process of the command still writes in the workspace")
}

// TestSandboxCloseKillsCommands checks that closing the source kills a
// command still running, with every process it started.
func TestSandboxCloseKillsCommands(t *testing.T) {
	e, src := isolated(t)
	m := marker(t)
	command := strings.NewReplacer("MARK", m).Replace(
		`setsid bash -c 'while :; do date > tick; sleep 0.1; done # MARK' >/dev/null 2>&1 </dev/null &
until [ -e tick ]; do sleep 0.05; done; touch started; exec -a MARK-shell sleep 300`)
	done := make(chan *toolloop.ToolResult, 1)
	go func() {
		done <- callCtx(context.Background(), t, src, ExecShell, execShellIn{Command: command, TimeoutSeconds: 120}, nil)
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(e.ws, "started")); return err == nil },
		20*time.Second, 20*time.Millisecond, "the command never started")
	require.NoError(t, src.Close())
	select {
	case r := <-done:
		assert.Equal(t, toolloop.KindExecutionFailed, kindOf(r), r.Text())
	case <-time.After(20 * time.Second):
		t.Fatal("the command kept running after the source closed")
	}
	requireGone(t, m)
	tick := filepath.Join(e.ws, "tick")
	_ = os.Remove(tick)
	time.Sleep(500 * time.Millisecond)
	assert.NoFileExists(t, tick, "a process of the command still writes in the workspace after Close")
}

// TestSandboxKillAll checks that kill -1 in a command (every process the
// user may signal) reaches nothing outside it.
func TestSandboxKillAll(t *testing.T) {
	_, src := isolated(t)
	other := exec.Command("sleep", "60")
	require.NoError(t, other.Start())
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	r := call(t, src, ExecShell, execShellIn{Command: "kill -9 -1; echo survived"})
	assert.Contains(t, r.Text(), "survived")
	assert.NoError(t, other.Process.Signal(syscall.Signal(0)), "kill -1 in a command killed a process outside it")
}

// TestShellHostKilled starts a program (this test binary, as a helper)
// whose command double-forks, detaches and sleeps, kills the program
// with SIGKILL, and checks that no process of the command remains.
func TestShellHostKilled(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	src, err := Workspace(ws, nil)
	require.NoError(t, err)
	requireIsolation(t, src)
	require.NoError(t, src.Close())
	m := marker(t)
	command := strings.NewReplacer("MARK", m).Replace(
		`setsid bash -c 'exec -a MARK-setsid sleep 300' >/dev/null 2>&1 </dev/null &
(bash -c 'exec -a MARK-double sleep 300' >/dev/null 2>&1 </dev/null &)
touch started; exec -a MARK-shell sleep 300`)
	exe, err := os.Executable()
	require.NoError(t, err)
	host := exec.Command(exe)
	host.Env = append(os.Environ(), probeEnv+"=host", probeArgEnv+"="+command, "TOOLLOOP_TEST_WS="+ws)
	var out strings.Builder
	host.Stdout, host.Stderr = &out, &out
	require.NoError(t, host.Start())
	defer func() { _ = host.Process.Kill(); _ = host.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil && len(withMarker(m)) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			_ = host.Process.Kill()
			_ = host.Wait()
			t.Fatalf("the command never started; the program printed:\n%s", out.String())
		}
	}

	require.NoError(t, host.Process.Signal(syscall.SIGKILL))
	_ = host.Wait()
	requireGone(t, m)
}

// TestSandboxWithoutNamespaces runs commands the way a machine without
// user namespaces runs them for a user other than root, the in-process
// path: Landlock, the system call filter and the limits, no namespaces.
func TestSandboxWithoutNamespaces(t *testing.T) {
	requireLandlock(t)
	e := newEscapeTarget(t)
	src := e.workspace(t, Sandbox{Required: true})
	pl := src.ws.sandbox.plat
	pl.ns, pl.traced = nsNone, false
	if pl.net == netCloneUser {
		pl.net = netTCP
	}
	r := call(t, src, ExecShell, execShellIn{Command: "echo in > in.txt && cat in.txt && echo out > " + e.outside + "/x.txt"})
	assert.Contains(t, r.Text(), "in\n")
	assert.Contains(t, r.Text(), "Permission denied")
	assert.NoFileExists(t, filepath.Join(e.outside, "x.txt"))
	r = call(t, src, ExecShell, execShellIn{Command: probe(t, "key-add", "toolloop-unused")})
	assert.Contains(t, r.Text(), "refused: operation not permitted")
	// Without tracing, the limits are set just after the exec, which
	// leaves the command a moment without them (see launch_linux.go): the
	// shell waits up to 5 s for them to land, and once a loaded machine
	// ran its builtin before.
	r = call(t, src, ExecShell, execShellIn{Command: `for i in $(seq 50); do [ "$(ulimit -f)" = 4194304 ] && break; sleep 0.1; done; ulimit -f`})
	assert.Equal(t, "4194304\n[exit code 0]", r.Text(), "limits set just after the exec")
}
