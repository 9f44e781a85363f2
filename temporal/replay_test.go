package temporal_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/temporal"
)

// TestReplay replays the histories recorded on a real server (go test
// ./temporal -record, with a server; see TestIntegrationWorkerKilled):
// parallel calls, a retry after a killed worker, approvals by signal and
// a cancellation. A change to the workflow that would break the runs in
// flight fails here with a non-determinism error; guard such a change
// with workflow.GetVersion.
func TestReplay(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "history", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no recorded histories")
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			// The replayer runs the workflow code only: it needs the
			// loop's limits, not its model or tools.
			temporal.Register(r, temporal.Agent{Loop: &toolloop.AgentLoop{}})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), path))
		})
	}
}
