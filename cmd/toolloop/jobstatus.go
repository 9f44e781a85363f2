package main

import (
	"cmp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sink"
)

// maxStatusJobs bounds the jobs the status line names; the others are
// counted.
const maxStatusJobs = 4

// jobStatus follows the background jobs of the runs it is shown (see
// toolloop.Job) and makes the status line of toolloop run, shown when a
// job starts or ends:
//
//	· jobs: 2 running (job_1 exec_shell 12s, job_2 exec_shell 3s)
//	· jobs: none running
//
// A job runs from its job.started to its job.finished; the run's end
// forgets the jobs of the run that the log did not see end. The times are
// the events': the line says how long each job had run when the event
// happened.
type jobStatus struct {
	mu      sync.Mutex
	running []runningJob // in the order they started
}

type runningJob struct {
	run, id, tool string
	started       time.Time
}

// update folds e in and returns the status line to show after it, or ""
// if e changes nothing.
func (s *jobStatus) update(e toolloop.Event) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Type {
	case toolloop.EventJobStarted:
		j := e.Job
		if j == nil {
			return ""
		}
		s.running = append(s.running, runningJob{run: e.RunID, id: j.ID, tool: cmp.Or(j.Tool, e.Tool),
			started: cmp.Or(j.Started, e.Time)})
	case toolloop.EventJobFinished:
		if e.Job == nil {
			return ""
		}
		n := len(s.running)
		s.running = deleteJobs(s.running, func(r runningJob) bool { return r.run == e.RunID && r.id == e.Job.ID })
		if len(s.running) == n {
			return "" // a job this status did not see start
		}
	case toolloop.EventRunEnd:
		s.running = deleteJobs(s.running, func(r runningJob) bool { return r.run == e.RunID })
		return ""
	default:
		return ""
	}
	return s.line(e.Time)
}

func deleteJobs(js []runningJob, del func(runningJob) bool) []runningJob {
	out := js[:0]
	for _, j := range js {
		if !del(j) {
			out = append(out, j)
		}
	}
	return out
}

// line is the status line at now.
func (s *jobStatus) line(now time.Time) string {
	if len(s.running) == 0 {
		return "  · jobs: none running\n"
	}
	var b strings.Builder
	b.WriteString("  · jobs: " + strconv.Itoa(len(s.running)) + " running (")
	for i, j := range s.running {
		if i == maxStatusJobs {
			b.WriteString(", +" + strconv.Itoa(len(s.running)-i) + " more")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(oneLine(j.id) + " " + oneLine(j.tool))
		if d := now.Sub(j.started); d >= 0 && !j.started.IsZero() && !now.IsZero() {
			b.WriteString(" " + d.Round(time.Second).String())
		}
	}
	b.WriteString(")\n")
	return b.String()
}

// oneLine shows a name from the run on the status line: cleaned of
// terminal controls, on one line, bounded.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	if len(s) > 60 {
		s = strings.ToValidUTF8(s[:60], "") + "…"
	}
	return s
}

// newPrint returns the session's event printer: the sink's printer, and
// the jobs' status line after each job event that changes it.
func newPrint(out *output, verbose bool) func(toolloop.Event) {
	p := sink.NewPrinter(out, &sink.PrinterOptions{Verbose: verbose})
	var jobs jobStatus
	return func(e toolloop.Event) {
		p(e)
		if line := jobs.update(e); line != "" {
			out.fresh(line)
		}
	}
}
