package builtin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestResourceLimitsDefaults(t *testing.T) {
	assert.Equal(t, ResourceLimits{Memory: 8 << 30, FileSize: 4 << 30, Processes: 4096, CPUTime: 10 * time.Minute}, ResourceLimits{}.withDefaults())
	assert.Equal(t, ResourceLimits{Memory: 1 << 20}, ResourceLimits{Memory: 1 << 20, FileSize: -1, Processes: -1, CPUTime: -1}.withDefaults())
	assert.Equal(t, "", ResourceLimits{}.describe(), "no limits in force")
	assert.Equal(t, "Resource limits: each process may allocate at most 8 GiB of memory, write files of at most 4 GiB and use at most 10 minutes of CPU time; a command may run at most 4096 processes and threads at once.",
		ResourceLimits{}.withDefaults().describe())
	assert.Equal(t, "Resource limits: each process may use at most 90 seconds of CPU time.", ResourceLimits{CPUTime: 90 * time.Second}.describe())
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{1000: "1000 bytes", 1 << 10: "1 KiB", 1536 << 10: "1.5 MiB", 8 << 30: "8 GiB", 3 << 40: "3 TiB"} {
		assert.Equal(t, want, formatBytes(n))
	}
}

// TestResourceLimitsExceededOutput checks which limit a failed command's
// output points to, whatever program reported it.
func TestResourceLimitsExceededOutput(t *testing.T) {
	l := ResourceLimits{}.withDefaults()
	for out, want := range map[string]string{
		"bash: xrealloc: cannot allocate 66715648 bytes":                                   limitMemory,
		"Traceback (most recent call last):\nMemoryError":                                  limitMemory,
		"fatal error: runtime: out of memory":                                              limitMemory,
		"memory allocation of 1073741824 bytes failed":                                     limitMemory,
		"sh: 0: Cannot fork":                                                               limitProcesses,
		"bash: fork: retry: Resource temporarily unavailable":                              limitProcesses,
		"runtime: failed to create new OS thread (have 30 already; errno=11)":              limitProcesses,
		"line 1: 3 File size limit exceeded (core dumped) head -c 2097152 /dev/zero > big": limitFileSize,
		"OSError: [Errno 27] File too large":                                               limitFileSize,
		"bash: line 1: 7 CPU time limit exceeded (core dumped) python3 spin.py":            limitCPUTime,
		"FAIL: TestParse (0.00s)\n    parse_test.go:12: got 3, want 4":                     "",
		"read: Resource temporarily unavailable":                                           "",
	} {
		got, _ := l.exceeded(nil, out)
		assert.Equal(t, want, got, out)
	}
	got, _ := ResourceLimits{}.exceeded(nil, "MemoryError")
	assert.Equal(t, "", got, "no limit in force, none exceeded")
}
