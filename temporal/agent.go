package temporal

import (
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	tsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
)

// DefaultName is the workflow type of an [Agent] with no Name.
const DefaultName = "toolloop"

// Defaults for the zero fields of an [Agent].
const (
	DefaultModelTimeout         = 10 * time.Minute
	DefaultHeartbeatTimeout     = 30 * time.Second
	DefaultMaxTurnsPerExecution = 100
)

// callOverhead is added to a tool's timeout to bound one attempt of its
// call activity: the guard, the hooks and truncation run in the activity
// too.
const callOverhead = 5 * time.Minute

// Agent is an agent loop that a worker runs as a Temporal workflow. Its
// zero fields are the documented defaults; only Loop, with its Model, is
// required.
//
// The workflow reads Loop's Limits and Budget (and whether it has
// ContextManagers) and the policies below while
// it runs, so, like workflow code, they must be the same on every worker
// of a task queue, and a change to them is a change to the workflow (see
// [workflow.GetVersion]). Budget.StopWhen runs in workflow code and must
// be deterministic. Loop.ModelTable, the context managers themselves and
// everything else of the loop are read in activities only.
//
// A run's ID (RunResult.RunID, and Call.RunID for guards, hooks and
// tools) is its workflow ID. One attempt of a call activity may take the
// tool's timeout plus five minutes; a lost worker is noticed sooner, by
// the heartbeat timeout.
type Agent struct {
	// Name is the workflow type the agent registers and is started by;
	// its activities are Name+".model", Name+".call", Name+".context",
	// Name+".job" and Name+".job_output".
	// Empty means DefaultName. Give each agent of one worker its own name.
	Name string
	// Loop runs in the activities: its Model answers the model turns; its
	// tools, guard, hooks, repairer, truncation and OnEvent serve the
	// calls, through AgentLoop.RunCall. Set PauseForApproval (and no
	// Approver) to have asks wait in the workflow for a Decision, for as
	// long as it takes.
	Loop *toolloop.AgentLoop

	// ModelTimeout bounds one attempt of a model turn; 0 means
	// DefaultModelTimeout.
	ModelTimeout time.Duration
	// ModelRetry is the retry policy of model turns; nil means three
	// attempts, one and then two seconds apart. Errors that cannot
	// succeed on a retry (providers.ErrAuth, providers.ErrContextLength,
	// a panicking model) are never retried.
	ModelRetry *tsdk.RetryPolicy
	// ToolRetry is the retry policy of calls to tools that are safe to
	// repeat (see the package documentation); nil means three attempts,
	// one and then two seconds apart. MaximumAttempts 0 retries for ever,
	// as in Temporal. Calls to other tools are attempted once, whatever
	// this says.
	ToolRetry *tsdk.RetryPolicy
	// HeartbeatTimeout is how long a model turn or a tool call may go
	// without a heartbeat before Temporal gives it up as lost with its
	// worker; 0 means DefaultHeartbeatTimeout. The activities heartbeat
	// four times per timeout, and on every progress report.
	HeartbeatTimeout time.Duration

	// MaxTurnsPerExecution makes the workflow continue as new (see
	// [workflow.NewContinueAsNewError]) after this many model turns in one
	// workflow execution, as well as whenever Temporal suggests it (the
	// history nears its limits); 0 means DefaultMaxTurnsPerExecution, and
	// a negative value leaves it to Temporal. Either way the workflow
	// continues as new only between turns, with every call answered.
	//
	// The bound matters most with a StoreCodec, whose small histories
	// Temporal lets grow to thousands of events: a worker that replays an
	// execution (after a restart, or when its cache dropped the run)
	// encodes the transcript of each of its turns again.
	MaxTurnsPerExecution int
}

// defaultModelRetry is the retry policy of model turns when
// Agent.ModelRetry is nil.
var defaultModelRetry = tsdk.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    time.Minute,
	MaximumAttempts:    3,
}

// defaultToolRetry is the retry policy of calls to tools that are safe to
// repeat when Agent.ToolRetry is nil.
var defaultToolRetry = tsdk.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    30 * time.Second,
	MaximumAttempts:    3,
}

// noRetry is the policy of calls to tools that may not be repeated.
var noRetry = tsdk.RetryPolicy{MaximumAttempts: 1}

// agent is a registered Agent with its defaults filled in.
type agent struct {
	Agent
	modelActivity, callActivity, contextActivity string
	jobActivity, peekActivity                    string
	// eventMu makes Loop.OnEvent see one event at a time, as in process,
	// although the calls of a turn run in separate activities.
	eventMu sync.Mutex
}

func newAgent(a Agent) *agent {
	if a.Loop == nil {
		panic("toolloop/temporal: Agent has no Loop")
	}
	if a.Name == "" {
		a.Name = DefaultName
	}
	if a.ModelTimeout <= 0 {
		a.ModelTimeout = DefaultModelTimeout
	}
	if a.HeartbeatTimeout <= 0 {
		a.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if a.MaxTurnsPerExecution == 0 {
		a.MaxTurnsPerExecution = DefaultMaxTurnsPerExecution
	}
	if a.ModelRetry == nil {
		p := defaultModelRetry
		a.ModelRetry = &p
	}
	if a.ToolRetry == nil {
		p := defaultToolRetry
		a.ToolRetry = &p
	}
	return &agent{Agent: a, modelActivity: a.Name + ".model", callActivity: a.Name + ".call",
		contextActivity: a.Name + ".context", jobActivity: a.Name + ".job", peekActivity: a.Name + ".job_output"}
}

// Register registers the agent's workflow with r and, when r registers
// activities too (a worker.Worker does, a worker.WorkflowReplayer does
// not), its activities: Name+".model", Name+".call", Name+".context"
// (the loop's context managers), Name+".job" (a background job's tool)
// and Name+".job_output" (what job_output reads of a running job). It panics if the agent
// has no Loop, or, when registering activities, no Model, or if the names
// are taken: these are mistakes in the program.
func Register(r worker.WorkflowRegistry, a Agent) {
	ag := newAgent(a)
	r.RegisterWorkflowWithOptions(ag.workflow, workflow.RegisterOptions{Name: ag.Name})
	ar, ok := r.(worker.ActivityRegistry)
	if !ok {
		return
	}
	if ag.Loop.Model == nil {
		panic("toolloop/temporal: Agent.Loop has no Model")
	}
	if ag.Loop.Output != nil || len(ag.Loop.TurnProcessors) > 0 || ag.Loop.Budget.Shared != nil {
		panic("toolloop/temporal: Agent.Loop.Output, Agent.Loop.TurnProcessors and Agent.Loop.Budget.Shared are not supported by the workflow yet: run such a loop with AgentLoop.Run")
	}
	ar.RegisterActivityWithOptions(ag.model, activity.RegisterOptions{Name: ag.modelActivity})
	ar.RegisterActivityWithOptions(ag.call, activity.RegisterOptions{Name: ag.callActivity})
	ar.RegisterActivityWithOptions(ag.manageContext, activity.RegisterOptions{Name: ag.contextActivity})
	ar.RegisterActivityWithOptions(ag.job, activity.RegisterOptions{Name: ag.jobActivity})
	ar.RegisterActivityWithOptions(ag.peekJob, activity.RegisterOptions{Name: ag.peekActivity})
}

// retryable reports whether a tool is safe to run again after a failure:
// it changes nothing, or repeating it does no more than running it once,
// and it is not destructive. Unannotated tools are not retried.
func retryable(a toolloop.Annotations) bool {
	return !a.Destructive && (a.ReadOnly || a.Idempotent)
}

// limits is the loop's Limits with their defaults, as Run applies them.
func (ag *agent) limits() toolloop.Limits { return ag.Loop.Limits.WithDefaults() }

// budget is the loop's Budget with its defaults, as Run applies it.
func (ag *agent) budget() toolloop.Budget { return ag.Loop.Budget.WithDefaults() }

// logWarn logs to the loop's Logger, if any.
func (ag *agent) logWarn(msg string, args ...any) {
	if ag.Loop.Logger != nil {
		ag.Loop.Logger.Warn(msg, args...)
	}
}

// heartbeatEvery is how often the activities heartbeat on their own.
func (ag *agent) heartbeatEvery() time.Duration {
	return max(ag.HeartbeatTimeout/4, 50*time.Millisecond)
}
