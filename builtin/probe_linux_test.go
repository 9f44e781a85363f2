//go:build linux

package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"golang.org/x/sys/unix"
)

// The test binary doubles as a helper program: with TOOLLOOP_TEST_PROBE
// set, TestMain runs the probe it names instead of the tests, with
// TOOLLOOP_TEST_ARG as its argument. Sandboxed commands run it to try
// what a shell utility may not be installed for (System V shared memory,
// keyctl, setxattr), printing what happened: "ok: ..." and exit code 0
// when the attempt worked, "refused: <error>" and 1 when it did not.
// The "host" probe is a program that runs exec_shell and is then killed.
const (
	probeEnv    = "TOOLLOOP_TEST_PROBE"
	probeArgEnv = "TOOLLOOP_TEST_ARG"
)

func runTestProbe() (int, bool) {
	name := os.Getenv(probeEnv)
	if name == "" {
		return 0, false
	}
	arg := os.Getenv(probeArgEnv)
	num := func() int { n, _ := strconv.Atoi(arg); return n }
	refused := func(err error) (int, bool) {
		fmt.Printf("refused: %v\n", err)
		return 1, true
	}
	switch name {
	case "shm-read": // read the System V segment with key arg
		id, err := unix.SysvShmGet(num(), 0, 0)
		if err != nil {
			return refused(err)
		}
		b, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
		if err != nil {
			return refused(err)
		}
		defer unix.SysvShmDetach(b)
		text, _, _ := strings.Cut(string(b), "\x00")
		fmt.Printf("ok: %s\n", text)
	case "shm-make": // make a 1 MiB segment with key arg, and leave it
		id, err := unix.SysvShmGet(num(), 1<<20, unix.IPC_CREAT|0o600)
		if err != nil {
			return refused(err)
		}
		fmt.Printf("ok: made segment %d\n", id)
	case "key-read": // read the key whose serial number is arg
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, num(), buf, 0)
		if err != nil {
			return refused(err)
		}
		fmt.Printf("ok: %s\n", buf[:min(n, len(buf))])
	case "key-add": // plant a key named arg in the user keyring
		id, err := unix.AddKey("user", arg, []byte("planted"), unix.KEY_SPEC_USER_KEYRING)
		if err != nil {
			return refused(err)
		}
		fmt.Printf("ok: added key %d\n", id)
	case "xattr-set": // set user.toolloop on the file arg
		if err := unix.Setxattr(arg, "user.toolloop", []byte("planted"), 0); err != nil {
			return refused(err)
		}
		fmt.Println("ok: set")
	case "host": // run the command arg in a workspace at $TOOLLOOP_TEST_WS, then wait to be killed
		return runHostProbe(arg), true
	default:
		fmt.Printf("unknown probe %q\n", name)
		return 2, true
	}
	return 0, true
}

// runHostProbe is a program using exec_shell: it runs command in the
// workspace and waits to be killed.
func runHostProbe(command string) int {
	src, err := Workspace(os.Getenv("TOOLLOOP_TEST_WS"), nil)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	args := fmt.Sprintf(`{"command": %q, "timeout_seconds": 600}`, command)
	r, err := src.Tool(ExecShell).Run(context.Background(), &toolloop.Call{ID: "c1", Name: ExecShell, Arguments: json.RawMessage(args)})
	if err != nil {
		fmt.Println(err)
	} else {
		fmt.Println(r.Text())
	}
	time.Sleep(time.Hour)
	return 0
}

// probe returns the command line that runs the named probe with arg.
func probe(t testing.TB, name, arg string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s=%s %s=%q %q", probeEnv, name, probeArgEnv, arg, exe)
}

// withMarker returns the IDs of the processes, other than this one,
// whose command line holds marker.
func withMarker(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killMarked kills the processes withMarker finds, for a test's cleanup.
func killMarked(marker string) {
	for _, pid := range withMarker(marker) {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}
