package view

import (
	"cmp"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
)

// job is a background job (see toolloop.Job): a bar on its run's
// timeline from its starting call to its end, which may be turns later.
type job struct {
	ID     string `json:"id"`
	CallID string `json:"callId"`
	Tool   string `json:"tool"`
	// Turn is the starting call's turn; EndTurn the turn its end came in,
	// or the run's last turn when the log has no end for it.
	Turn    int `json:"turn"`
	EndTurn int `json:"endTurn"`
	// At is when it started; Dur runs to its end, or to the run's last
	// event when the log has no end for it.
	At  float64 `json:"at"`
	Dur float64 `json:"dur"`
	// Status is the job's end: ok, error or canceled; unfinished when the
	// log has no end for it.
	Status  string `json:"status"`
	Kind    string `json:"kind,omitempty"`
	Reason  *text  `json:"reason,omitempty"`
	Message *text  `json:"message,omitempty"`
	Result  *text  `json:"result,omitempty"`
	// Exit is the result's exit code (Meta.Extra["exit_code"]), if any.
	Exit        *int64 `json:"exit,omitempty"`
	OutputBytes int64  `json:"outputBytes,omitempty"`
	// Output lists the first maxJobOutputs output events; OutputMore
	// counts the reports left out.
	Output     []*jobOutput `json:"output,omitempty"`
	OutputMore int          `json:"outputMore,omitempty"`
	// Told is the turn whose message told the model the job ended (0:
	// none in the log; a job_wait or job_cancel result may have).
	Told int `json:"told,omitempty"`

	start, end time.Time
	done       bool
}

// jobOutput is one job.output event: its time and text.
type jobOutput struct {
	At   float64 `json:"at"`
	Text *text   `json:"text"`
}

// maxJobOutputs bounds the output events a job lists.
const maxJobOutputs = 50

// job finds or makes the job id of run r.
func (r *run) job(id string) *job {
	j := r.jobOf[id]
	if j == nil {
		j = &job{ID: id, Status: statusUnfinished, Dur: -1}
		r.jobOf[id] = j
		r.Jobs = append(r.Jobs, j)
	}
	return j
}

// outlives reports whether e happened after the turn it names, as a
// job's events do: they name the turn of the call that started the job
// (and so do the hook effects on a job's result, events of that call
// after it completed).
func (r *run) outlives(e *toolloop.Event) bool {
	switch e.Type {
	case toolloop.EventJobStarted:
		return false
	case toolloop.EventJobOutput, toolloop.EventJobFinished:
		return true
	}
	if e.CallID == "" {
		return false
	}
	c := r.callOf[e.CallID]
	return c != nil && c.done && c.Job != ""
}

// jobEvent folds a job.started, job.output or job.finished event into
// its job, and marks the call that started it.
func (b *builder) jobEvent(r *run, e *toolloop.Event) {
	var j *job
	switch {
	case e.Job != nil && e.Job.ID != "":
		j = r.job(e.Job.ID)
	case e.CallID != "":
		j = r.jobByCall[e.CallID]
		if j == nil {
			// Output of a job whose start the log does not hold: it has
			// no ID to show it under.
			return
		}
	default:
		return
	}
	if ej := e.Job; ej != nil {
		j.CallID = cmp.Or(j.CallID, ej.CallID, e.CallID)
		j.Tool = cmp.Or(j.Tool, ej.Tool, e.Tool)
		if j.Turn == 0 {
			j.Turn = cmp.Or(ej.Turn, e.Turn)
		}
		if j.start.IsZero() {
			j.start = ej.Started
		}
		j.OutputBytes = max(j.OutputBytes, ej.OutputBytes)
	}
	if j.CallID != "" {
		r.jobByCall[j.CallID] = j
	}
	if j.start.IsZero() && e.Type == toolloop.EventJobStarted {
		j.start = e.Time
	}
	switch e.Type {
	case toolloop.EventJobStarted:
		if j.CallID != "" {
			c := r.call(b, j.CallID, j.Tool, j.Turn, e.Time)
			c.Job = j.ID
		}
	case toolloop.EventJobOutput:
		if len(j.Output) < maxJobOutputs {
			j.Output = append(j.Output, &jobOutput{At: b.ms(e.Time), Text: b.cut(e.Text)})
			j.OutputMore += max(e.Coalesced, 1) - 1
		} else {
			j.OutputMore += max(e.Coalesced, 1)
		}
	case toolloop.EventJobFinished:
		b.jobFinished(j, e)
	}
}

func (b *builder) jobFinished(j *job, e *toolloop.Event) {
	ej := e.Job
	if ej == nil {
		ej = &toolloop.Job{} // an end that does not say how: shown as an error
	}
	j.done, j.end = true, cmp.Or(ej.Ended, e.Time)
	j.Status = string(ej.Status)
	switch ej.Status {
	case toolloop.JobOK, toolloop.JobError, toolloop.JobCanceled:
	default:
		j.Status = statusError // an end the page does not know
	}
	j.Reason = b.cut(ej.Reason)
	res := ej.Result
	if res == nil {
		return
	}
	if j.start.IsZero() && res.Meta.Duration > 0 {
		j.start = j.end.Add(-res.Meta.Duration)
	}
	if res.Error != nil {
		j.Kind, j.Message = string(res.Error.Kind), b.cut(res.Error.Message)
	}
	body := res.Text()
	if res.Error != nil && body == res.Error.Message {
		body = ""
	}
	j.Result = b.cut(body)
	if c, ok := exitCode(res.Meta.Extra["exit_code"]); ok {
		j.Exit = &c
	}
}

// exitCode reads an exit code as a tool sets it or as JSON decodes it.
func exitCode(v any) (int64, bool) {
	switch c := v.(type) {
	case int:
		return int64(c), true
	case int64:
		return c, true
	case float64:
		if c == math.Trunc(c) && math.Abs(c) < 1<<53 {
			return int64(c), true
		}
	case json.Number:
		n, err := c.Int64()
		return n, err == nil
	}
	return 0, false
}

// told links the message that told the model jobs ended to those jobs:
// the job the event names (named, from Event.Job); or else the ended
// jobs of r not yet told whose ID the text names (the loop's message
// names each: "[Job job_1 (exec_shell) ended: …]"); or, if it names none
// and one ended job was not told, that one. It returns their IDs.
func (r *run) told(text string, turn int, named string) []string {
	if named != "" { // the loop names the job on the event
		for _, j := range r.Jobs {
			if j.ID == named && j.Told == 0 {
				j.Told = max(turn, 1)
				return []string{j.ID}
			}
		}
	}
	var ids []string
	var untold []*job
	for _, j := range r.Jobs {
		if !j.done || j.Told != 0 {
			continue
		}
		untold = append(untold, j)
		if namesJob(text, j.ID) {
			j.Told = max(turn, 1)
			ids = append(ids, j.ID)
		}
	}
	if len(ids) == 0 && len(untold) == 1 {
		untold[0].Told = max(turn, 1)
		ids = append(ids, untold[0].ID)
	}
	return ids
}

// namesJob reports whether text holds id as a word of its own: "job_1"
// is not in "job_12".
func namesJob(text, id string) bool {
	if id == "" {
		return false
	}
	for i := 0; ; {
		k := strings.Index(text[i:], id)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(id)
		if (k == 0 || !wordByte(text[k-1])) && (end == len(text) || !wordByte(text[end])) {
			return true
		}
		i = k + 1
	}
}

func wordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// finishJobs places r's jobs on its timeline, once its turns are placed:
// a job ends in the last turn that started before its end (its events
// name the turn it started in), and a job the log does not see end runs
// to the run's last event, in its last turn.
func (b *builder) finishJobs(r *run) {
	for _, j := range r.Jobs {
		if j.start.IsZero() {
			j.start = r.start
		}
		end := j.end
		if !j.done {
			end = r.end
		}
		j.At = b.ms(j.start)
		j.Dur = toMicro(max(b.ms(end)-j.At, 0))
		if j.Turn == 0 && len(r.Turns) > 0 {
			j.Turn = r.Turns[0].N
		}
		j.EndTurn = j.Turn
		for _, t := range r.Turns { // sorted by number
			if t.N > j.EndTurn && (t.At <= j.At+j.Dur || !j.done) {
				j.EndTurn = t.N
			}
		}
	}
	b.p.Jobs += len(r.Jobs)
}
