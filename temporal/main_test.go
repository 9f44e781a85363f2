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
	goleak.VerifyTestMain(stopsServer{m})
}

// stopsServer stops the dev server, if the tests started one, before the
// leak check.
type stopsServer struct{ m *testing.M }

func (s stopsServer) Run() int {
	defer stopDevServer()
	return s.m.Run()
}
