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
// same transcript, stop reason and error: the input transcript is repaired
// the same way; each model turn is an activity that asks the loop's Model
// (streaming if it can) with the transcript and the registry's tool specs;
// the workflow stamps the response with toolloop.AssistantMessage; each
// tool call is an activity that runs it through the whole pipeline with
// AgentLoop.RunCall (validation, guard, hooks, execution, truncation,
// events); results are appended in call order; length and refusal stops,
// MaxIterations, MaxConcurrency and exclusive tools are handled as Run
// handles them. The calls of a turn run at once, each in its own activity.
//
// # Determinism
//
// The workflow code reads no clock, draws no random number, iterates no
// map and never touches the registry or the model: the tool specs, and
// what the workflow needs to know of each called tool (whether it is safe
// to retry, whether it is exclusive, its timeout), come back from the
// model activity. Everything else it computes from its input and the
// activities' results, with toolloop's pure functions. The recorded
// histories in testdata/ are replayed by the tests, so a change that would
// break running workflows fails them.
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
// # Cancellation
//
// Cancelling the workflow cancels the running call activities (they learn
// of it at their next heartbeat) and waits for them to stop; every call
// that did not finish gets a canceled result, so the transcript stays
// valid, and the run ends with StopAborted. [Wait] returns that result with
// an error matching context.Canceled.
//
// # Events
//
// The loop's OnEvent, on the worker, receives the model events from the
// model activity and the tool events from RunCall, once per attempt. The
// run events (run.start, run.end) are not emitted: the workflow's history
// is the record of the run.
//
// # Limits
//
// Each model turn's activity carries the whole transcript, and the history
// keeps every turn: Temporal's limits on payloads (2 MB by default) and on
// history size bound how long a run can grow. Runs are not yet continued
// as new.
package temporal
