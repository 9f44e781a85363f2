package temporal_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	tsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/internal/golden"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/temporal"
)

// quickRetry keeps retried tests short; the test environment skips the
// waits anyway.
var quickRetry = &tsdk.RetryPolicy{InitialInterval: time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: 3}

// newEnv returns a test environment with the agent registered.
func newEnv(t *testing.T, a temporal.Agent) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	if a.HeartbeatTimeout == 0 {
		a.HeartbeatTimeout = 2 * time.Second
	}
	temporal.Register(env, a)
	return env
}

// envRun lets temporal.Wait read the test environment's outcome, so the
// tests see errors as a client would. The embedded interface, left nil,
// keeps the type compiling when the SDK adds methods to WorkflowRun; Wait
// calls only Get.
type envRun struct {
	client.WorkflowRun
	env *testsuite.TestWorkflowEnvironment
}

func (r envRun) GetID() string    { return "default-test-workflow-id" }
func (r envRun) GetRunID() string { return "default-test-run-id" }
func (r envRun) Get(_ context.Context, v any) error {
	if err := r.env.GetWorkflowError(); err != nil {
		return err
	}
	return r.env.GetWorkflowResult(v)
}
func (r envRun) GetWithOptions(ctx context.Context, v any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, v)
}

// run executes the agent's workflow on msgs and returns its outcome as
// temporal.Wait reports it.
func run(t *testing.T, env *testsuite.TestWorkflowEnvironment, name string, msgs []toolloop.Message) (*toolloop.RunResult, error) {
	t.Helper()
	if name == "" {
		name = temporal.DefaultName
	}
	env.ExecuteWorkflow(name, temporal.Input{Messages: msgs})
	require.True(t, env.IsWorkflowCompleted())
	return temporal.Wait(context.Background(), envRun{env: env})
}

// TestGoldenTranscripts runs the core golden scenarios both in process
// and as a workflow: the transcripts, and everything else Run returns, are
// the same.
func TestGoldenTranscripts(t *testing.T) {
	for _, tt := range golden.Scenarios {
		t.Run(tt.Name, func(t *testing.T) {
			g := readGolden(t, tt.Name)
			newLoop := func() *toolloop.AgentLoop {
				l := &toolloop.AgentLoop{Model: looptest.NewModel(t, g.turns()...), Tools: goldenTools()}
				if setup := goldenSetups[tt.Name]; setup != nil {
					setup(l)
				}
				return l
			}
			want, err := newLoop().Run(context.Background(), g.Input)
			require.ErrorIs(t, err, tt.Err)

			env := newEnv(t, temporal.Agent{Loop: newLoop()})
			got, err := run(t, env, "", g.Input)
			if tt.Err != nil {
				require.ErrorIs(t, err, tt.Err)
			} else {
				require.NoError(t, err)
			}
			require.NotNil(t, got)
			looptest.AssertValid(t, got.Messages)
			looptest.AssertTranscript(t, g.Transcript, got.Messages)
			looptest.AssertTranscript(t, want.Messages, got.Messages)
			assert.Equal(t, want.StopReason, got.StopReason)
			assert.Equal(t, want.FinalText, got.FinalText)
			assert.Equal(t, want.Turns, got.Turns)
			assert.Equal(t, want.Usage, got.Usage)
			assert.Equal(t, looptest.Canonical(noLatency(want.Executions)), looptest.Canonical(noLatency(got.Executions)))
			assert.Equal(t, "default-test-workflow-id", got.RunID)
		})
	}
}

func noLatency(xs []toolloop.ToolExecution) []toolloop.ToolExecution {
	out := make([]toolloop.ToolExecution, len(xs))
	for i, x := range xs {
		x.Latency = 0
		out[i] = x
	}
	return out
}

// TestRetries: only tools safe to repeat are retried, and only for
// failures that may come out differently.
func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		ann      toolloop.Annotations
		failures int32
		wantRuns int32
		wantKind toolloop.ErrorKind // "" for success
	}{
		{name: "read-only fails twice then succeeds", ann: toolloop.Annotations{ReadOnly: true}, failures: 2, wantRuns: 3},
		{name: "read-only fails on every attempt", ann: toolloop.Annotations{ReadOnly: true}, failures: 10, wantRuns: 3, wantKind: toolloop.KindExecutionFailed},
		{name: "idempotent fails once", ann: toolloop.Annotations{Idempotent: true}, failures: 1, wantRuns: 2},
		{name: "destructive fails once: not retried", ann: toolloop.Annotations{Destructive: true}, failures: 1, wantRuns: 1, wantKind: toolloop.KindExecutionFailed},
		{name: "destructive and idempotent: not retried", ann: toolloop.Annotations{Destructive: true, Idempotent: true}, failures: 1, wantRuns: 1, wantKind: toolloop.KindExecutionFailed},
		{name: "unannotated: not retried", failures: 1, wantRuns: 1, wantKind: toolloop.KindExecutionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &flaky{name: "fetch", ann: tt.ann, failures: tt.failures}
			var reg toolloop.ToolRegistry
			reg.MustRegister(tool)
			model := looptest.NewModel(t,
				looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "fetch", `{}`))},
				looptest.Turn{Reply: looptest.Text("ok")})
			env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: model, Tools: &reg}, ToolRetry: quickRetry})
			var attempts []int32
			var mu sync.Mutex
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if info.ActivityType.Name == temporal.DefaultName+".call" {
					mu.Lock()
					attempts = append(attempts, info.Attempt)
					mu.Unlock()
				}
			})
			res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("fetch it")})
			require.NoError(t, err)
			assert.Equal(t, tt.wantRuns, tool.runs.Load(), "tool runs")
			r := looptest.Results(res.Messages)["call_1"]
			require.NotNil(t, r)
			if tt.wantKind == "" {
				assert.False(t, r.IsError(), r.Text())
			} else {
				require.NotNil(t, r.Error)
				assert.Equal(t, tt.wantKind, r.Error.Kind)
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Len(t, attempts, int(tt.wantRuns), "activity attempts")
		})
	}
}

// TestModelRetries: a failing model turn is retried, unless no retry can
// cure it; the run then ends as Run ends it, with StopError.
func TestModelRetries(t *testing.T) {
	transient := errors.New("503 from the provider")
	auth := &providers.Error{Provider: "test", StatusCode: 401, Kind: providers.ErrAuth}
	tests := []struct {
		name      string
		turns     []looptest.Turn
		wantErr   error
		wantFinal string
	}{
		{name: "fails once then answers", turns: []looptest.Turn{{Err: transient}, {Reply: looptest.Text("hi")}}, wantFinal: "hi"},
		{name: "fails every attempt", turns: []looptest.Turn{{Err: transient}, {Err: transient}, {Err: transient}}, wantErr: temporal.ErrModel},
		{name: "auth error is not retried", turns: []looptest.Turn{{Err: auth}}, wantErr: temporal.ErrModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := looptest.NewModel(t, tt.turns...)
			env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: model}, ModelRetry: quickRetry})
			res, err := run(t, env, "", []toolloop.Message{toolloop.UserMessage("hello")})
			require.ErrorIs(t, err, tt.wantErr)
			require.NotNil(t, res)
			assert.Equal(t, tt.wantFinal, res.FinalText)
			assert.Zero(t, model.Remaining())
			if tt.wantErr != nil {
				assert.Equal(t, toolloop.StopError, res.StopReason)
				assert.Len(t, res.Messages, 1)
			}
		})
	}
}
