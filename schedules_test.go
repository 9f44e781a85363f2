package toolloop_test

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// scheduleRun is how many random schedules a schedule test runs (short
// under -short, else full) and the seed they start from. The stress
// script sets TOOLLOOP_SCHEDULES to run more, and TOOLLOOP_SCHEDULE_SEED
// replays a seed, in every schedule test alike.
func scheduleRun(t *testing.T, short, full int) (n int, seed uint64) {
	t.Helper()
	n = full
	if testing.Short() {
		n = short
	}
	if s := os.Getenv("TOOLLOOP_SCHEDULES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("TOOLLOOP_SCHEDULES: %v", err)
		}
		n = v
	}
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("TOOLLOOP_SCHEDULE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TOOLLOOP_SCHEDULE_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (set TOOLLOOP_SCHEDULE_SEED to replay; goroutines in a bubble still interleave as they will)", seed)
	return n, seed
}
