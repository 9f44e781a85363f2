// Package eventlog records a run's events as JSON Lines and replays them.
//
// A [Writer] is a [toolloop.AgentLoop] OnEvent sink. It appends one JSON
// object per event to a file or any io.Writer. Durable events (tool
// completions, model responses, the start, pause and end of runs; see
// [toolloop.EventType.Transient]) are written through at once, so they
// survive the process being killed, and synced to stable storage as
// [Options] say. Transient events (a call starting, progress, partial
// output, model deltas) wait in a buffer for the next durable event, or are
// left out with Options.DropTransient. With Options.Redact set, no secret
// reaches the file, not even one that a stream of deltas or partial output
// cuts in two: the Writer holds back the tail of each stream until it can
// redact it whole (see Options.Redact).
//
//	w, err := eventlog.Open("agent.jsonl", eventlog.Options{})
//	if err != nil { ... }
//	defer w.Close()
//	loop := &toolloop.AgentLoop{Model: m, Tools: reg, OnEvent: w.Record}
//
// [Read] replays a log into a [Replay]: the conversation's transcript, the
// calls that completed and a summary per tool. It tolerates a torn last
// line (the process was killed mid-write), so after a crash:
//
//	rp, err := eventlog.ReadFile("agent.jsonl")
//	if err != nil { ... }
//	res, err := loop.Run(ctx, rp.Transcript())
//
// Run repairs the transcript first: a call that was running when the
// process died gets a canceled result saying the run was interrupted, and
// is not run again; a call whose completion was logged keeps its result and
// is never run again either. A call that finished in the instant between
// its effect and its completion reaching the log counts as interrupted:
// the model is told it may or may not have taken effect, and it is not
// run again. [Events] iterates over a log's events one by one.
//
// # What a crash can lose
//
// A durable event is written through before Record returns, whatever the
// policy: it is in the operating system's hands, so killing the process
// (SIGKILL, a panic, running out of memory) loses nothing Record returned
// for, and at most leaves a torn last line, which [Open] cuts off and
// [Read] skips. What the policy decides is when the log is synced (fsync),
// which is what it takes to survive the machine losing power or the kernel
// crashing. Syncing is the costly part.
//
// So that replaying never runs a call twice, a call must be on disk before
// it starts, and for that it is enough that the model response that asked
// for it is: a replay that has the response but not the call's completion
// treats the call as interrupted and does not run it again, while a
// replay without the response does not know of the call, asks the model
// again, and the model may ask for the same effect again. The call's start
// need not be logged at all (it is transient), and its completion can wait
// for the next sync: losing it loses the call's result, never runs the
// call twice. The same goes for a paused run's resumption, which its
// approved calls follow, and a run's end, after which the caller acts on
// the result. These are the sync points ([SyncPoint]): every policy but
// NoSync syncs the log before Record returns a sync point's event, so a
// turn costs one sync however many calls it makes.
//
// The policies, with what they cost on an ext4 file system on a virtual
// disk whose fsync of a 600-byte append takes 0.42-0.48 ms
// (BenchmarkFsync). Per event is BenchmarkRecord: a completion with a
// 512-byte result / a model response with a call. Per turn is
// BenchmarkTurn/serial: one run's turn of four calls, ten events of which
// five durable and one a sync point. Medians of three runs:
//
//	Options          syncs                        per event         per turn          power loss loses
//	{} (default)     at the sync points           13 µs / 0.55 ms   0.90 ms, 1 sync   the events since the last sync point
//	SyncEvery: 1     also each durable event      0.60 / 0.46 ms    2.4 ms, 5 syncs   nothing Record returned for
//	SyncEvery: 64    also every 64 durable events 26 µs / 0.42 ms   0.72 ms, 1 sync   the events since the last sync: fewer than 64 durable ones
//	SyncInterval: d  also within d (10 ms here)   8 µs / 0.41 ms    0.79 ms, 1 sync   the events since the last sync: at most d old
//	NoSync           never, not even on Close     13 µs / 7 µs      59 µs, 0 syncs    what the OS had not written back; a call may run twice
//
// The events since the last sync point are the completions of the turn
// under way, or the model's last answer of a run that has not yet logged
// its end: calls that lose their completion count as interrupted, and
// none runs again. A whole run of two turns, four calls and an answer,
// through AgentLoop (BenchmarkRun), takes 1.40 ms with the default (2
// syncs), 4.25 ms syncing each durable event (8 syncs), and 0.22 ms
// without syncing.
//
// Records that need a sync while another's is under way share the next one
// (group commit), and on an *os.File they write their events while it is
// under way. One run's events come one at a time (the loop serializes
// OnEvent), so this pays when runs share a Writer: eight runs at once
// (BenchmarkTurn/parallel) take 0.44 syncs and 0.44 ms per turn with the
// default, and 1.13 syncs per turn syncing each durable event.
//
// A sync that fails stops the log, and Err and Close report it: the
// kernel may have dropped what that sync was to make durable, and a later
// sync would succeed without bringing it back, so the Writer never syncs
// again, and no Record that waited for the failed sync returns before Err
// reports the failure.
//
// The benchmarks write to files in the test's temporary directory, or in
// $TOOLLOOP_BENCH_DIR if it is set: set it to a directory on the disk the
// logs will live on if TMPDIR is on tmpfs, or on a disk that does not
// really sync (BenchmarkFsync then takes microseconds).
package eventlog
