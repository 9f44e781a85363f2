package builtin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
)

// drainGrace is how long exec_shell waits, after the command and its
// process group are gone, for processes that escaped the group to let go
// of its output.
const drainGrace = 500 * time.Millisecond

// maxBackgroundTimeout caps the timeout_seconds of a command run as a
// background job. A background command has no timeout of its own unless
// the model gives one: the job's time limit (Limits.Jobs.MaxDuration in
// the loop, 30 minutes by default) bounds it, and usually ends it first.
const maxBackgroundTimeout = 24 * time.Hour

var errShellTimeout = errors.New("command timed out")

type execShellIn struct {
	Command        string `json:"command" jsonschema:"minLength=1" jsonschema_description:"The shell command line to run, in the workspace root."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"minimum=1" jsonschema_description:"Seconds before the command is killed. Default and maximum are given in the tool description."`
	// Background is declared here, not left to the loop, so that the
	// model reads exec_shell's own wording; the loop keeps it in the
	// arguments and sets Call.Job when it runs the call as a job.
	Background bool `json:"background,omitempty" jsonschema_description:"Run the command as a background job: you get a job ID at once and are told when it ends; use it for builds, test suites and servers that take long."`
}

func (w *workspace) execShellTool() toolloop.Tool {
	sh := w.opts.Shell
	background := "background processes it leaves running in its process group are killed when it exits (do not start daemons: one that detaches with setsid may outlive the call; run a server as a background job instead)."
	if w.sandbox.conf.Isolated {
		background = "every process it leaves running, in the background or detached, is killed when it exits, so a server started in one call is gone by the next: run it as a background job instead."
	}
	desc := fmt.Sprintf(`Run a shell command line with %s in the workspace root and return its output. Use it to build, run tests, use git and other command-line tools.

Standard output and standard error are returned together, in the order they were printed; standard input is empty, so interactive commands fail. The command is killed, with the processes it started, after timeout_seconds (default %d, at most %d); %s A non-zero exit code makes the result an error that shows the code and the output. Only the first %d and the last %d bytes of the output are kept: for long output, send it to a file in the workspace (command > out.log 2>&1) and read or search that file. Each call starts a new shell: cd and exported variables do not carry over to the next call. Prefer the file tools to read, search and edit files. The environment holds only PATH, locale and terminal settings, HOME, TMPDIR and the variables the user chose to pass.

With background set to true, the command runs as a background job: the call returns a job ID at once, you go on with other work, and you are told when the command ends, with its exit code and the end of its output. Use it for builds, test suites and servers that take long. A background command has no timeout unless you give timeout_seconds (at most %d); it is killed, with everything it started, when the job is canceled, reaches the job time limit, or the run ends.

%s`,
		strings.Join(append([]string{filepath.Base(w.shell[0])}, w.shell[1:]...), " ")+" <command>",
		int(sh.Timeout/time.Second), int(sh.MaxTimeout/time.Second), background,
		newHeadTail(sh.KeepBytes).headMax, newHeadTail(sh.KeepBytes).tailMax,
		int(maxBackgroundTimeout/time.Second),
		strings.TrimSpace(w.sandbox.conf.Summary+" "+w.sandbox.limits.describe()))
	ann := writes
	ann.OpenWorld = true
	return newTool(toolDef{
		name: ExecShell, description: desc, annotations: titled(ann, "Run shell command"),
		exclusive: true, timeout: sh.MaxTimeout + 30*time.Second, background: true,
	}, w.execShell)
}

func (w *workspace) execShell(ctx context.Context, call *toolloop.Call, in *execShellIn) (*toolloop.ToolResult, error) {
	if strings.IndexByte(in.Command, 0) >= 0 {
		return nil, invalid("the command contains a NUL byte")
	}
	if strings.TrimSpace(in.Command) == "" {
		return nil, invalid("the command is empty")
	}
	sh := w.opts.Shell
	timeout, maxTimeout := sh.Timeout, sh.MaxTimeout
	if call.Job != "" {
		// A background job: the job's context bounds it, unless the
		// model gave a timeout of its own.
		timeout, maxTimeout = 0, maxBackgroundTimeout
	}
	if in.TimeoutSeconds > 0 {
		timeout = maxTimeout
		if in.TimeoutSeconds < int(maxTimeout/time.Second) {
			timeout = time.Duration(in.TimeoutSeconds) * time.Second
		}
	}
	var (
		rctx   context.Context
		cancel context.CancelFunc
	)
	if timeout > 0 {
		rctx, cancel = context.WithTimeoutCause(ctx, timeout, errShellTimeout)
	} else {
		rctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	argv := w.sandbox.command(append(slices.Clone(w.shell), in.Command))
	cmd := exec.CommandContext(rctx, argv[0], argv[1:]...)
	cmd.Dir = w.dir
	cmd.Env = slices.Clone(w.sandbox.baseEnv)
	inGroup(cmd)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, failed("creating the output pipe: %v", err)
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	wait, err := w.sandbox.start(cmd)
	if err != nil {
		_ = pw.Close()
		if te := (*toolloop.ToolError)(nil); errors.As(err, &te) {
			return nil, err
		}
		if ctx.Err() != nil {
			// Stopped before it started (a job canceled at once, a run
			// that ended): the context's error says so, with its kind.
			return nil, ctx.Err()
		}
		return nil, failed("starting the shell: %v", err)
	}
	_ = pw.Close()

	out := newHeadTail(sh.KeepBytes)
	stream := newStreamer(call)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 64<<10)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				_, _ = out.Write(buf[:n])
				stream.add(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	waitErr := wait()
	_ = killGroup(cmd) // whatever it left running in the background
	select {
	case <-readDone:
	case <-time.After(drainGrace):
		_ = pr.Close() // a process that left the group still holds the pipe
		<-readDone
	}
	stream.close()

	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	text := out.String()
	if text == "" {
		text = "(no output)\n"
	} else if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	extra := map[string]any{
		"exit_code": code, "output_bytes": out.total, "output_lines": out.lines,
		"output_truncated": out.truncated(), "timed_out": false,
		"sandbox": cmp.Or(w.sandbox.conf.Mechanism, "none"),
	}
	var te *toolloop.ToolError
	switch {
	case context.Cause(rctx) == errShellTimeout:
		extra["timed_out"] = true
		te = toolloop.Errorf(toolloop.KindTimeout, "the command timed out after %v and was killed, with everything it started", timeout)
	case ctx.Err() != nil && call.Job != "":
		// The job's context ended: job_cancel, the job's time limit, or
		// the run's end. The loop reports the job's end with the cause.
		kind := toolloop.KindCanceled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			kind = toolloop.KindTimeout
		}
		te = toolloop.Errorf(kind, "background job %s was stopped: %v; the command was killed, with everything it started", call.Job, context.Cause(ctx))
	case ctx.Err() != nil:
		te = toolloop.Errorf(toolloop.KindCanceled, "the command was killed because the run was canceled")
	case code != 0:
		var ee *exec.ExitError
		if waitErr != nil && !errors.As(waitErr, &ee) {
			te = toolloop.Errorf(toolloop.KindExecutionFailed, "the command failed: %v", waitErr)
		} else if limit, msg := w.sandbox.limits.exceeded(cmd.ProcessState, text); limit != "" {
			extra["limit"] = limit
			te = toolloop.Errorf(toolloop.KindExecutionFailed, "%s (%v)", msg, cmd.ProcessState)
		} else if code < 0 {
			te = toolloop.Errorf(toolloop.KindExecutionFailed, "the command was killed by a signal (%v)", cmd.ProcessState)
		} else {
			te = toolloop.Errorf(toolloop.KindExecutionFailed, "the command exited with code %d%s", code, signalNote(code))
		}
	}
	if in.Background && call.Job == "" {
		text += "[background jobs are not available here, so the command ran in the foreground]\n"
	}
	r := &toolloop.ToolResult{Status: toolloop.StatusOK}
	if te != nil {
		r.Status, r.Error = toolloop.StatusError, te
		text += "[" + te.Message + "]"
	} else {
		text += "[exit code 0]"
	}
	r.Content = []toolloop.Content{toolloop.TextContent(text)}
	r.Meta.MIMEType = "text/plain; charset=utf-8"
	r.Meta.Extra = extra
	return r, nil
}
