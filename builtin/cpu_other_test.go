//go:build !unix

package builtin

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
