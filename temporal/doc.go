// Package temporal runs the toolloop agent loop as a Temporal workflow, for
// runs that must outlive a process and spread over many workers: long
// agent runs, many runs at once, workers that are deployed and crash.
//
// A worker registers an [Agent] (the user's toolloop.AgentLoop, with its
// model and tools) and a client starts runs of it:
//
//	w := worker.New(c, "agents", worker.Options{})
//	temporal.Register(w, temporal.Agent{Loop: &toolloop.AgentLoop{Model: model, Tools: reg}})
//	go w.Run(worker.InterruptCh())
//	...
//	res, err := temporal.Run(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{TaskQueue: "agents"}}, msgs)
//
// # The same loop
//
// The workflow takes the same steps as AgentLoop.Run, and a run gives the
// same transcript, stop reason, accounting and error: the input transcript
// is repaired the same way; each model turn is an activity that asks the
// loop's Model (streaming if it can) with the transcript and the
// registry's tool specs; the workflow stamps the response with
// toolloop.AssistantMessage; each tool call is an activity that runs it
// through the whole pipeline with AgentLoop.RunCall (validation, guard,
// hooks, execution, truncation, events); results are appended in call
// order; length and refusal stops, Budget.MaxTurns, Limits (read with
// their defaults through Limits.WithDefaults, as Run reads them) and
// exclusive tools are handled as Run handles them. The calls of a turn run
// at once, each in its own activity. The tests replay the core's golden
// scenarios through the workflow, in one execution and continued as new
// after every turn, and compare everything Run returns.
//
// The long-run policies of the loop hold too:
//
//   - Loop.ContextManagers run before every model turn in a third
//     activity (a Compactor asks a model), which returns the edits they
//     made; the workflow makes the same edits with TranscriptEdit.Apply.
//     A model turn refused as too long (providers.ErrContextLength, which
//     the model activity never retries) makes the workflow ask them again
//     and take the turn once more, as Run does.
//   - Loop.Budget: token, cost and tool-call limits are checked before
//     every turn; MaxToolCalls answers the calls beyond it as not run;
//     StopWhen is asked with the same RunStatus; with WrapUp the run takes
//     a last turn with tool choice none, whose request, if too long for
//     the model, is shortened as Run shortens it (the managers, then
//     toolloop.WrapUpTrim). The run ends with the
//     *toolloop.BudgetError that [Wait] returns. MaxDuration is measured
//     in workflow time (workflow.Now) from the run's start, across
//     continue-as-new; a workflow timer cancels the model turn or the
//     calls in progress when it runs out, as Run's deadline does. The time
//     a turn spends waiting only for approval decisions does not count, as
//     the time between a pause and Resume does not.
//   - Budget.MaxConsecutiveFailures and StopOnFailure end the run with
//     a *toolloop.BudgetError (LimitFailures) whose cause is a
//     *toolloop.FailureError.
//   - RunResult.Accounting adds up usage, cost, unpriced turns, tool calls
//     and consecutive failures. Each response, and each compaction, is
//     priced in its activity, on the worker, from Loop.ModelTable and the
//     built-in table: the price is recorded in the history with the turn,
//     so a changed price table never changes a replay. With
//     Budget.MaxCost, a turn whose model has no price ends the run with
//     toolloop.ErrUnknownPrice.
//
// The controls of each turn hold too: the model activity builds each
// request with AgentLoop.ModelRequest (the loop's tool choice, tool
// filter, deferred tools and tool search tool, Hooks.BeforeModel) and
// passes the response through AgentLoop.AfterModel (Hooks.AfterModel; a
// rejection ends the run with ErrModel and is not retried); the call
// activity resolves the tool search tool. Model wrappers such as
// toolloop.Retry report their attempts to the loop's OnEvent. Three are
// not supported yet, and Register panics on a loop that sets them:
// Loop.Output (typed final answers), Loop.TurnProcessors and
// Loop.Budget.Shared (spending shared across runs, which the workflow
// could only ask through an activity).
//
// # Determinism
//
// The workflow code reads no clock but workflow.Now, draws no random
// number, iterates no map and never touches the registry, the model or the
// context managers: the tool specs, what the workflow needs to know of
// each called tool (whether it is safe to retry, whether it is exclusive,
// its timeout) and the price of each turn come back from the activities.
// Everything else it computes from its input and the activities' results,
// with toolloop's pure functions. Budget.StopWhen is the one piece of
// user code that runs in the workflow: it must be deterministic (a
// function of the RunStatus it is given). The recorded histories in
// testdata/ are replayed by the tests, so a change that would break
// running workflows fails them. Runs started before the long-run policies
// existed replay without them (workflow.GetVersion, change
// "toolloop.long-run"), runs started before steering existed replay
// without it (change "toolloop.steering"), and runs started before
// background jobs existed run every call in the foreground (change
// "toolloop.jobs"). Steering signals are events
// of the history, and the workflow looks at them only at fixed points
// (see Steering), so a replay sees the same messages at the same turns.
//
// # Retries
//
// Temporal retries model turns (Agent.ModelRetry), except for errors no
// retry cures: providers.ErrAuth, providers.ErrContextLength, a panic. A
// model that fails on every attempt ends the run with StopError and
// ErrModel.
//
// Tool calls are retried only for tools that are safe to repeat: annotated
// ReadOnly or Idempotent, and not Destructive. For them, a failure the
// tool may recover from (kind execution_failed or timeout) fails the
// activity so that Temporal retries it (Agent.ToolRetry); the last
// attempt's failure is the result. A lost worker (no heartbeat within
// Agent.HeartbeatTimeout) is retried the same way. Failures of the other
// stages (not_found, invalid_args, denied) and panics are results at once:
// they would fail the same way again.
//
// Every other tool (destructive or unannotated) is attempted once
// (MaximumAttempts 1): its failure is its result, and a call whose worker
// was lost gets a canceled result saying it was interrupted and may or
// may not have taken effect (toolloop.InterruptedMessage), never a second
// run. As a second line of defence the call activity refuses to run such a
// tool on any attempt after the first. So a write is never applied twice.
//
// # Progress
//
// Call activities heartbeat (four times per Agent.HeartbeatTimeout, and on
// every report), carrying the tool's latest progress and partial output
// as heartbeat details; the loop's OnEvent on the worker gets the events as
// well. The SDK sends a heartbeat at most every 0.8 × HeartbeatTimeout,
// keeping the latest details; lower worker.Options.MaxHeartbeatThrottleInterval
// for progress that is fresher than that. A workflow never sees its activities' heartbeats, so the
// StatusQuery answers which calls run, wait for approval or are done, and
// [Describe] adds the progress from the heartbeat details Temporal keeps.
//
// # Approval
//
// With AgentLoop.PauseForApproval set (and no Approver), a call the guard
// asks about returns from its activity as pending, and waits in the
// workflow, holding no worker, for a [Decision] sent by [Decide]: for as
// long as it takes, across worker restarts. The decision is applied once,
// to that call: the call runs again with it, through AgentLoop.RunCall. A
// decision for a call that is not waiting is ignored.
//
// An agent used as a tool (toolloop.AgentTool) runs inside its call's
// activity: its model turns and calls are not activities of their own, so
// a lost worker interrupts it as it would any tool. When it pauses for
// approval, its activity returns the call as pending with the child's
// state, which waits in the workflow like any ask: [Status.Awaiting] lists
// the calls the child waits on, each under the qualified ID a Decision
// names it by ("call_1/call_3"), and once every one has its decision the
// call runs again, through AgentLoop.ResumeCall, and resumes the child
// exactly once, on whichever worker is running then. What the child
// spends is added to the run's accounting.
//
// # Steering
//
// A running run can be steered as toolloop.Inbox steers AgentLoop.Run,
// with the same semantics, from any process: [Steer] sends messages,
// [FollowUp] sends messages for when the run would otherwise end, and
// [Interrupt] stops it (now, after the model turn, or after the turn's
// calls) and then ends it or lets it go on. They are Temporal signals
// (SteerSignal carrying []toolloop.QueuedMessage, InterruptSignal
// carrying a toolloop.Interrupt), so another SDK or the CLI can send them
// too.
//
// Signals, not updates: a signal is durable as soon as it is sent,
// whether or not a worker is running, as a Decision is; an update needs a
// worker to accept it, and its answer could say no more than that the
// message was received, since delivery waits for the next safe point.
// Ordered in the history, signals give the order the messages are
// delivered in.
//
// The workflow receives the messages without blocking at the safe point
// before each model turn (after the last turn's results and the budget's
// checks), and delivers them there, once each, in the order sent, as user
// messages of the transcript; follow-ups when the model has given its
// final answer. It receives interrupts at the same points and while it
// waits for a model turn, a round of context management or a turn's
// calls: an interrupt now cancels the activities in progress. The model
// activity then reports the text the model had streamed, which the
// transcript keeps as an assistant message with StopReason
// toolloop.StopInterrupted, and every call that did not finish gets a
// canceled result. An interrupt after the model turn lets the turn's
// running calls finish and answers the others, and those that wait for
// approval, as not run. Without Continue the run then ends:
// [Wait] returns its result with toolloop.ErrInterrupted. The messages
// still queued when a run ends, however it ends, are returned in
// RunResult.Undelivered; when it continues as new they go on to the next
// execution, with an interrupt it has not acted on. An interrupt now
// reaches a running activity at its next heartbeat (see Progress).
//
// # Background jobs
//
// A call to a tool whose spec allows background runs
// (toolloop.ToolSpec.Background) that sets the background argument
// starts a job, as in AgentLoop.Run, with the same texts, IDs (job_1,
// job_2, …, numbered after the transcript's) and limits
// (Limits.Jobs). The call's activity runs the stages before the tool
// (validation, guard, approval, pre-hooks) and answers that the job
// started; the workflow then starts the tool in a job activity of its
// own, Name+".job", without waiting for it, and the run goes on. The job
// activity runs for at most Limits.Jobs.MaxDuration, heartbeats with
// the size and the last 4 KiB of the tool's output, and reports
// job.started, job.output and job.finished to the loop's OnEvent.
//
// The job's end comes back as the activity's completion, an event of the
// history like a signal, and goes into the run's inbox, where
// SteerSignal's messages go: it is delivered once, at the next safe
// point, as a user message with toolloop.OriginJob. The job tools are
// answered by the workflow itself: job_wait waits on a workflow timer,
// job_cancel cancels the job's activity and reports its end (which is
// then not told again), job_list lists the jobs, and job_output reads
// the latest heartbeat of a running job (through Name+".job_output", an
// activity that asks Temporal, with the default data converter) or the
// output of one that ended. Unlike in process, calls to the job tools
// do not pass through the guard and the hooks, and report no tool
// events. StatusQuery lists the jobs; Describe adds the output size of
// each running one.
//
// An interrupt does not end jobs. The run's end does: the jobs still
// running are cancelled, given the heartbeat timeout and five seconds to
// stop, and listed in RunResult.Jobs, as are cancellation and
// Budget.MaxDuration. With Limits.Jobs.WaitAtEnd a run whose model has
// answered waits for its jobs, as in process. A job's activity cannot
// outlive its workflow execution, so the run does not continue as new
// while a job runs; if Temporal suggests it (the history nears its
// limits), the running jobs are ended first, and their ends, like those
// not yet told, go on to the next execution.
//
// # Cancellation
//
// Cancelling the workflow cancels the running call activities (they learn
// of it at their next heartbeat) and waits for them to stop; every call
// that did not finish gets a canceled result, so the transcript stays
// valid, and the run ends with StopAborted. [Wait] returns that result with
// an error matching context.Canceled. A model turn in progress is
// cancelled too, and waited for, as for an interrupt.
//
// # Events
//
// The loop's OnEvent, on the worker, receives the model events from the
// model activity, the tool events from RunCall, once per attempt, and the
// transcript.edited events of the context managers from the context
// activity. The run events (run.start, run.limit, run.end, and, for
// steering, user.message and run.interrupted) are not emitted, and
// neither is the model.response of a turn an interrupt cut short (the
// model activity cannot tell an interrupt from a cancellation): the
// workflow's history, with its signals, is the record of the run, and
// the transcript holds every message delivered.
//
// # Long runs: continue-as-new
//
// Each model turn's activity carries the whole transcript, and the history
// keeps every turn, so a long run's history grows fast. Between turns,
// with every call of the last turn answered, the workflow continues as
// new when Temporal suggests it (the history nears its limits on events
// or bytes) or after Agent.MaxTurnsPerExecution turns (100 by default):
// the next execution
// gets the transcript and the run's state (turn count, accounting,
// executions, consecutive failures, the time spent for MaxDuration, the
// token estimate of the context managers) in its Input, and goes on as if
// it were the same one. No call is cut off, so none runs twice. The
// workflow ID stays the same: [Wait] (the SDK's WorkflowRun.Get) follows
// the chain to the last execution, and [Describe] and [Decide] reach the
// latest execution when given an empty run ID. A run of 1,000 turns
// passes through many executions (TestIntegrationThousandTurns).
//
// # Large transcripts and secrets
//
// A transcript travels in Temporal payloads: the input of every model
// turn and context activity, the continue-as-new input, the result. Two
// payload codecs, in the data converter of every client (the workers
// take their client's) and of every starter, change where and how it is
// kept:
//
//   - A [StoreCodec] moves every large payload to a [PayloadStore] of your
//     own and leaves its key in the history, so that a transcript is no
//     longer bounded by Temporal's payload limit (2 MB by default) and a
//     long run's history stays small. Without one, the transcript must fit
//     in a payload, and so must the continue-as-new input, which adds the
//     run's executions (RunResult.Executions) to it; context managers keep
//     the transcript small, not the executions. The workflow still holds the
//     transcript in the worker's memory; the store holds every turn's
//     copy, so it grows with the sum of the transcripts sent.
//   - An encrypting codec (Example_encryption has one with AES-GCM) keeps
//     secrets in transcripts (a token in a tool's output, say) out of the
//     history in clear. List it after a StoreCodec so that the store gets
//     ciphertext too.
//
// [Describe] decodes heartbeat details with the default data converter:
// with an encrypting codec it leaves out the progress of running calls.
package temporal
