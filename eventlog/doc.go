// Package eventlog records a run's events as JSON Lines and replays them.
//
// A [Writer] is a [toolloop.AgentLoop] OnEvent sink. It appends one JSON
// object per event to a file or any io.Writer. Durable events (tool
// completions, model responses, the start, pause and end of runs; see
// [toolloop.EventType.Transient]) are written through at once, so they
// survive the process being killed, and synced to stable storage as
// [Options] say. Transient events (a call starting, progress, partial
// output, model deltas) wait in a buffer for the next durable event, or are
// left out with Options.DropTransient.
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
// run again. With the default Options a completion is on disk before
// Record returns, so before the loop goes on. [Events] iterates over a
// log's events one by one.
package eventlog
