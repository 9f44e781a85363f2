package toolloop

import "time"

// BackgroundArg is the argument with which the model runs a tool as a
// background job: a boolean that, when true, makes the call a job (see
// [ToolSpec.Background]). The loop adds it to the schema of each tool
// whose spec allows background runs, unless the schema declares it.
const BackgroundArg = "background"

// The names of the job tools: the tools the loop offers the model once
// the run has started a background job, to read a job's output, wait for
// it, cancel it and list the jobs.
const (
	JobOutputName = "job_output"
	JobWaitName   = "job_wait"
	JobCancelName = "job_cancel"
	JobListName   = "job_list"
)

// JobStatus is where a background job stands.
type JobStatus string

// The job statuses. A job is running until it ends in one of the others,
// once.
const (
	// JobRunning: the tool is still running.
	JobRunning JobStatus = "running"
	// JobOK: the tool ended with a result of status ok.
	JobOK JobStatus = "ok"
	// JobError: the tool ended with an error result (its kind is in
	// Result.Error), or ran past Limits.Jobs.MaxDuration (timeout).
	JobError JobStatus = "error"
	// JobCanceled: the job was canceled, by the model (job_cancel), by
	// the run's end or pause, or by the run's context; Reason says which.
	JobCanceled JobStatus = "canceled"
)

// Job describes a background job: a call the model asked to run in the
// background (see [ToolSpec.Background]). The call's own result said the
// job started; the job's end is told to the model once, as a message
// delivered at the run's next safe point (with [OriginJob]), or as the
// result of the job_wait or job_cancel call that saw it end.
type Job struct {
	// ID names the job to the model and to the job tools: "job_1",
	// "job_2", … in the order the run started them.
	ID string `json:"id"`
	// CallID is the ID of the call that started the job, and Tool its
	// tool's name.
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// Turn is the turn of the starting call.
	Turn   int       `json:"turn"`
	Status JobStatus `json:"status"`
	// Started and Ended are when the tool started and when the job ended
	// (zero while it runs).
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	// OutputBytes counts the output the tool reported while it ran
	// (see [Call.ReportPartial]), kept or not.
	OutputBytes int64 `json:"output_bytes,omitempty"`
	// Reason says why a canceled job was canceled.
	Reason string `json:"reason,omitempty"`
	// Result is the tool's result, once the job ended: cut to the
	// result budget, as the model is told it.
	Result *ToolResult `json:"result,omitempty"`
	// Reported is set once the job's end was told to the model.
	Reported bool `json:"reported,omitempty"`
}

// JobLimits bound a run's background jobs (see [ToolSpec.Background]).
// The zero value is all defaults, given with each field.
type JobLimits struct {
	// Max bounds the jobs of a run that run at once: a call that would
	// start one more is answered with an error result saying so. 0 means
	// 8; a negative value turns background runs off: the loop then adds
	// no background argument (a tool whose schema declares one, such as
	// the builtin exec_shell, still shows it), and a call that sets it
	// runs in the foreground.
	Max int
	// MaxDuration bounds each job: a job still running after it is
	// canceled, and ends with a timeout error. 0 means 30 minutes. The
	// run's context (and Budget.MaxDuration) bounds jobs too.
	MaxDuration time.Duration
	// MaxOutputBytes bounds the output kept of each job: its first
	// quarter and, as a ring, its latest bytes; what falls between is
	// dropped, and job_output says so with a marker. 0 means 1 MiB.
	MaxOutputBytes int
	// EndBytes bounds the output a job's end message shows: the head and
	// tail of its result. 0 means 4 KiB.
	EndBytes int
	// WaitAtEnd makes a run whose model gives its final answer while jobs
	// run wait for them instead of ending them: when a job ends (or a
	// message or interrupt comes into the run's inbox), it is delivered
	// and the model is asked again. The run's context and budget bound
	// the wait. Without it, the run ends and cancels its jobs.
	WaitAtEnd bool
}

// WithDefaults returns j with each zero field set to its default.
func (j JobLimits) WithDefaults() JobLimits {
	if j.Max == 0 {
		j.Max = 8
	}
	if j.MaxDuration <= 0 {
		j.MaxDuration = 30 * time.Minute
	}
	if j.MaxOutputBytes <= 0 {
		j.MaxOutputBytes = 1 << 20
	}
	if j.EndBytes <= 0 {
		j.EndBytes = 4 << 10
	}
	return j
}
