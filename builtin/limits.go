package builtin

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Defaults for the zero fields of [ResourceLimits].
const (
	DefaultMemoryLimit   = 8 << 30
	DefaultFileSizeLimit = 4 << 30
	DefaultProcessLimit  = 4096
	DefaultCPUTimeLimit  = 10 * time.Minute
)

// ResourceLimits bounds what the processes of an exec_shell command may
// use, so that a runaway or hostile command cannot take the machine's
// memory, disk or processes. Its zero value gives the defaults above; a
// negative field removes that limit. They are kernel resource limits
// (setrlimit), set on the command's first process before it runs and
// inherited by every process it starts; they hold on Linux only, with
// or without the sandbox (see the package documentation for where each
// holds).
//
// A command that goes over one fails with a result that names the
// limit: the kernel stops a process that writes past FileSize or runs
// past CPUTime with a signal, and refuses the allocation or the new
// process past Memory or Processes, which programs report in their own
// words ("Cannot allocate memory", MemoryError, "fork: Resource
// temporarily unavailable"); the result then says which limit the
// output points to.
type ResourceLimits struct {
	// Memory caps the memory each process may allocate, in bytes: its
	// heap and other private writable mappings (RLIMIT_DATA), not the
	// address space it reserves, so that programs that reserve much more
	// than they use (Chromium, WebAssembly in Node.js, the race detector)
	// still run. 0 means 8 GiB.
	Memory int64
	// FileSize caps the size of each file a process writes, in bytes
	// (RLIMIT_FSIZE); 0 means 4 GiB.
	FileSize int64
	// Processes caps how many processes and threads a command runs at
	// once (RLIMIT_NPROC, counted in the command's own user namespace);
	// 0 means 4096. Where commands get no user namespace the kernel
	// counts every process of the user instead, and this limit applies
	// only when set; as root without one, it does not apply.
	Processes int
	// CPUTime caps the processor time of each process (RLIMIT_CPU); 0
	// means 10 minutes. The command's timeout bounds the wall-clock time
	// of the whole command.
	CPUTime time.Duration
}

// withDefaults fills the zero fields with the defaults and turns the
// negative ones into 0, which means no limit from here on.
func (l ResourceLimits) withDefaults() ResourceLimits {
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return ResourceLimits{
		Memory:    pick(l.Memory, DefaultMemoryLimit),
		FileSize:  pick(l.FileSize, DefaultFileSizeLimit),
		Processes: int(pick(int64(l.Processes), DefaultProcessLimit)),
		CPUTime:   time.Duration(pick(int64(l.CPUTime), int64(DefaultCPUTimeLimit))),
	}
}

// The names of the limits, as results give them in Meta.Extra["limit"].
const (
	limitMemory    = "memory"
	limitFileSize  = "file_size"
	limitProcesses = "processes"
	limitCPUTime   = "cpu_time"
)

// describe says, for the tool's description, what the limits in force
// are (l with defaults applied; a zero field is not in force).
func (l ResourceLimits) describe() string {
	var per []string
	if l.Memory > 0 {
		per = append(per, "allocate at most "+formatBytes(l.Memory)+" of memory")
	}
	if l.FileSize > 0 {
		per = append(per, "write files of at most "+formatBytes(l.FileSize))
	}
	if l.CPUTime > 0 {
		per = append(per, "use at most "+formatDuration(l.CPUTime)+" of CPU time")
	}
	var parts []string
	if len(per) > 0 {
		parts = append(parts, "each process may "+joinAnd(per))
	}
	if l.Processes > 0 {
		parts = append(parts, fmt.Sprintf("a command may run at most %d processes and threads at once", l.Processes))
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	return "Resource limits: " + s + "."
}

// exceeded says which limit a failed command ran into, if the way it
// ended or its output (the kept head and tail) shows one, and the
// message of its result.
func (l ResourceLimits) exceeded(ps *os.ProcessState, output string) (limit, message string) {
	sig := limitSignal(ps)
	cpu := ps != nil && l.CPUTime > 0 && ps.UserTime()+ps.SystemTime() >= l.CPUTime
	lower := strings.ToLower(output)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(lower, w) {
				return true
			}
		}
		return false
	}
	switch {
	case l.FileSize > 0 && sig == limitFileSize:
		return limitFileSize, "the command exceeded the file size limit of " + formatBytes(l.FileSize) + " per file, and was stopped"
	case l.CPUTime > 0 && (sig == limitCPUTime || sig == "kill" && cpu):
		return limitCPUTime, "the command exceeded the CPU time limit of " + formatDuration(l.CPUTime) + " per process, and was stopped"
	case l.FileSize > 0 && has("file size limit exceeded", "file too large"):
		return limitFileSize, "the command failed, apparently on reaching the file size limit of " + formatBytes(l.FileSize) + " per file"
	case l.CPUTime > 0 && has("cpu time limit exceeded"):
		return limitCPUTime, "the command failed, apparently on reaching the CPU time limit of " + formatDuration(l.CPUTime) + " per process"
	case l.Processes > 0 && (has("fork", "thread", "spawn") && has("resource temporarily unavailable", "eagain", "errno=11") ||
		has("cannot fork", "can't fork", "unable to create native thread", "failed to create new os thread")):
		return limitProcesses, fmt.Sprintf("the command failed, apparently on reaching the limit of %d processes and threads per command", l.Processes)
	case l.Memory > 0 && has("cannot allocate memory", "out of memory", "memoryerror", "bad_alloc", "allocation failed",
		"memory allocation of", "cannot allocate", "outofmemoryerror", "memory exhausted", "could not reserve enough space"):
		return limitMemory, "the command failed, apparently on reaching the memory limit of " + formatBytes(l.Memory) + " per process"
	}
	return "", ""
}

// formatBytes writes n in the largest binary unit that divides it, or
// with one decimal: 8 GiB, 1.5 MiB, 1000 bytes.
func formatBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, u := float64(n)/(1<<10), units[0]
	for _, next := range units[1:] {
		if v < 1<<10 {
			break
		}
		v, u = v/(1<<10), next
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), u)
	}
	return fmt.Sprintf("%.1f %s", v, u)
}

// formatDuration writes d in whole minutes or seconds where it can: 10
// minutes, 90 seconds, 1.5s.
func formatDuration(d time.Duration) string {
	switch {
	case d%time.Minute == 0:
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	case d%time.Second == 0:
		if d == time.Second {
			return "1 second"
		}
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}

// joinAnd joins words as a list in a sentence: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
