package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"golang.org/x/term"
)

// Exit codes of the command (see the package doc).
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitPaused      = 3
	exitInterrupted = 130
)

// usageError is a mistake in the command line or its input files: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errPaused reports a run that stopped to wait for approvals: exit 3.
var errPaused = errors.New("the run is paused for approval")

// errInterrupted reports a run the user interrupted: exit 130.
var errInterrupted = errors.New("interrupted")

// env is the command's world, passed in so that tests can run it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// tty reports that stdin is a terminal: run holds a conversation and
	// approvals are asked there.
	tty bool
	// interrupts delivers Ctrl-C; nil means none ever comes.
	interrupts <-chan os.Signal
	// dir is the working directory, for default paths.
	dir string
}

func main() {
	ints := make(chan os.Signal, 2)
	signal.Notify(ints, os.Interrupt)
	wd, _ := os.Getwd()
	e := &env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv,
		tty: term.IsTerminal(int(os.Stdin.Fd())), interrupts: ints, dir: wd,
	}
	os.Exit(run(context.Background(), e, os.Args[1:]))
}

// run is the whole command: it dispatches to the subcommand and turns its
// error into an exit code, printing the error.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, helpText)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "run":
		err = cmdRun(ctx, e, rest)
	case "resume":
		err = cmdResume(ctx, e, rest)
	case "tools":
		err = cmdTools(ctx, e, rest)
	case "call":
		err = cmdCall(ctx, e, rest)
	case "test":
		err = cmdTest(ctx, e, rest)
	case "view":
		err = cmdView(ctx, e, rest)
	case "eval":
		err = cmdEval(ctx, e, rest)
	case "sessions":
		err = cmdSessions(ctx, e, rest)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(e.stdout, helpText)
		return exitOK
	default:
		fmt.Fprintf(e.stderr, "toolloop: unknown command %q\n\n%s", cmd, helpText)
		return exitUsage
	}
	return exitCode(e, cmd, err)
}

// exitCode prints err, if any, and maps it to the documented exit code.
func exitCode(e *env, cmd string, err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	switch {
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errFlag):
		return exitUsage // the flag package has printed the problem and the usage
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "toolloop %s: %v\n", cmd, err)
		return exitUsage
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(e.stderr, "toolloop %s: interrupted\n", cmd)
		return exitInterrupted
	case errors.Is(err, errPaused):
		fmt.Fprintf(e.stderr, "toolloop %s: %v\n", cmd, err)
		return exitPaused
	}
	fmt.Fprintf(e.stderr, "toolloop %s: %v\n", cmd, err)
	return exitFailed
}

const helpText = `toolloop runs an agent's tool-call loop from the terminal.

Usage:

  toolloop run [flags] [prompt]        run an agent on the workspace tools
  toolloop run -session NAME [prompt]  keep the conversation in a stored session
  toolloop resume [flags] LOG          continue a crashed, interrupted or paused run
  toolloop resume -session NAME [prompt]
                                       continue a stored session, or decide its pause
  toolloop sessions [list|show|fork|rewind|delete]
                                       list, show, fork, rewind or delete sessions
  toolloop tools [-mcp FILE] [-json]   list every tool the agent would have
  toolloop call [flags] NAME ARGS      run one tool call through the pipeline
  toolloop test [-stub T,...] -o FILE LOG
                                       turn a recorded run into a looptest transcript
  toolloop view [-o FILE | -serve ADDR] LOG
                                       show a recorded run as an HTML page, or
                                       serve it live as the log grows
  toolloop run -view [prompt]          watch the run's page live as it runs
  toolloop eval [flags] DATASET        run a dataset of cases and score them: JSON, JUnit
                                       and HTML reports, -compare OLD.json for regressions
  toolloop eval -from LOG [-o DATASET] add a recorded run to a dataset as a case
  toolloop help                        this text

Run "toolloop COMMAND -h" for a command's flags.

` + providersHelp + `
Exit codes:

  0    success
  1    the run, call or command failed, or the session is in use; for eval,
       a case failed (with -compare: a case or scorer regressed)
  2    bad usage or bad input: flags, a missing or corrupt log, an unknown
       provider or tool, malformed MCP config or JSON arguments, a missing
       session, a paused session given to run, a bad dataset
  3    the run is paused for approval: continue it with toolloop resume LOG
       (or toolloop resume -session NAME)
  130  interrupted: Ctrl-C at the prompt or after an interrupt, or Esc or
       Ctrl-C in a one-shot run

While a run works, a line typed (Enter) is sent to it, delivered before the
model's next request; Esc or Ctrl-C interrupts it, and the conversation goes
on at the prompt.

Sessions (run -session, resume -session, sessions) are kept in an SQLite file:
-sessions PATH, else $TOOLLOOP_SESSIONS, else .toolloop/sessions.db in the
workspace. A session open in one toolloop is in use for the others.
`

// providersHelp lists the providers, for the command's help and for run
// and resume -h.
const providersHelp = `Providers (run, resume, eval): -provider picks one; without it, -script, -base-url
or the first key set in the environment does.

  openai             OpenAI's API; needs OPENAI_API_KEY
  anthropic          Anthropic's API; needs ANTHROPIC_API_KEY
  gemini             the Gemini API; needs GEMINI_API_KEY or GOOGLE_API_KEY
  openai-compatible  any OpenAI-compatible server: -base-url URL -model NAME
                     (its key, if it needs one, in OPENAI_COMPATIBLE_API_KEY)
  script             offline, no key: -script FILE, a looptest transcript
                     whose assistant messages answer as the model

-model picks the model; empty, the provider's default.

A demo script ships in the command's module, in its demo folder
(cmd/toolloop/demo in a clone; after go install, in Go's module cache):
the model lists the folder, reads a file and answers. Play it with

  demo=$(go list -m -f '{{.Dir}}' github.com/toolloop/toolloop/cmd/toolloop@latest)/demo
  toolloop run -C "$demo" -script "$demo/script.json" -log "$(mktemp -d)/demo.jsonl" "What is left to do?"
`

// resumeNotes explains resume's decisions, for resume -h.
const resumeNotes = `Deciding the calls a paused run waits on (the pause lists their IDs):

  -approve ID        runs the call
  -deny ID           refuses it; the model is told the user declined it
  -deny ID=REASON    refuses it and tells the model REASON
  -yes               approves every paused call that no -approve or -deny
                     names, and every call the resumed run asks about

An ID that no paused call has, or a call named twice, is an error. A paused
call that no flag decides is asked about at a terminal (y or n); without a
terminal and without -yes, resume lists the undecided calls and exits 2,
running nothing.

A paused run is resumed only if its log is as toolloop sealed it when the
run paused (the seal is LOG.seal; the key, seal.key in $TOOLLOOP_CONFIG_DIR
or the user's configuration folder).

` + providersHelp

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
