//go:build unix

package builtin

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time used so far by this process, its ended threads
// included, and by the children it has waited for: a cost that, unlike
// wall time, another load on the machine hardly changes.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}
