package temporal_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind. Run as
// the worker process of the crash test, it is that worker instead.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain())
	}
	// The SDK's test environment parks an activity's retry in a goroutine
	// (and its timeout watchdog in another) that waits for the retry's
	// mock time for ever if the workflow ends first, as it does when
	// Budget.MaxDuration runs out during a retry's backoff
	// (TestMaxDurationAcrossContinueAsNew). Those goroutines are the test
	// environment's, not the package's.
	goleak.VerifyTestMain(stopsServer{m},
		goleak.IgnoreTopFunction("go.temporal.io/sdk/internal.(*testWorkflowEnvironmentImpl).executeActivityWithRetryForTest"),
		goleak.IgnoreTopFunction("go.temporal.io/sdk/internal.(*testWorkflowEnvironmentImpl).ExecuteActivity.func2"))
}

// stopsServer stops the dev server, if the tests started one, before the
// leak check.
type stopsServer struct{ m *testing.M }

func (s stopsServer) Run() int {
	defer stopDevServer()
	return s.m.Run()
}
