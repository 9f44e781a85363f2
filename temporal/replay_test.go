package temporal_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/temporal"
)

// TestReplay replays the histories recorded on a real server (go test
// ./temporal -record, with a server; see TestIntegrationWorkerKilled):
// parallel calls, a retry after a killed worker, approvals by signal, a
// cancellation, steering by signal (TestIntegrationSteer: messages, a
// follow-up and an interrupt now that goes on; TestIntegrationInterrupt:
// an interrupt that ends the run), background jobs
// (TestIntegrationJob: a job across turns, job_output, job_cancel), and
// long runs (TestIntegrationLongRunGoldens: context
// management with a compaction and an overflow retry, a wrap-up turn,
// StopWhen, the failure policy, continue-as-new every two turns;
// TestIntegrationMaxDuration: the duration timer, a wrap-up with context
// managers). A change to the workflow that would break the runs in
// flight fails here with a non-determinism error; guard such a change
// with workflow.GetVersion.
func TestReplay(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "history", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no recorded histories")
	longRuns := 0
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			// The replayer runs the workflow code only: it needs the
			// loop's limits and policies, not its model or tools.
			a := temporal.Agent{Loop: &toolloop.AgentLoop{}}
			if name, ok := longRunScenario(filepath.Base(path)); ok {
				if name == "duration" {
					a = durationAgent(nil)
				} else {
					a = longRunAgent(name, nil)
				}
				longRuns++
			}
			temporal.Register(r, a)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), path))
		})
	}
	assert.NotZero(t, longRuns, "no recorded long runs")
}

// longRunScenario returns the scenario of a long run's history file,
// longrun-<scenario>-<execution>.json.
func longRunScenario(file string) (string, bool) {
	rest, ok := strings.CutPrefix(file, "longrun-")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return "", false
	}
	return rest[:i], true
}
