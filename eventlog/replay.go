package eventlog

import (
	"io"
	"os"
	"slices"
	"time"

	"github.com/toolloop/toolloop"
)

// Replay is what a log says about the conversation it recorded: the
// transcript as far as it got, the calls that completed, and a summary per
// tool. Build one with [Read] or [ReadFile], or feed it events with Add.
//
// A log may hold several runs of one conversation: a run that crashed and
// the run that carried on from its replayed transcript, a run that paused
// and its resumption, a follow-up question. The transcript follows them
// all, on these rules:
//
//   - run.start sets the transcript to the run's input messages, whatever
//     came before (each run is handed the whole conversation so far);
//   - transcript.repaired repairs it as the loop did, with
//     [toolloop.RepairTranscript];
//   - transcript.edited makes the edit (a context manager's, or the
//     wrap-up turn's message) as the loop did, with
//     [toolloop.TranscriptEdit.Apply];
//   - model.response appends the assistant message;
//   - tool.execution_complete gives a call of the last assistant message
//     its result; results are put in call order, whatever order the calls
//     finished in, and a second result for one call is ignored;
//   - run.paused records the pending calls, and run.resumed carries on
//     with the same turn.
//
// The events of child runs (agents used as tools, see
// [toolloop.AgentTool]), which carry Event.ParentRunID, add their usage
// to Usage and change nothing else: the child's result is its parent's
// call's, and a paused child's state comes back in its parent's
// run.paused event (Event.Agents), so that Paused resumes the child too.
//
// So the transcript is the last run's, and it may end mid-turn: a call
// that was running when the process died has no result. Pass it to
// [toolloop.AgentLoop.Run], which gives such calls a canceled result and
// runs nothing that already has one. Other event types, including every
// transient one, do not change the replay; a log written with
// Options.DropTransient replays the same.
//
// One log should hold one conversation. Runs of different conversations
// that share a Writer at the same time interleave in the log; split their
// events by RunID (see [Events]) and replay each apart.
//
// A Replay is not safe for concurrent use.
type Replay struct {
	// Completed holds the ID of every call whose completion the log holds,
	// in any of its runs.
	Completed map[string]bool
	// Tools summarizes the completed calls of each tool, by name.
	Tools map[string]ToolSummary
	// Usage adds up the tokens of every model response, child runs'
	// included.
	Usage toolloop.Usage

	// RunID is the last run's ID.
	RunID string
	// Ended reports that the last run logged its end. A log whose last run
	// did not end was cut short: the process crashed or was killed.
	Ended bool
	// StopReason and Error are the last run's end, when it ended.
	StopReason toolloop.StopReason
	Error      string
	// Paused is set when the last run stopped to wait for approvals and
	// has not been resumed: the state to pass to
	// [toolloop.AgentLoop.Resume], as the run returned it, but not sealed
	// (the log holds no seal): a program whose loop has a
	// [toolloop.Sealing] key seals it when it trusts the log, as the
	// toolloop command does as it writes its log.
	Paused *toolloop.PauseState

	// Events counts the events read.
	Events int
	// EditErrors counts the transcript.edited events that did not apply
	// to the transcript as replayed (a log missing events before them);
	// they were skipped.
	EditErrors int
	// Torn reports that the log ended in a torn line, which was skipped.
	Torn bool

	msgs []toolloop.Message
	open *turn
	// run is what the current run has done so far, for PauseState.
	runUsage toolloop.Usage
	runExecs []toolloop.ToolExecution
}

// ToolSummary sums up the completed calls of one tool.
type ToolSummary struct {
	Calls int `json:"calls"`
	// Errors counts the calls that failed, and Kinds counts them by kind.
	Errors int                        `json:"errors"`
	Kinds  map[toolloop.ErrorKind]int `json:"kinds,omitempty"`
	// Duration adds up the calls' durations.
	Duration time.Duration `json:"duration_ns"`
}

// turn is the last assistant message with calls, and its results so far.
type turn struct {
	n       int
	calls   []toolloop.ToolCall
	results map[string]*toolloop.ToolResult
}

// Read replays the log read from r. A torn last line is skipped (and
// Replay.Torn set). A line elsewhere that is not an event does not stop
// it: Read returns the replay of every other line, with the first such
// line's *LineError. An error reading r is returned with the replay so far.
func Read(r io.Reader) (*Replay, error) {
	rp := new(Replay)
	var first error
	scan(r, func(e toolloop.Event, err error, torn bool) bool {
		switch {
		case torn:
			rp.Torn = true
		case err != nil:
			if first == nil {
				first = err
			}
		default:
			rp.Add(e)
		}
		return true
	})
	return rp, first
}

// ReadFile replays the log file at path (see [Read]).
func ReadFile(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Add applies one event to the replay.
func (rp *Replay) Add(e toolloop.Event) {
	rp.Events++
	if e.ParentRunID != "" { // a child run's
		switch {
		case e.Type == toolloop.EventModelResponse && e.Response != nil:
			rp.Usage.Add(e.Response.Usage)
		case e.Type == toolloop.EventTranscriptEdited && e.Edit != nil:
			rp.Usage.Add(e.Edit.Usage)
		}
		return
	}
	switch e.Type {
	case toolloop.EventRunStart:
		rp.msgs = slices.Clone(e.Messages)
		rp.open = nil
		rp.runUsage, rp.runExecs = toolloop.Usage{}, nil
		rp.startRun(e)
	case toolloop.EventRunResumed:
		rp.startRun(e)
	case toolloop.EventTranscriptRepaired:
		rp.closeTurn()
		rp.msgs, _ = toolloop.RepairTranscript(rp.msgs)
	case toolloop.EventTranscriptEdited:
		rp.closeTurn()
		if e.Edit == nil {
			return
		}
		rp.Usage.Add(e.Edit.Usage)
		rp.runUsage.Add(e.Edit.Usage)
		if msgs, err := e.Edit.Apply(rp.msgs); err == nil {
			rp.msgs = msgs
		} else {
			rp.EditErrors++
		}
	case toolloop.EventModelResponse:
		rp.Paused = nil
		rp.closeTurn()
		if e.Response == nil {
			return
		}
		rp.Usage.Add(e.Response.Usage)
		rp.runUsage.Add(e.Response.Usage)
		msg := e.Response.Message
		rp.msgs = append(rp.msgs, msg)
		if len(msg.ToolCalls) > 0 {
			rp.open = &turn{n: e.Turn, calls: msg.ToolCalls, results: make(map[string]*toolloop.ToolResult)}
		}
	case toolloop.EventUserMessage:
		// Delivered at a safe point: every call before it has its result.
		rp.closeTurn()
		rp.msgs = append(rp.msgs, e.Messages...)
	case toolloop.EventComplete:
		rp.complete(e)
	case toolloop.EventRunPaused:
		rp.pause(e)
	case toolloop.EventRunEnd:
		rp.Ended = true
		rp.StopReason, rp.Error = e.StopReason, e.Error
	}
}

func (rp *Replay) startRun(e toolloop.Event) {
	rp.RunID = e.RunID
	rp.Ended, rp.StopReason, rp.Error, rp.Paused = false, "", "", nil
}

func (rp *Replay) complete(e toolloop.Event) {
	r := e.Result
	if r == nil {
		return
	}
	id := r.CallID
	if id == "" {
		id = e.CallID
	}
	if rp.Completed == nil {
		rp.Completed = make(map[string]bool)
		rp.Tools = make(map[string]ToolSummary)
	}
	rp.Completed[id] = true
	name := r.Name
	if name == "" {
		name = e.Tool
	}
	s := rp.Tools[name]
	s.Calls++
	s.Duration += r.Meta.Duration
	if r.IsError() {
		s.Errors++
		if r.Error != nil {
			if s.Kinds == nil {
				s.Kinds = make(map[toolloop.ErrorKind]int)
			}
			s.Kinds[r.Error.Kind]++
		}
	}
	rp.Tools[name] = s
	if t := rp.open; t != nil && t.results[id] == nil && slices.ContainsFunc(t.calls, func(c toolloop.ToolCall) bool { return c.ID == id }) {
		t.results[id] = r
	}
}

// closeTurn appends the open turn's results to the transcript, in call
// order.
func (rp *Replay) closeTurn() {
	t := rp.open
	if t == nil {
		return
	}
	rp.open = nil
	for _, c := range t.calls {
		if r := t.results[c.ID]; r != nil {
			rp.msgs = append(rp.msgs, toolloop.ToolMessage(r))
			rp.runExecs = append(rp.runExecs, execution(t.n, r))
		}
	}
}

func (rp *Replay) pause(e toolloop.Event) {
	t := rp.open
	if t == nil {
		return
	}
	results := make([]*toolloop.ToolResult, len(t.calls))
	for i, c := range t.calls {
		results[i] = t.results[c.ID]
	}
	rp.Paused = &toolloop.PauseState{
		RunID: e.RunID, Turn: e.Turn, Messages: slices.Clone(rp.msgs),
		Results: results, Pending: e.Pending, Agents: e.Agents, Executions: slices.Clone(rp.runExecs),
		Queued: slices.Clone(e.Queued), Interrupt: e.Interrupt,
	}
	if e.Accounting != nil {
		rp.Paused.Accounting = *e.Accounting
	} else {
		rp.Paused.Usage = rp.runUsage // a log written before accounting
	}
}

// execution is the record the loop keeps of a finished call.
func execution(turn int, r *toolloop.ToolResult) toolloop.ToolExecution {
	return toolloop.ToolExecution{
		Name: r.Name, CallID: r.CallID, Turn: turn,
		Success: r.Status == toolloop.StatusOK, Output: r.Text(), Error: r.Error, Latency: r.Meta.Duration,
	}
}

// Transcript returns the conversation as the log leaves it: valid to send
// to a model, except that it may end mid-turn, with calls of the last
// assistant message that have no result. [toolloop.AgentLoop.Run] repairs
// that. The slice is the caller's.
func (rp *Replay) Transcript() []toolloop.Message {
	out := slices.Clone(rp.msgs)
	if t := rp.open; t != nil {
		for _, c := range t.calls {
			if r := t.results[c.ID]; r != nil {
				out = append(out, toolloop.ToolMessage(r))
			}
		}
	}
	return out
}
