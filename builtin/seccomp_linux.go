//go:build linux

package builtin

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// refusedSyscalls are the system calls a confined command may not make;
// each fails with EPERM. The kernel keyrings are shared with the host
// (a command could read the user's keys and plant its own); extended
// attributes are not covered by Landlock, and no filter can tell where
// the file a call names lies, so no command may set or remove one,
// anywhere; io_uring can do the latter (IORING_OP_SETXATTR) without a
// system call the filter sees.
var refusedSyscalls = []string{
	"add_key", "request_key", "keyctl",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
}

// compatArch is the other system call interface a process of this
// architecture can use (32-bit x86 through int 0x80 on amd64, 32-bit
// Arm on arm64), which a filter must cover too.
var compatArch = map[string]*arch.Info{"amd64": arch.I386, "arm64": arch.ARM}

// syscallFilter is the seccomp filter confined commands get, built once
// with go-seccomp-bpf; nil where the library has no system call table
// for this architecture.
var syscallFilter = sync.OnceValues(func() (*unix.SockFprog, error) {
	if _, err := arch.GetInfo(""); err != nil {
		return nil, nil
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls:      []seccomp.SyscallGroup{{Names: refusedSyscalls, Action: seccomp.ActionErrno}},
	}
	native, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("building the system call filter: %w", err)
	}
	// The library's program allows every call of another architecture:
	// refuse the same calls there.
	var prog []bpf.Instruction
	if compat := compatArch[runtime.GOARCH]; compat != nil {
		nativeInfo, _ := arch.GetInfo("")
		p := seccomp.NewProgram()
		deny := p.NewLabel()
		var nums []uint32
		for _, name := range refusedSyscalls {
			if n, ok := compat.SyscallNames[name]; ok {
				nums = append(nums, uint32(n))
			}
		}
		for _, n := range nums {
			p.JmpIfTrue(bpf.JumpEqual, n, deny)
		}
		p.Ret(seccomp.ActionAllow)
		p.SetLabel(deny)
		p.Ret(seccomp.ActionErrno)
		body, err := p.Assemble()
		if err != nil {
			return nil, fmt.Errorf("building the system call filter: %w", err)
		}
		const archOffset, nrOffset = 4, 0 // in struct seccomp_data
		prog = append(prog,
			bpf.LoadAbsolute{Off: archOffset, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(nativeInfo.ID), SkipTrue: uint8(len(body) + 2)},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(compat.ID), SkipFalse: uint8(len(body) + 1)},
			bpf.LoadAbsolute{Off: nrOffset, Size: 4},
		)
		prog = append(prog, body...)
		// Any other architecture: the library's program decides (allow).
	}
	prog = append(prog, native...)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("building the system call filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return &unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}, nil
})

// loadFilter installs the filter on the calling thread only (no TSYNC:
// the program's other threads stay free); no_new_privs must be set.
func loadFilter(prog *unix.SockFprog) error {
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(prog)))
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
