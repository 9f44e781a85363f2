//go:build unix

package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// exec_shell as a background job (issue 33): these tests drive the real
// loop with a scripted model, as a program would.

// runJobLoop runs a loop over src's tools with model and the job limits,
// recording its events.
func runJobLoop(t *testing.T, src *Source, model toolloop.Model, jobs toolloop.JobLimits) (*toolloop.RunResult, *looptest.Recorder) {
	t.Helper()
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: model, Tools: &reg, OnEvent: rec.Record, Limits: toolloop.Limits{Jobs: jobs}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := l.Run(ctx, []toolloop.Message{toolloop.UserMessage("work on it")})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	return res, rec
}

// shellJob is the arguments of an exec_shell call run in the background.
func shellJob(t *testing.T, command string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"command": command, "background": true})
	require.NoError(t, err)
	return string(b)
}

// jobEnds returns the texts of the messages that told the model a job
// ended.
func jobEnds(rec *looptest.Recorder) []string {
	var out []string
	for _, e := range rec.Of(toolloop.EventUserMessage) {
		if e.Origin == toolloop.OriginJob {
			out = append(out, e.Messages[0].Text())
		}
	}
	return out
}

// jobOutputEvents joins the text of the job.output events.
func jobOutputEvents(rec *looptest.Recorder) string {
	var b strings.Builder
	for _, e := range rec.Of(toolloop.EventJobOutput) {
		b.WriteString(e.Text)
	}
	return b.String()
}

// waitUntil polls cond until it holds or d passes, and reports whether
// it held. A scripted model turn uses it to wait for what a model would
// have waited for.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// lastText is the text of the request's last message, a call's result
// or a user message.
func lastText(req *toolloop.Request) string {
	m := req.Messages[len(req.Messages)-1]
	if m.Result != nil {
		return m.Result.Text()
	}
	return m.Text()
}

func TestExecShellJobStreamsWhileTheModelWorksAndItsEndIsDeliveredOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("the job runs for 30 seconds")
	}
	t.Parallel()
	src, _ := newTestWorkspace(t, map[string]string{"notes.txt": "the suite prints a tick a second\n", "pkg/a.go": "package pkg\n"}, nil)
	rec := &looptest.Recorder{}
	var want strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&want, "tick %d\n", i)
	}
	noEndYet := func(req *toolloop.Request) string {
		for _, m := range req.Messages {
			if strings.HasPrefix(m.Text(), "[Job ") {
				return "the job's end came while it should still run: " + m.Text()
			}
		}
		return ""
	}
	model := looptest.NewModel(t,
		looptest.Turn{
			Check: func(req *toolloop.Request) string {
				for _, s := range req.Tools {
					if s.Name == ExecShell && !strings.Contains(string(s.InputSchema), "builds, test suites and servers") {
						return "exec_shell's schema lacks its own wording of the background argument: " + string(s.InputSchema)
					}
				}
				return ""
			},
			Reply: looptest.Calls(looptest.Call("c1", ExecShell, shellJob(t, "for i in $(seq 30); do echo tick $i; sleep 1; done"))),
		},
		looptest.Turn{
			Check: func(req *toolloop.Request) string {
				if s := lastText(req); !strings.Contains(s, "Started background job job_1") {
					return "the call did not answer at once with the job: " + s
				}
				return ""
			},
			Reply: looptest.Calls(looptest.Call("r1", ReadFile, `{"path":"notes.txt"}`)),
		},
		looptest.Turn{Check: noEndYet, Reply: looptest.Calls(looptest.Call("l1", ListDirectory, `{}`))},
		looptest.Turn{Check: noEndYet, Reply: looptest.Calls(looptest.Call("g1", GrepSearch, `{"pattern":"package"}`))},
		looptest.Turn{
			Check: func(req *toolloop.Request) string {
				// A model would read the output when it wants to see how
				// the suite goes: wait for the second tick to be streamed.
				if !waitUntil(20*time.Second, func() bool { return strings.Contains(jobOutputEvents(rec), "tick 2\n") }) {
					return "the job's output was not streamed: " + jobOutputEvents(rec)
				}
				return noEndYet(req)
			},
			Reply: looptest.Calls(looptest.Call("o1", toolloop.JobOutputName, `{"job":"job_1"}`)),
		},
		looptest.Turn{Check: noEndYet, Reply: looptest.Text("The suite is still running; I will wait for it.")},
		looptest.Turn{
			Check: func(req *toolloop.Request) string {
				s := lastText(req)
				for _, w := range []string{"[Job job_1 (exec_shell, started by call c1) ended: ok", "exit code 0", "tick 30\n"} {
					if !strings.Contains(s, w) {
						return fmt.Sprintf("the job's end lacks %q: %s", w, s)
					}
				}
				return ""
			},
			Reply: looptest.Text("The suite printed its 30 ticks and passed."),
		},
	)
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	l := &toolloop.AgentLoop{Model: model, Tools: &reg, OnEvent: rec.Record,
		Limits: toolloop.Limits{Jobs: toolloop.JobLimits{WaitAtEnd: true}}}
	res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("run the suite")})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)

	results := looptest.Results(res.Messages)
	assert.Contains(t, results["r1"].Text(), "a tick a second")
	assert.Contains(t, results["l1"].Text(), "notes.txt")
	assert.Contains(t, results["o1"].Text(), "tick 1\ntick 2\n", "job_output sees what the command printed so far")

	ends := jobEnds(rec)
	require.Len(t, ends, 1, "the job's end is delivered once")
	assert.Contains(t, ends[0], "exit code 0")
	assert.Equal(t, want.String(), jobOutputEvents(rec), "every byte streamed, in order")
	require.Len(t, res.Jobs, 1)
	j := res.Jobs[0]
	assert.Equal(t, toolloop.JobOK, j.Status)
	assert.True(t, j.Reported)
	assert.Equal(t, int64(want.Len()), j.OutputBytes)
	assert.Equal(t, "The suite printed its 30 ticks and passed.", res.FinalText)
}

// pidsCommand is a shell command line that records, in shell.pids, the
// shell's process ID and process group, and in child.pid the ID of a
// child it leaves running, then sleeps. The IDs are the host's, also in
// a PID namespace, where $$ and $! are the namespace's.
func pidsCommand() string {
	self, child := `echo $$ $(ps -o pgid= -p $$)`, `echo $$`
	if runtime.GOOS == "linux" {
		self, child = `read p _ _ _ g _ </proc/self/stat; echo $p $g`, `read p _ </proc/self/stat; echo $p`
	}
	return self + ` > shell.pids.tmp && mv shell.pids.tmp shell.pids; ` +
		`sh -c '` + child + ` > child.pid.tmp && mv child.pid.tmp child.pid; exec sleep 300' & echo started; sleep 300`
}

// jobPIDs waits for the files pidsCommand writes and returns the IDs.
func jobPIDs(t *testing.T, dir string) (shell, group, child int, ok bool) {
	t.Helper()
	read := func(name string) []int {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil
		}
		var ids []int
		for _, f := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return nil
			}
			ids = append(ids, n)
		}
		return ids
	}
	if !waitUntil(20*time.Second, func() bool { return len(read("shell.pids")) == 2 && len(read("child.pid")) == 1 }) {
		return 0, 0, 0, false
	}
	s, c := read("shell.pids"), read("child.pid")
	return s[0], s[1], c[0], true
}

// requireNoneLeft fails the test unless the processes and the process
// group are gone: kill(2) finds none of them (ESRCH), or finds only
// zombies, which are dead and wait for a reaper that is not this
// process. It waits a little for the kernel to finish killing them.
func requireNoneLeft(t *testing.T, shell, group, child int) {
	t.Helper()
	t.Cleanup(func() { // should the test fail, leave nothing running
		_ = syscall.Kill(-group, syscall.SIGKILL)
		_ = syscall.Kill(child, syscall.SIGKILL)
	})
	left := func() []string {
		var out []string
		for _, p := range []int{shell, child} {
			if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) && !zombie(p) {
				out = append(out, fmt.Sprintf("process %d (kill: %v)", p, err))
			}
		}
		if err := syscall.Kill(-group, 0); !errors.Is(err, syscall.ESRCH) && groupAlive(group) {
			out = append(out, fmt.Sprintf("process group %d (kill: %v)", group, err))
		}
		return out
	}
	if !waitUntil(10*time.Second, func() bool { return len(left()) == 0 }) {
		t.Fatalf("the job's processes outlived it: %v", left())
	}
}

// zombie reports whether pid is a zombie, where /proc tells.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// groupAlive reports whether the process group has a member that is not
// a zombie; where /proc cannot tell, it says yes.
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, pgrp, …
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			return true
		}
	}
	return false
}

// confinements are the ways the job tests run commands: unconfined, and
// in the default sandbox where this machine has one.
func confinements(t *testing.T, run func(t *testing.T, opts *Options)) {
	t.Run("unconfined", func(t *testing.T) { run(t, &Options{Shell: ShellOptions{Sandbox: Sandbox{Disabled: true}}}) })
	t.Run("sandbox", func(t *testing.T) {
		src, _ := newTestWorkspace(t, nil, nil)
		if src.Confinement().Mechanism == "" {
			t.Skip("commands cannot be confined on this machine: " + src.Confinement().Summary)
		}
		run(t, nil)
	})
}

func TestExecShellJobCancelKillsItsProcesses(t *testing.T) {
	confinements(t, func(t *testing.T, opts *Options) {
		src, dir := newTestWorkspace(t, nil, opts)
		var shell, group, child int
		model := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", ExecShell, shellJob(t, pidsCommand())))},
			looptest.Turn{
				Check: func(*toolloop.Request) string {
					var ok bool
					if shell, group, child, ok = jobPIDs(t, dir); !ok {
						return "the job's command did not record its processes"
					}
					return ""
				},
				Reply: looptest.Calls(looptest.Call("k1", toolloop.JobCancelName, `{"job":"job_1"}`)),
			},
			looptest.Turn{Reply: looptest.Text("canceled the server")},
		)
		res, rec := runJobLoop(t, src, model, toolloop.JobLimits{})
		require.NotZero(t, shell)
		requireNoneLeft(t, shell, group, child)

		k := looptest.Results(res.Messages)["k1"]
		require.NotNil(t, k)
		assert.Equal(t, toolloop.StatusOK, k.Status, k.Text())
		assert.Contains(t, k.Text(), "[Job job_1 (exec_shell, started by call c1) ended: canceled")
		assert.Contains(t, k.Text(), "background job job_1 was stopped: canceled by the model (job_cancel); the command was killed, with everything it started")
		assert.NotContains(t, k.Text(), "the run was canceled")
		assert.Contains(t, k.Text(), "started\n", "the result shows the output")
		assert.Empty(t, jobEnds(rec), "job_cancel told the end; no message follows")
		require.Len(t, res.Jobs, 1)
		assert.Equal(t, toolloop.JobCanceled, res.Jobs[0].Status)
		assert.Equal(t, "canceled by the model (job_cancel)", res.Jobs[0].Reason)
	})
}

func TestExecShellJobEndsWithTheRun(t *testing.T) {
	confinements(t, func(t *testing.T, opts *Options) {
		src, dir := newTestWorkspace(t, nil, opts)
		var shell, group, child int
		model := looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", ExecShell, shellJob(t, pidsCommand())))},
			looptest.Turn{
				Check: func(*toolloop.Request) string {
					var ok bool
					if shell, group, child, ok = jobPIDs(t, dir); !ok {
						return "the job's command did not record its processes"
					}
					return ""
				},
				Reply: looptest.Text("The server is up."),
			},
		)
		res, rec := runJobLoop(t, src, model, toolloop.JobLimits{})
		require.NotZero(t, shell)
		requireNoneLeft(t, shell, group, child)

		assert.Equal(t, "The server is up.", res.FinalText)
		require.Len(t, res.Jobs, 1)
		j := res.Jobs[0]
		assert.Equal(t, toolloop.JobCanceled, j.Status)
		assert.Equal(t, "the run ended", j.Reason)
		assert.False(t, j.Reported, "the model was not told: the run had ended")
		require.NotNil(t, j.Result)
		assert.Contains(t, j.Result.Text(), "background job job_1 was stopped: the run ended; the command was killed")
		assert.Empty(t, jobEnds(rec))
		assert.Empty(t, res.Undelivered)
	})
}

func TestExecShellJobLimit(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, nil)
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(
			looptest.Call("c1", ExecShell, shellJob(t, "sleep 300")),
			looptest.Call("c2", ExecShell, shellJob(t, "echo second")),
		)},
		looptest.Turn{Reply: looptest.Text("one runs")},
	)
	res, _ := runJobLoop(t, src, model, toolloop.JobLimits{Max: 1})
	results := looptest.Results(res.Messages)
	assert.Equal(t, toolloop.StatusOK, results["c1"].Status)
	assert.Contains(t, results["c1"].Text(), "Started background job job_1")
	second := results["c2"]
	require.Equal(t, toolloop.StatusError, second.Status)
	require.NotNil(t, second.Error)
	assert.Equal(t, toolloop.KindExecutionFailed, second.Error.Kind)
	assert.Contains(t, second.Text(), "1 background jobs are running and at most 1 run at once")
	assert.Contains(t, second.Text(), "job_wait")
	require.Len(t, res.Jobs, 1, "the second call started no job")
	assert.Equal(t, toolloop.JobCanceled, res.Jobs[0].Status, "%+v %+v", res.Jobs[0], res.Jobs[0].Result)
}

func TestExecShellJobOutputBeyondTheRingIsCut(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, nil)
	var printed strings.Builder
	for i := 1; i <= 100000; i++ {
		printed.WriteString(strconv.Itoa(i) + "\n")
	}
	printed.WriteString("LAST\n")
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", ExecShell, shellJob(t, "seq 1 100000; echo LAST")))},
		looptest.Turn{Reply: looptest.Text("Waiting for the output.")},
		looptest.Turn{
			Check: func(req *toolloop.Request) string {
				if s := lastText(req); !strings.Contains(s, fmt.Sprintf("It printed %d bytes of output", printed.Len())) {
					return "the end does not count all the output: " + s
				}
				return ""
			},
			Reply: looptest.Calls(looptest.Call("o1", toolloop.JobOutputName, `{"job":"job_1"}`)),
		},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	res, _ := runJobLoop(t, src, model, toolloop.JobLimits{MaxOutputBytes: 4096, WaitAtEnd: true})
	out := looptest.Results(res.Messages)["o1"].Text()
	assert.True(t, strings.Contains(out, "1\n2\n3\n4\n"), "the head is kept: %.200q", out)
	assert.Contains(t, out, "of the output were dropped")
	assert.Contains(t, out, "99999\n100000\nLAST\n", "the tail is kept")
	assert.NotContains(t, out, "not streamed", "a job's output is streamed whole")
	assert.Less(t, len(out), 5000)
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, int64(printed.Len()), res.Jobs[0].OutputBytes, "every byte reached the job")
	assert.Equal(t, toolloop.JobOK, res.Jobs[0].Status)
}

func TestExecShellJobTimeout(t *testing.T) {
	// The foreground timeout is a second; a background command has none
	// unless the model gives one.
	src, _ := newTestWorkspace(t, nil, &Options{Shell: ShellOptions{Timeout: time.Second}})
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(
			looptest.Call("c1", ExecShell, shellJob(t, "sleep 2; echo outlived the foreground timeout")),
			looptest.Call("c2", ExecShell, `{"command":"echo begun; sleep 300","timeout_seconds":1,"background":true}`),
		)},
		// Asked again as each job's end is delivered (one at a time or
		// both at once), until none runs.
		looptest.Turn{Reply: looptest.Text("Waiting."), Times: looptest.Forever},
	)
	res, _ := runJobLoop(t, src, model, toolloop.JobLimits{WaitAtEnd: true})
	require.Len(t, res.Jobs, 2)
	byCall := map[string]toolloop.Job{}
	for _, j := range res.Jobs {
		byCall[j.CallID] = j
	}
	long := byCall["c1"]
	assert.Equal(t, toolloop.JobOK, long.Status, long.Result.Text())
	assert.Contains(t, long.Result.Text(), "outlived the foreground timeout")
	short := byCall["c2"]
	assert.Equal(t, toolloop.JobError, short.Status)
	require.NotNil(t, short.Result.Error)
	assert.Equal(t, toolloop.KindTimeout, short.Result.Error.Kind)
	assert.Contains(t, short.Result.Text(), "begun\n")
	assert.Equal(t, true, short.Result.Meta.Extra["timed_out"])
}

func TestExecShellBackgroundWithoutJobsRunsInTheForeground(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, nil)
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", ExecShell, shellJob(t, "echo here")))},
		looptest.Turn{Reply: looptest.Text("ran")},
	)
	res, _ := runJobLoop(t, src, model, toolloop.JobLimits{Max: -1})
	r := looptest.Results(res.Messages)["c1"]
	assert.Equal(t, toolloop.StatusOK, r.Status)
	assert.Equal(t, "here\n[background jobs are not available here, so the command ran in the foreground]\n[exit code 0]", r.Text())
	assert.Empty(t, res.Jobs)
}

// runAsJob runs exec_shell directly as the loop runs a job's tool: with
// Call.Job set and a reporter.
func runAsJob(ctx context.Context, t *testing.T, src *Source, in execShellIn, rep toolloop.Reporter) *toolloop.ToolResult {
	t.Helper()
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	res, err := src.Tool(ExecShell).Run(ctx, &toolloop.Call{ID: "c1", Name: ExecShell, Arguments: raw, Reporter: rep, Job: "job_7"})
	require.NoError(t, err)
	return res
}

func TestExecShellJobStreamsAllItsOutput(t *testing.T) {
	// In the foreground, output is streamed at most 8 KiB every 100 ms;
	// a job keeps its output for job_output, so all of it is reported.
	src, _ := newTestWorkspace(t, nil, nil)
	rep := &partials{}
	r := runAsJob(context.Background(), t, src, execShellIn{Command: "printf 'h\\303\\251'; seq 1 200000; echo LAST"}, rep)
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	var want strings.Builder
	want.WriteString("hé")
	for i := 1; i <= 200000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	want.WriteString("LAST\n")
	assert.Equal(t, want.String(), rep.all())
}

func TestExecShellJobCanceledSaysSo(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(errors.New("canceled by the model (job_cancel)")) })
	r := runAsJob(ctx, t, src, execShellIn{Command: "echo begun; sleep 300"}, nil)
	require.NotNil(t, r.Error)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	assert.Equal(t, "background job job_7 was stopped: canceled by the model (job_cancel); the command was killed, with everything it started", r.Error.Message)
	assert.Contains(t, r.Text(), "begun\n")
}
