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

var errShellTimeout = errors.New("command timed out")

type execShellIn struct {
	Command        string `json:"command" jsonschema:"minLength=1" jsonschema_description:"The shell command line to run, in the workspace root."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"minimum=1" jsonschema_description:"Seconds before the command is killed. Default and maximum are given in the tool description."`
}

func (w *workspace) execShellTool() toolloop.Tool {
	sh := w.opts.Shell
	background := "background processes it leaves running in its process group are killed when it exits (do not start daemons: one that detaches with setsid may outlive the call)."
	if w.sandbox.conf.Isolated {
		background = "every process it leaves running, in the background or detached, is killed when it exits, so a server started in one call is gone by the next."
	}
	desc := fmt.Sprintf(`Run a shell command line with %s in the workspace root and return its output. Use it to build, run tests, use git and other command-line tools.

Standard output and standard error are returned together, in the order they were printed; standard input is empty, so interactive commands fail. The command is killed, with the processes it started, after timeout_seconds (default %d, at most %d); %s A non-zero exit code makes the result an error that shows the code and the output. Only the first %d and the last %d bytes of the output are kept: for long output, send it to a file in the workspace (command > out.log 2>&1) and read or search that file. Each call starts a new shell: cd and exported variables do not carry over to the next call. Prefer the file tools to read, search and edit files. The environment holds only PATH, locale and terminal settings, HOME, TMPDIR and the variables the user chose to pass.

%s`,
		strings.Join(append([]string{filepath.Base(w.shell[0])}, w.shell[1:]...), " ")+" <command>",
		int(sh.Timeout/time.Second), int(sh.MaxTimeout/time.Second), background,
		newHeadTail(sh.KeepBytes).headMax, newHeadTail(sh.KeepBytes).tailMax,
		strings.TrimSpace(w.sandbox.conf.Summary+" "+w.sandbox.limits.describe()))
	ann := writes
	ann.OpenWorld = true
	return newTool(toolDef{
		name: ExecShell, description: desc, annotations: titled(ann, "Run shell command"),
		exclusive: true, timeout: sh.MaxTimeout + 30*time.Second,
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
	timeout := sh.Timeout
	if in.TimeoutSeconds > 0 {
		timeout = min(time.Duration(in.TimeoutSeconds)*time.Second, sh.MaxTimeout)
	}
	rctx, cancel := context.WithTimeoutCause(ctx, timeout, errShellTimeout)
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
