//go:build linux

package builtin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// TestShellEscapedProcesses checks what the package documentation says
// of a process that leaves the command's process group (setsid): in the
// sandbox, which gives each command a PID namespace, it dies with the
// command; unconfined, it outlives the call; and of the mitigation the
// documentation gives for a disabled sandbox, a PID namespace per command
// (the shell run under unshare), whose processes all die with the
// command.
func TestShellEscapedProcesses(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1) here")
	}
	wrapper := []string{unshare, "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "/bin/sh", "-c"}
	if out, err := exec.Command(wrapper[0], append(wrapper[1:], "true")...).CombinedOutput(); err != nil {
		t.Skipf("no unprivileged PID namespaces here: %v: %s", err, out)
	}
	// The escaped process writes late.txt a second after the call ends.
	const command = "setsid sh -c 'sleep 1; echo late > late.txt' >/dev/null 2>&1 </dev/null & sleep 0.5"
	cases := []struct {
		name     string
		shell    ShellOptions
		survives bool
	}{
		{"sandboxed", ShellOptions{}, landlockABI() < 1 || !canCloneUserNS() && !canUnshareNS()},
		{"unconfined", ShellOptions{Sandbox: Sandbox{Disabled: true}}, true},
		{"own PID namespace", ShellOptions{Command: wrapper, Sandbox: Sandbox{Disabled: true}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, dir := newTestWorkspace(t, nil, &Options{Shell: tc.shell})
			r := call(t, src, ExecShell, execShellIn{Command: command})
			require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
			late := filepath.Join(dir, "late.txt")
			if tc.survives {
				require.Eventually(t, func() bool {
					_, err := os.Stat(late)
					return err == nil
				}, 20*time.Second, 50*time.Millisecond, "the escaped process wrote nothing")
				return
			}
			time.Sleep(3 * time.Second)
			assert.NoFileExists(t, late, "a process outlived its PID namespace")
		})
	}
}
