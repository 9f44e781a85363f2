//go:build linux

package builtin

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// TestShellResourceLimits runs a command past each limit, sandboxed and
// unconfined, and checks the result names the limit.
func TestShellResourceLimits(t *testing.T) {
	cases := []struct {
		name, command string
		limits        ResourceLimits
		limit, says   string
		userNS        bool // holds only for a user other than root, in a user namespace of the command's own
	}{
		{"file size", "head -c 2097152 /dev/zero > big", ResourceLimits{FileSize: 1 << 20},
			limitFileSize, "the command exceeded the file size limit of 1 MiB per file", false},
		{"cpu time", "while :; do :; done", ResourceLimits{CPUTime: time.Second},
			limitCPUTime, "the command exceeded the CPU time limit of 1 second per process", false},
		{"memory", `x=$(head -c 100000000 /dev/zero | tr '\0' a); echo ${#x}`, ResourceLimits{Memory: 64 << 20},
			limitMemory, "memory limit of 64 MiB per process", false},
		{"processes", `sh -c 'i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done; wait'`, ResourceLimits{Processes: 30},
			limitProcesses, "limit of 30 processes and threads per command", true},
	}
	for _, sb := range []struct {
		name string
		sb   Sandbox
	}{{"sandboxed", Sandbox{}}, {"unconfined", Sandbox{Disabled: true}}} {
		for _, c := range cases {
			t.Run(sb.name+"/"+c.name, func(t *testing.T) {
				src, dir := newTestWorkspace(t, nil, &Options{Shell: ShellOptions{Sandbox: sb.sb, Limits: c.limits}})
				if c.userNS && os.Geteuid() == 0 {
					t.Skip("the kernel does not limit root's processes (RLIMIT_NPROC)")
				}
				if c.userNS && (sb.sb.Disabled || src.ws.sandbox.plat == nil || src.ws.sandbox.plat.ns != nsUser) {
					t.Skip("the process count is the user's, not the command's, where commands get no user namespace of their own")
				}
				start := time.Now()
				r := call(t, src, ExecShell, execShellIn{Command: c.command, TimeoutSeconds: 60})
				require.Equal(t, toolloop.KindExecutionFailed, kindOf(r), r.Text())
				assert.Less(t, time.Since(start), 30*time.Second)
				assert.Equal(t, c.limit, r.Meta.Extra["limit"], r.Text())
				assert.Contains(t, r.Error.Message, c.says)
				if c.limit == limitFileSize {
					fi, err := os.Stat(dir + "/big")
					require.NoError(t, err)
					assert.LessOrEqual(t, fi.Size(), int64(1<<20))
				}
			})
		}
	}
}

// TestShellResourceLimitsDefaults checks what a command gets with the
// zero ResourceLimits, and that a negative field lifts a limit.
func TestShellResourceLimitsDefaults(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, nil)
	r := call(t, src, ExecShell, execShellIn{Command: "ulimit -d -f -t -c"})
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	// bash prints kilobytes for -d, 1024-byte blocks for -f, seconds for -t.
	assert.Contains(t, r.Text(), "data seg size               (kbytes, -d) 8388608\n")
	assert.Contains(t, r.Text(), "file size                   (blocks, -f) 4194304\n")
	assert.Contains(t, r.Text(), "cpu time                   (seconds, -t) 600\n")
	assert.Contains(t, r.Text(), "core file size              (blocks, -c) 0\n")
	assert.Contains(t, src.Tool(ExecShell).Spec().Description, "each process may allocate at most 8 GiB of memory, write files of at most 4 GiB and use at most 10 minutes of CPU time")

	off, _ := newTestWorkspace(t, nil, &Options{Shell: ShellOptions{Limits: ResourceLimits{Memory: -1, FileSize: -1, CPUTime: -1, Processes: -1}}})
	r = call(t, off, ExecShell, execShellIn{Command: "ulimit -d -f -t"})
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	assert.Equal(t, 3, strings.Count(r.Text(), "unlimited\n"), r.Text())
	assert.NotContains(t, off.Tool(ExecShell).Spec().Description, "Resource limits")
}
