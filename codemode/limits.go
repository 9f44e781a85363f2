package codemode

import (
	"fmt"
	"time"
)

// Limits bound what one program may use. Its zero value is the defaults
// each field documents; a negative value is treated as its default too.
// A program that reaches a limit ends as a failed result of kind
// execution_failed whose message names the limit, never as a crash: the
// console output it printed so far comes with it.
//
// The wall-clock limit is not here: it is the call's timeout
// ([Tool.Timeout], or the loop's ToolTimeout), and a program that runs past
// it ends with kind timeout.
type Limits struct {
	// ComputeTime is how long the interpreter may spend running the
	// program's JavaScript, added up over the call; the time spent waiting
	// for tools does not count. The interpreter counts no instructions, so
	// this is the stand-in for a step limit: a watchdog interrupts the
	// program once it has used this much time. Default 5s.
	ComputeTime time.Duration
	// Memory is how many bytes the heap may grow by while the program
	// runs. It is measured, not enforced by the allocator: a watchdog
	// samples the Go heap (runtime/metrics, the bytes of heap objects)
	// every few milliseconds, and when it has grown by more than Memory
	// since the program started, forces a garbage collection and, if the
	// heap is still that large, interrupts the program. The measure is
	// process-wide, so it is approximate: other goroutines' allocations
	// count, and memory they free hides the program's. The built-ins that
	// make a large string or array in one step (String.prototype.repeat,
	// padStart, padEnd, Array.prototype.join, fill, new Array(n), ...) are
	// checked before they allocate, against the same limit. Default 256 MiB.
	Memory int64
	// MaxStackDepth is the deepest the program's calls may nest; a
	// recursion without end stops there. It also bounds the nesting of
	// the values JSON.stringify and Array.prototype.flat take, as they
	// recurse in Go: a deeper value is a RangeError. Default 1000.
	MaxStackDepth int
	// MaxConsoleBytes is how much console output (console.log and its
	// kin) is kept: the first bytes, and a line saying how many were
	// dropped. Default 16 KiB.
	MaxConsoleBytes int
	// MaxResultBytes is how long the program's return value may be, as
	// text (a string as is, any other value as JSON). A longer value is
	// cut, and the result says so. Default 64 KiB.
	MaxResultBytes int
}

// The defaults of [Limits].
const (
	DefaultComputeTime     = 5 * time.Second
	DefaultMemory          = 256 << 20
	DefaultMaxStackDepth   = 1000
	DefaultMaxConsoleBytes = 16 << 10
	DefaultMaxResultBytes  = 64 << 10
)

// withDefaults returns l with every zero or negative field set to its
// default.
func (l Limits) withDefaults() Limits {
	if l.ComputeTime <= 0 {
		l.ComputeTime = DefaultComputeTime
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.MaxStackDepth <= 0 {
		l.MaxStackDepth = DefaultMaxStackDepth
	}
	if l.MaxConsoleBytes <= 0 {
		l.MaxConsoleBytes = DefaultMaxConsoleBytes
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	return l
}

// Limit names a bound a program reached. A result that a limit ended
// holds it in Meta.Extra under "limit", as a string.
type Limit string

// The limits a program can reach.
const (
	LimitComputeTime Limit = "compute_time"
	LimitMemory      Limit = "memory"
	LimitStackDepth  Limit = "stack_depth"
	LimitWallClock   Limit = "wall_clock"
)

// limitError says which limit ended a program.
type limitError struct {
	limit Limit
	// value is the bound as configured, for the message.
	value string
}

func (e *limitError) Error() string {
	switch e.limit {
	case LimitComputeTime:
		return fmt.Sprintf("the program used more than its %s of compute time (time spent running JavaScript, not waiting for tools): it may loop without end", e.value)
	case LimitMemory:
		return fmt.Sprintf("the program used more than its %s of memory", e.value)
	case LimitStackDepth:
		return fmt.Sprintf("the program's calls nested deeper than %s: it may recurse without end", e.value)
	case LimitWallClock:
		return "the program ran past the call's time limit"
	}
	return fmt.Sprintf("the program reached its %s limit (%s)", e.limit, e.value)
}

// formatBytes renders n bytes for a message.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
