//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/builtin"
)

// TestRunKilledLeavesNoShell kills toolloop run with SIGKILL while its
// shell command runs, having double-forked and detached sleepers with a
// marker in their command lines, and checks that none of them remains.
func TestRunKilledLeavesNoShell(t *testing.T) {
	ws := t.TempDir()
	probe, err := builtin.Workspace(ws, nil)
	require.NoError(t, err)
	isolated := probe.Confinement().Isolated
	require.NoError(t, probe.Close())
	if !isolated {
		t.Skip("this machine gives shell commands no PID namespace (no user namespaces, not root): a killed toolloop leaves their detached processes behind")
	}
	marker := "toolloop-cmd-marker-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() {
		for _, pid := range marked(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	command := strings.ReplaceAll(`setsid bash -c 'exec -a MARK-setsid sleep 300' >/dev/null 2>&1 </dev/null &
(bash -c 'exec -a MARK-double sleep 300' >/dev/null 2>&1 </dev/null &)
touch started; exec -a MARK-shell sleep 300`, "MARK", marker)
	quoted, err := json.Marshal(command)
	require.NoError(t, err)
	script := writeFile(t, t.TempDir(), "s.json", `[
 {"role":"assistant","tool_calls":[{"id":"c1","name":"exec_shell","arguments":{"command":`+string(quoted)+`,"timeout_seconds":600}}]},
 {"role":"assistant","content":[{"type":"text","text":"Done."}]}]`)

	cmd := exec.Command(binary, "run", "-yes", "-script", script, "-log", filepath.Join(t.TempDir(), "run.jsonl"), "start the sleepers")
	cmd.Dir = ws
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(name, "_API_KEY") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(ws, "started"))
		if err == nil && len(marked(marker)) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell command never started; toolloop printed:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	for deadline := time.Now().Add(15 * time.Second); len(marked(marker)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes of the shell command outlived toolloop: %v", marked(marker))
		}
	}
}

// marked returns the IDs of the processes whose command line holds
// marker.
func marked(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(b), marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}
