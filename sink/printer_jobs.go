package sink

import (
	"cmp"
	"strconv"

	"github.com/toolloop/toolloop"
)

// jobStarted prints that a call started a background job: "& job_1
// exec_shell command=make → started in the background".
func (p *printer) jobStarted(v *runView, e toolloop.Event) {
	j := e.Job
	if j == nil {
		return
	}
	callID := cmp.Or(e.CallID, j.CallID)
	args := v.calls[callID]
	v.jobs[j.ID] = args
	v.jobCalls[callID] = true
	p.callLine(markJob, sgrCyan, j.ID+" "+cmp.Or(e.Tool, j.Tool), args, "", "started in the background")
}

// jobFinished prints how a job ended: its status and duration, its exit
// code if its result has one, the error of a failed job in full (up to
// ErrorBytes), why a canceled one was canceled, and the first line of a
// successful one's result.
func (p *printer) jobFinished(v *runView, e toolloop.Event) {
	j := e.Job
	if j == nil {
		return
	}
	args := v.jobs[j.ID]
	delete(v.jobs, j.ID)
	dur := ""
	d := j.Ended.Sub(j.Started)
	if j.Started.IsZero() || j.Ended.IsZero() {
		d = 0
		if j.Result != nil {
			d = j.Result.Meta.Duration
		}
	}
	if d > 0 {
		dur = formatDuration(d)
	}
	tool := cmp.Or(e.Tool, j.Tool)
	r := j.Result
	what := string(j.Status)
	if r != nil && r.Error != nil && string(r.Error.Kind) != string(j.Status) {
		what += " (" + string(r.Error.Kind) + ")"
	}
	if code, ok := exitCode(r); ok {
		what += ", exit code " + strconv.FormatInt(code, 10)
	}
	if j.Status == toolloop.JobOK {
		if r != nil {
			what += ": " + p.resultSummary(r)
		}
		p.callLine(markOK, sgrGreen, j.ID+" "+tool, args, dur, what)
		return
	}
	mark, sgr := markFailed, sgrRed
	if j.Status == toolloop.JobCanceled {
		mark, sgr = markNote, sgrYellow
	}
	msg := j.Reason
	switch {
	case msg != "":
	case r != nil && r.Error != nil:
		msg = r.Error.Message
	case r != nil:
		msg = r.Text()
	}
	p.callHead(mark, sgr, j.ID+" "+tool, args, dur)
	p.buf = append(p.buf, " → "...)
	p.buf = p.c.add(p.buf, sgr, what)
	p.body("", msg)
}
