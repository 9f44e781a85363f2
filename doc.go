// Package toolloop runs the agent tool-call loop for Go programs.
//
// A model emits tool calls; toolloop resolves each one across its tool
// sources, validates its arguments against the tool's JSON Schema, asks the
// guard, runs the pre-hooks, executes the tool, runs the post-hooks,
// truncates the output, and feeds back exactly one [ToolResult] per call
// ID, in call order, turn after turn, until the model stops:
//
//	normalize → resolve → validate → guard → pre-hook → execute → post-hook → truncate
//
// Every stage's failure is a result the model sees (status error, with an
// [ErrorKind]), never a panic and never a dropped call. A misbehaving model,
// a panicking or hanging tool, or a cancelled context leaves a transcript
// that is valid to send to a model again.
//
// The pieces:
//
//   - [Message], [ToolCall] and [ToolResult] form a provider-neutral
//     transcript that round-trips through JSON.
//   - [Model] is the only thing the loop knows about a provider; see the
//     providers/ packages, and looptest for a scripted model.
//   - [Tool] and [Source] supply tools; [NewTool] builds one from a Go
//     function and infers its schema, [NewSchemaTool] from a schema
//     written out. A [ToolRegistry] refuses a tool name that is taken
//     (unless told to allow shadowing) and resolves names across sources:
//     the program's own (local), then builtin, then plugin, then mcp.
//   - [Guard], [RuleGuard] and [Approver] decide whether a call may run,
//     or the run pauses for a person and [AgentLoop.Resume] goes on with
//     their decisions; [Sealing] keeps a paused state that leaves the
//     process from being changed before it comes back.
//   - [Hooks] change calls and results around execution.
//   - [AgentLoop] runs it all and reports [Event]s: to OnEvent
//     ([MultiSink] feeds several sinks), or to a range loop over
//     [AgentLoop.RunStream]'s events as they happen. A loop set up wrong
//     (no model, a guard that may ask with nobody to answer) fails at
//     once: see [AgentLoop.Validate].
//
// # Long runs
//
// A run of hundreds of calls outgrows the model's context window, and may
// spend more than it should. Two fields of [AgentLoop] keep it in hand,
// beside [Limits], which bounds how big and how parallel each turn is:
//
//   - ContextManagers edit the transcript before each request:
//     [ClearToolResults] replaces old outputs with stubs, [Compactor]
//     summarizes older turns with a model call, and both act again, once,
//     when the model answers that a request is too long. Each edit is a
//     [TranscriptEdit] that never separates a call from its result, and is
//     reported as an [EventTranscriptEdited] event, so that a logged run
//     replays to the transcript the model saw. [EstimateTokens] and the
//     model table of [LookupModel] decide when.
//   - [Budget] says when a run stops: turns, tokens, cost ([Price]), wall
//     time, tool calls, output retries, send-backs and tool failures, with
//     a StopWhen of your own. A run that reaches a limit can be given a
//     wrap-up turn for its final answer, and ends with a [*BudgetError]
//     that names the limit.
//
// [RunResult] reports what the run spent in its [Accounting], and
// [Usage.CacheHitRatio] how much of its input the provider's prompt
// cache served. Every edit of a transcript's older messages, and every
// change of the tools or the system prompt, costs that cache: an observed
// run reports each request that does not begin with the whole of the
// previous one as an [EventCacheBust] event, with the reason, so the
// managers clear in batches and compact rarely.
//
// # Control of each turn
//
// Fields of [AgentLoop] shape what the model is asked and how its turns
// are taken:
//
//   - ToolChoice sets the [ToolChoice] of every turn (auto, none,
//     required, one named tool); the wrap-up turn forbids tools.
//   - ToolFilter picks the tools sent on each turn, from the run's state;
//     [Only] with a [ToolSelector] ([SelectNames], [SelectSources],
//     [SelectAnnotations]) sends a fixed set. Deferred marks tools that
//     are not sent until the model finds them with the tool search tool
//     ([ToolSearchName]), so a run with hundreds of tools pays for the few
//     it uses. A filter shapes the prompt; a call to a tool left out
//     still resolves, and the guard decides what runs.
//   - Hooks.BeforeModel edits each request (a per-turn tool choice, a
//     trimmed tool list); Hooks.AfterModel inspects, replaces or rejects
//     each response. [AgentLoop.ModelRequest] and [AgentLoop.AfterModel]
//     do the same for drivers that take turns themselves.
//   - TurnProcessors see each assistant turn's whole batch of calls
//     before any runs: they answer some themselves (the results are
//     marked Meta.Synthesized) or send the turn back to the model with a
//     reason, at most MaxSendBacks times in a row.
//   - Output asks for a final answer that is JSON of a schema, and
//     [RunTyped] for one of a Go type: sent as the provider's native
//     structured output when the model supports it beside tools
//     ([NativeOutput]), otherwise through a final-answer tool; an invalid
//     answer goes back to the model with the validator's message, up to
//     MaxOutputRetries times, then the run ends with an [*OutputError].
//   - [Retry] and [Fallback] wrap a Model (see below).
//
// # Model resilience
//
// A provider that is rate limited or overloaded after its SDK's own
// retries need not end the run. [Retry] wraps a [Model] to ask it again
// with capped exponential backoff and full jitter, on the errors
// [IsRetryable] names (rate limit, overload, a 5xx, a broken or timed-out
// connection; never an auth failure, a request too long for the model,
// or the caller's cancellation); [Fallback] asks a list of models in
// turn. Both are Models, so they nest: Fallback(Retry(primary, p),
// backup). Each failed attempt is an [EventModelRetry] or
// [EventModelFallback] event of the run, and both keep the streaming
// ([Streamer]) and structured-output ([NativeOutput]) abilities of the
// models they wrap. A stream is asked again only if it failed before its
// first chunk: deltas already reported cannot be taken back.
//
// # Agents as tools
//
// [NewAgentTool] wraps an AgentLoop, with its own model, tools, guard and
// limits, as a [Tool] another loop's model can hand a task to; the call's
// result is the child's final text. The child's run belongs to the
// parent's:
//
//   - its events reach the parent's OnEvent and RunStream with the
//     child's own run ID and turns, Event.ParentRunID and ParentCallID
//     naming the parent's run and call (and a grandchild's, the child's);
//   - what it spends (ResultMeta.Spent) is added to the parent's
//     [Accounting], and so to what the parent's Budget checks;
//   - a child that pauses for approval pauses the parent: the parent's
//     [PauseState] lists the child's waiting calls among its own, their
//     IDs qualified by the parent's call ("call_1/call_3"), and keeps the
//     child's state, in JSON too; Resume with a decision for each resumes
//     the child exactly once, and the run goes on. A paused run logged by
//     the eventlog package, or run by the temporal package, resumes the
//     same way in another process;
//   - cancelling or interrupting the parent interrupts the child now,
//     which returns before the call does, and a child that fails gives
//     the call a failed result with what it had written.
//
// Ordinary tools pay nothing for this. [AgentLoop.ResumeCall] resumes a
// paused agent's call for drivers that run calls with RunCall.
//
// # Steering a running agent
//
// A person can steer a run while it works, from any goroutine, through
// its [Inbox] (put in the run's context with [WithInbox]; a [Stream] has
// one, see [Stream.Inbox]):
//
//   - [Inbox.Send] queues a message, delivered at the next safe point:
//     before the next model request, after every result of the turn,
//     never between a call and its result. [Inbox.FollowUp] queues one
//     for when the run would otherwise end. Each is delivered once, in
//     the order sent, as a user message, reported by a user.message
//     event ([EventUserMessage]) with its [Origin].
//   - [Inbox.Interrupt] stops the run now (the model's turn is cut short,
//     keeping what it had streamed, and running calls are cancelled),
//     after the model's turn (none of its calls runs) or after the tool
//     calls of the turn, then ends it with [ErrInterrupted] or goes on
//     with the queued messages; a run.interrupted event records it.
//   - Messages the run did not deliver are returned in
//     RunResult.Undelivered, or kept in PauseState.Queued by a run that
//     pauses, never lost.
//
// Whatever the mode and the moment, every call keeps exactly one result
// and the transcript stays valid for every provider. A run without an
// inbox pays nothing for this.
//
// # Background jobs
//
// A tool whose spec sets [ToolSpec.Background] can run as a job: the
// model sets the call's "background" argument ([BackgroundArg], which
// the loop adds to the tool's schema), the call's result says at once
// that job_1 started, and the tool runs on, with Call.Job set, while the
// model takes other turns. The job's output (what the tool reports with
// [Call.ReportPartial]) is kept, bounded, and the model can read it,
// wait for the job and cancel it with the job tools the loop offers once
// a job exists (job_output, job_wait, job_cancel, job_list). When the
// job ends, its end (status, exit code, the head and tail of its result)
// is delivered once, at the next safe point, through the run's [Inbox]
// as a user message of [OriginJob], or as the result of the job_wait or
// job_cancel call that saw it; job.started, job.output and job.finished
// events ([EventJobStarted]) report it. [Limits].Jobs ([JobLimits])
// bounds how many run at once, for how long, and how much output is kept.
//
// Jobs end with their run: a run that ends or pauses cancels the jobs
// still running, waits for them (a shell job's processes are killed), and
// lists every job in RunResult.Jobs; a paused run keeps their ends in
// PauseState.Queued for the resumed run to tell the model.
// JobLimits.WaitAtEnd makes a run whose model answered while jobs run
// wait for them instead.
//
// # Inner calls and code mode
//
// A tool can call other tools of its run while it runs, through
// [Call.Inner]: the codemode module's run_code tool does, for a program
// the model wrote, so that fifty calls cost one model turn and only the
// program's answer enters the transcript. Each inner call ([Inner]) is a
// call of its own through the whole pipeline (resolution, validation,
// guard, approval, hooks, its timeout with hang protection, truncation),
// its events carry the calling call's ID as Event.ParentCallID, and it
// counts against Budget.MaxToolCalls, Limits.MaxCallsPerTurn (per
// calling call) and Limits.MaxConcurrency. An inner call that needs a
// person's decision pauses the run: PauseState.Pending lists it under the
// calling call ("call_1/3"), whose PendingCall.Program keeps the journal
// of the inner calls that finished; on Resume the tool runs again, and
// each inner call it makes again is answered from the journal, so nothing
// that ran runs twice ([ErrDiverged] if the program takes another path).
//
// # Exactly once, in bounded memory
//
// A call's result and the start of its tool are one atomic step: once the
// loop has answered for a call (the run was cancelled while a guard, an
// approver or a pre-hook that ignores its context still held it), the
// tool never starts, and no pre-hook, post-hook or failure hook starts
// after the answer either. A result whose message begins "not run" means
// exactly that. A tool that ignores cancellation once it has started is
// answered for as "canceled … while it ran", and its late result dropped.
//
// Whatever tools return, the loop holds a bounded amount of it:
//
//   - Each call's output is cut to Limits.MaxOutputBytes (1 MiB) as
//     soon as the tool returns, or while it is produced where the source
//     allows it (see [Call.MaxOutputBytes]); post-hooks see the cut
//     output, and the model sees it cut again to Limits.MaxResultBytes
//     (64 KiB).
//   - A turn runs at most MaxCallsPerTurn calls (128), and its results
//     share MaxTurnResultBytes (1 MiB); calls over the cap are answered,
//     not run.
//   - Progress and partial output are coalesced per call to one event per
//     ReportInterval (100ms), counted in [Event].Coalesced, with a marker
//     for output dropped beyond MaxPartialBytes; what is held when the
//     call ends is sent with its completion.
//   - JSON nested deeper than [MaxJSONDepth] is refused as arguments and
//     kept as text in output, so every transcript reads back.
//
// # Goroutines and cost
//
// Each call runs on a goroutine of its own, so that a tool that hangs and
// ignores its context can be answered for and left behind: [AgentLoop.Run]
// and [AgentLoop.RunCall] never wait on a call past its timeout and a
// short grace. The goroutines come from a pool shared by every loop in the
// process: one that has run a call waits up to 50 ms for the next, then
// exits, so a program whose loops are idle has none of them left within
// 100 ms (well inside what goleak's default retries wait), and calls start
// on goroutines whose stacks have already grown. Inside a testing/synctest
// bubble (told by its clock, which starts in 2000) each call gets a
// goroutine of its own instead, since a pooled one may come from outside
// the bubble. A goroutine stuck in a tool that never returns lives until
// the tool does.
//
// A typed tool's input struct, when it is flat (string, bool, integer and
// float fields), is decoded in one pass that agrees with encoding/json or
// steps aside for it. A registry compiles only the tools that are new, and
// an identical schema once; a name that is not found is answered with
// suggestions in microseconds, even among 10,000 tools. See BENCHMARKS.md
// for what a call, a turn and a run cost.
//
// The root package depends only on the standard library, a JSON Schema
// validator, a schema inference library and golang.org/x/sync. Provider,
// MCP and plugin SDKs live in subpackages.
package toolloop
