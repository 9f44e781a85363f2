package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/sanitize"
)

// defaultSystem is the system prompt of toolloop run.
const defaultSystem = "You are a coding agent working in the user's workspace through the tools you are given. " +
	"Read before you change anything, keep changes small, and say what you did."

// runFlags are the flags of run and resume.
type runFlags struct {
	modelFlags
	toolFlags
	log     string
	yes     bool
	system  string
	verbose bool
	// view serves the run's page live while it runs (-view).
	view bool
	// session names the stored session to run on, in the database
	// store locates; empty: none.
	session string
	store   storeFlags
	// promptOnStdin: stdin was read whole as the prompt; nothing more
	// is read from it.
	promptOnStdin bool
}

// session is a conversation in the terminal: the loop, its tools, its log
// and its questioner.
type session struct {
	e     *env
	loop  *toolloop.AgentLoop
	tools *tools
	log   *runLog
	in    *lineReader
	print func(toolloop.Event)
	red   *sanitize.Redactor
	// out is stdout, shared by the printer and the keys.
	out *output
	// keys reads what is typed while a run works; nil reads nothing.
	keys keys
	// typed is what was typed during the last run after its last line,
	// the start of the next prompt.
	typed string
	// stored is the stored session the runs are kept in, or nil.
	stored *stored
}

// openSession opens the session of run, or, given the replay of the log
// it appends to, of resume.
func openSession(ctx context.Context, e *env, f *runFlags, logPath string, resume *eventlog.Replay) (*session, error) {
	model, name, err := pickModel(f.modelFlags, e.getenv)
	if err != nil {
		return nil, err
	}
	t, err := openTools(ctx, e, f.toolFlags)
	if err != nil {
		return nil, err
	}
	red := redactor(e.getenv)
	s := &session{e: e, tools: t, red: red, in: newLineReader(e.stdin)}
	s.log = &runLog{path: logPath, dir: filepath.Join(orDefault(f.dir, e.dir), stateDir, "runs"), append: resume != nil, red: red, replay: resume}
	s.out = &output{w: e.stdout}
	if !f.promptOnStdin {
		s.keys = keysFor(e, s.in, s.out)
	}
	var term *terminal
	if e.tty || f.yes {
		term = newTerminal(e, s.in, t.reg, f.yes)
		if s.keys != nil {
			term.hold = s.keys.hold
		}
	}
	s.loop = loopFor(model, t, term, red, s.log.record)
	if s.loop.PauseForApproval || (resume != nil && resume.Paused != nil) {
		// A run that may pause is sealed as its log records it; a paused
		// run's seal is checked again as it resumes.
		key, err := sealKey(e.getenv)
		if err != nil {
			s.close()
			return nil, err
		}
		s.log.key, s.loop.Sealing.Key = key, key
	}
	if err := s.loop.Validate(); err != nil {
		s.close()
		return nil, err
	}
	s.print = newPrint(s.out, f.verbose)
	if term != nil && !f.verbose {
		// The prompt asked; the call's line records the answer.
		s.print = quietAsked(s.print, term)
	}
	fmt.Fprintf(e.stderr, "toolloop: model %s; %d tools\n", name, len(t.reg.Specs(ctx)))
	return s, nil
}

func (s *session) close() error {
	if s.keys != nil {
		s.keys.close()
	}
	s.in.close()
	s.tools.close()
	var err error
	if s.log != nil {
		err = s.log.close()
	}
	if s.stored != nil {
		err = errors.Join(err, s.stored.close())
	}
	return err
}

// useStored makes the session's runs those of stored session st: each
// turn a run of it. Its run logs are records only: they are not sealed,
// so a run that pauses is resumed through the session, never through its
// log (which would run the approved calls without the session knowing).
func (s *session) useStored(st *stored) {
	s.stored = st
	s.log.key = nil
	s.log.carryOn = true
}

// exitNow ends the process; tests replace it.
var exitNow = os.Exit

// converse runs the first turn, then, at a terminal with no prompt given,
// reads follow-up prompts until end of input. Messages typed during a
// turn that it did not deliver go with the next prompt; without one, they
// are listed.
//
// A stored session keeps the messages a run did not deliver itself: its
// next run starts with them.
func (s *session) converse(ctx context.Context, first starter, repl bool) error {
	res, err := s.turn(ctx, first)
	if !repl {
		err = s.after(res, err)
		s.undelivered(res, false)
		return err
	}
	msgs := []toolloop.Message(nil)
	if res != nil {
		msgs = res.Messages
	}
	if err := s.afterPrompt(res, err); err != nil {
		return err
	}
	held := s.undelivered(res, true)
	for {
		typed := s.typed
		s.typed = ""
		fmt.Fprint(s.out, "\n> "+typed)
		line, err := s.in.readLine(ctx, s.e.interrupts)
		if err != nil {
			fmt.Fprintln(s.out)
			switch {
			case len(held) > 0 && s.stored != nil:
				fmt.Fprintf(s.e.stderr, "toolloop: %s typed during the last run %s kept in session %s, for its next run\n", plural(len(held), "message"), pick(len(held), "is", "are"), s.stored.s.ID())
			case len(held) > 0:
				fmt.Fprintf(s.e.stderr, "toolloop: %s typed during the last run %s not sent\n", plural(len(held), "message"), pick(len(held), "was", "were"))
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = typed + line
		blank := strings.TrimSpace(line) == ""
		if blank && len(held) == 0 {
			continue
		}
		var next starter
		if s.stored != nil {
			var add []toolloop.Message
			if !blank {
				add = append(add, toolloop.UserMessage(line))
			}
			next = s.stored.run(s.loop, add...)
		} else {
			msgs = append(msgs, held...)
			if !blank {
				msgs = append(msgs, toolloop.UserMessage(line))
			}
			next = streamOf(s.loop, msgs)
		}
		held = nil
		res, err := s.turn(ctx, next)
		if res != nil {
			msgs = res.Messages
		}
		if err := s.afterPrompt(res, err); err != nil {
			return err
		}
		held = s.undelivered(res, true)
	}
}

// afterPrompt ends one prompt of a conversation: a failed turn is
// reported and the conversation goes on, an interrupted one goes on
// silently, and a paused run ends it (errPaused).
func (s *session) afterPrompt(res *toolloop.RunResult, err error) error {
	err = s.after(res, err)
	switch {
	case err == nil, errors.Is(err, errInterrupted):
		return nil
	case errors.Is(err, errPaused):
		return err
	}
	fmt.Fprintf(s.e.stderr, "toolloop: %v\n", err)
	return nil
}

// after reports how a turn ended.
func (s *session) after(res *toolloop.RunResult, err error) error {
	fmt.Fprintln(s.out)
	path, where := s.log.Path(), s.log.Path()
	if s.stored != nil {
		path, where = s.stored.hint, "session "+s.stored.s.ID()
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(s.e.stderr, "toolloop: the run was interrupted; every call has its result in %s (continue it with: toolloop resume %s)\n", where, path)
		return errInterrupted
	case errors.Is(err, toolloop.ErrPaused) && res != nil && res.Paused != nil:
		fmt.Fprintf(s.e.stderr, "toolloop: %d call(s) wait for approval:\n%s\n", len(res.Paused.Pending), pendingList(res.Paused.Pending))
		return fmt.Errorf("%w: decide with toolloop resume %s at a terminal, or name the calls: toolloop resume -approve ID -deny ID %s", errPaused, path, path)
	}
	return err
}

// cmdRun is toolloop run.
func cmdRun(ctx context.Context, e *env, args []string) error {
	var f runFlags
	fs := newFlagSet(e, "run", "[flags] [prompt]")
	f.modelFlags.register(fs)
	f.toolFlags.register(fs)
	fs.StringVar(&f.log, "log", "", "the event log to write; empty: .toolloop/runs/RUN_ID.jsonl in the workspace")
	fs.BoolVar(&f.yes, "yes", false, "approve every call the guard asks about, without asking")
	fs.StringVar(&f.system, "system", defaultSystem, "the system prompt")
	fs.BoolVar(&f.verbose, "v", false, "print every event, not just the answer and one line per call")
	f.registerView(fs)
	fs.StringVar(&f.session, "session", "", "keep the conversation in the stored session `NAME`, carrying it on if it exists (see toolloop sessions)")
	f.store.register(fs)
	withNotes(fs, providersHelp)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	prompt := strings.Join(pos, " ")
	repl := prompt == "" && e.tty
	if prompt == "" && !e.tty {
		b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
		if err != nil {
			return err
		}
		if prompt = strings.TrimSpace(string(b)); prompt == "" {
			return usagef("no prompt: give one as an argument or on stdin")
		}
		f.promptOnStdin = true
	}
	var st *stored
	if f.session != "" {
		// Opened first: a session in use or paused fails before anything.
		title, _ := redactor(e.getenv).Redact(prompt)
		if st, err = openStored(ctx, e, f.store, f.dir, f.session, true, titleOf(title)); err != nil {
			return err
		}
		if st.s.State().Paused != nil {
			st.close()
			return st.pausedErr()
		}
	}
	s, err := openSession(ctx, e, &f, f.log, nil)
	if err != nil {
		if st != nil {
			st.close()
		}
		return err
	}
	if st != nil {
		s.useStored(st)
		reportStored(e, st)
	}
	if f.log != "" {
		// A path given is opened now, so that a log in use fails the run
		// before it starts.
		if err := s.log.openNow(""); err != nil {
			s.close()
			return usagef("%v", err)
		}
	}
	defer func() {
		if path := s.log.Path(); path != "" {
			fmt.Fprintf(e.stderr, "toolloop: the run is logged in %s\n", path)
		}
	}()
	if f.view {
		// Deferred, so it stops after the return closes the log.
		stop, err := watchSession(e, s)
		if err != nil {
			return errors.Join(err, s.close())
		}
		defer stop()
	}
	msgs := []toolloop.Message{}
	if f.system != "" && (st == nil || len(st.s.State().Messages) == 0) {
		// A stored session has its system prompt from its first run.
		msgs = append(msgs, toolloop.SystemMessage(f.system))
	}
	if repl {
		fmt.Fprint(s.out, "> ")
		line, err := s.in.readLine(ctx, e.interrupts)
		if err != nil {
			fmt.Fprintln(s.out)
			return errors.Join(ignoreEOF(err), s.close())
		}
		prompt = line
	}
	msgs = append(msgs, toolloop.UserMessage(prompt))
	first := streamOf(s.loop, msgs)
	if st != nil {
		first = st.run(s.loop, msgs...)
	}
	err = s.converse(ctx, first, repl)
	return errors.Join(err, s.close())
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// readLog replays a log for resume, test and view, with clear errors: a
// missing file, an empty log and a corrupt line are usage errors; a torn
// last line is reported on stderr and skipped.
func readLog(e *env, path string) (*eventlog.Replay, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, usagef("%s: %v", path, errNoLog)
	}
	rp, err := eventlog.ReadFile(path)
	var le *eventlog.LineError
	switch {
	case errors.As(err, &le):
		return nil, usagef("%s is not an event log, or is corrupt: line %d: %v", path, le.Line, le.Err)
	case err != nil:
		return nil, usagef("reading %s: %v", path, err)
	case rp.Events == 0:
		return nil, usagef("%s holds no events", path)
	}
	if rp.Torn {
		fmt.Fprintf(e.stderr, "toolloop: %s ends in a torn line (the process was killed while writing it); it was skipped\n", path)
	}
	return rp, nil
}

// cmdResume is toolloop resume.
func cmdResume(ctx context.Context, e *env, args []string) error {
	var f runFlags
	fs := newFlagSet(e, "resume", "[flags] [-approve ID] [-deny ID[=REASON]] LOG [follow-up prompt]\n       toolloop resume [flags] [-approve ID] [-deny ID[=REASON]] -session NAME [follow-up prompt]")
	f.modelFlags.register(fs)
	f.toolFlags.register(fs)
	var af approvalFlags
	af.register(fs)
	fs.BoolVar(&f.yes, "yes", false, "approve every call the guard asks about, and every paused call that -approve and -deny leave undecided, without asking")
	fs.BoolVar(&f.verbose, "v", false, "print every event, not just the answer and one line per call")
	f.registerView(fs)
	fs.StringVar(&f.session, "session", "", "continue the stored session `NAME` instead of a log: every argument is then the prompt")
	f.store.register(fs)
	withNotes(fs, resumeNotes)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if f.session != "" {
		return resumeStored(ctx, e, &f, &af, strings.Join(pos, " "))
	}
	if len(pos) == 0 {
		return usagef("which log? toolloop resume LOG, or toolloop resume -session NAME")
	}
	path, prompt := pos[0], strings.Join(pos[1:], " ")
	// Report a missing or bad log before anything else.
	if _, err := readLog(e, path); err != nil {
		return err
	}
	// Lock the log before deciding anything from it, and read it again:
	// another process may have been carrying the run on. The lock is held
	// until the resumed run ends, so a run is resumed once.
	unlock, err := lockLog(path)
	if err != nil {
		return err
	}
	rp, err := readLog(quiet(e), path)
	if err != nil {
		unlock()
		return err
	}
	msgs := rp.Transcript()
	paused := rp.Paused != nil
	// A run that crashed, or that Ctrl-C or Esc stopped, goes on from
	// where it stopped.
	crashed := !paused && (!rp.Ended || rp.StopReason == toolloop.StopAborted || rp.StopReason == toolloop.StopInterrupted)
	if !paused && !crashed && prompt == "" {
		unlock()
		return usagef("the run in %s ended (%s): there is nothing to resume; give a follow-up prompt to go on with the conversation",
			path, orDefault(string(rp.StopReason), "error"))
	}
	// Check the decisions before anything runs.
	var given map[string]toolloop.Approval
	switch {
	case paused:
		// Trust nothing the log says the run waits on before its seal.
		err = checkSeal(e.getenv, path, rp.Paused)
		if err != nil {
			break
		}
		if given, err = af.decisions(rp.Paused); err == nil {
			err = checkDecided(rp.Paused, given, f.yes, e.tty)
		}
	case af.given():
		err = usagef("the run in %s is not paused for approval: -approve and -deny decide the calls a paused run waits on", path)
	}
	if err != nil {
		unlock()
		return err
	}
	s, err := openSession(ctx, e, &f, path, rp)
	if err != nil {
		unlock()
		return err
	}
	s.log.unlock = unlock
	if f.view {
		// Deferred, so it stops after the return closes the log.
		stop, err := watchSession(e, s)
		if err != nil {
			return errors.Join(err, s.close())
		}
		defer stop()
	}
	var first starter
	switch {
	case paused:
		decisions := s.decide(ctx, rp.Paused, given, f.yes)
		st := rp.Paused
		first = func(c context.Context) (*toolloop.Stream, endFunc, error) {
			return s.loop.ResumeStream(c, st, decisions), nil, nil
		}
		fmt.Fprintf(e.stderr, "toolloop: resuming run %s, paused for approval\n", rp.RunID)
	default:
		// A crash, or a cancelled or interrupted turn: the loop gives
		// each call with no result a canceled one and runs nothing that
		// has a result. Or a follow-up to a run that ended.
		if crashed {
			how := "which crashed"
			switch {
			case rp.StopReason == toolloop.StopInterrupted:
				how = "which was interrupted"
			case rp.Ended:
				how = "which was cancelled"
			}
			fmt.Fprintf(e.stderr, "toolloop: resuming run %s, %s\n", rp.RunID, how)
		}
		if prompt != "" {
			msgs = append(msgs, toolloop.UserMessage(prompt))
		}
		first = streamOf(s.loop, msgs)
	}
	err = s.converse(ctx, first, e.tty && prompt == "")
	return errors.Join(err, s.close())
}

// quiet returns e with torn-line reports silenced (the log was read once).
func quiet(e *env) *env {
	c := *e
	c.stderr = io.Discard
	return &c
}
