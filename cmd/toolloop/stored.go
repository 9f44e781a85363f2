package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/toolloop/toolloop"
	sess "github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sqlite"
)

// sessionLease is how long a stored session stays in use after the
// toolloop that had it open died without closing it.
const sessionLease = 30 * time.Second

// sessionsEnv names the environment variable that moves the sessions'
// database, as -sessions does.
const sessionsEnv = "TOOLLOOP_SESSIONS"

// storeFlags locate the sessions' database: -sessions PATH, else
// $TOOLLOOP_SESSIONS, else .toolloop/sessions.db in the workspace.
type storeFlags struct {
	path string
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.path, "sessions", "", "the SQLite file that keeps the sessions; empty: $"+sessionsEnv+", else .toolloop/sessions.db in the workspace")
}

// file returns the database's path, for the workspace dir (empty: the
// current directory).
func (f storeFlags) file(e *env, dir string) string {
	p := orDefault(f.path, e.getenv(sessionsEnv))
	if p == "" {
		return filepath.Join(orDefault(dir, e.dir), stateDir, "sessions.db")
	}
	if !filepath.IsAbs(p) && e.dir != "" {
		p = filepath.Join(e.dir, p)
	}
	return p
}

// sessionStore is the sessions' database, open.
type sessionStore struct {
	path string
	st   *sqlite.Store
	ss   *sess.Sessions
}

// openStore opens the database at path. With create false, a database
// that does not exist is not made: errNoStore. A new file is readable by
// its owner only: it holds what the tools read and the model wrote.
func openStore(e *env, path string, create bool) (*sessionStore, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, errNoStore
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("the sessions' database: %w", err)
		}
		// An empty file is an empty SQLite database; SQLite gives its
		// journals the file's mode.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			err = f.Close()
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("the sessions' database: %w", err)
		}
	}
	st, err := sqlite.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the sessions' database %s: %w", path, err)
	}
	red := redactor(e.getenv)
	ss := sess.New(st, sess.Options{LeaseTTL: sessionLease, Redact: red.RedactEvent})
	return &sessionStore{path: path, st: st, ss: ss}, nil
}

func (s *sessionStore) close() error { return s.st.Close() }

// errNoStore: there is no sessions' database yet.
var errNoStore = errors.New("no sessions' database")

// sessionErr turns the session package's errors about session id into
// the command's: a missing session and a bad argument are usage errors,
// a session in use fails the command.
func sessionErr(id string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sess.ErrSessionBusy):
		return fmt.Errorf("session %s is in use by another toolloop (or its process died less than %v ago)", id, sessionLease)
	case errors.Is(err, sess.ErrNotFound), errors.Is(err, errNoStore):
		return usagef("no session %s", id)
	case errors.Is(err, sess.ErrExists):
		return usagef("a session %s exists already", id)
	case errors.Is(err, sess.ErrInvalid):
		return usagef("%v", err)
	}
	return err
}

// stored is the session a run or resume works on, open (its lease held)
// until close.
type stored struct {
	store *sessionStore
	s     *sess.Session
	// hint is how to name the session to toolloop resume.
	hint string
}

// openStored opens session id in the database f locates, creating it
// (titled with title) if there is none and create is set.
func openStored(ctx context.Context, e *env, f storeFlags, dir, id string, create bool, title string) (*stored, error) {
	if err := sess.CheckID(id); err != nil {
		return nil, usagef("-session %q: a session's name is 1 to %d letters, digits and -_.:@, not starting with a dot", id, sess.MaxIDLength)
	}
	path := f.file(e, dir)
	store, err := openStore(e, path, create)
	if err != nil {
		return nil, sessionErr(id, err)
	}
	s, err := store.ss.Open(ctx, id)
	if errors.Is(err, sess.ErrNotFound) && create {
		s, err = store.ss.Create(ctx, sess.Info{ID: id, User: currentUser(e.getenv), Title: title})
		if errors.Is(err, sess.ErrExists) { // made meanwhile by another toolloop
			s, err = store.ss.Open(ctx, id)
		}
	}
	if err != nil {
		store.close()
		return nil, sessionErr(id, err)
	}
	hint := "-session " + id
	if f.path != "" {
		hint = "-sessions " + f.path + " " + hint
	}
	return &stored{store: store, s: s, hint: hint}, nil
}

func (st *stored) close() error {
	return errors.Join(st.s.Close(), st.store.close())
}

// endFunc ends a run with its result: a stored session's Recording.End.
type endFunc func(*toolloop.RunResult, error) (*toolloop.RunResult, error)

// starter starts the run of a turn with ctx: its stream, and, if not
// nil, the function to hand its result to.
type starter func(ctx context.Context) (*toolloop.Stream, endFunc, error)

// streamOf is the starter of a run of loop on msgs, outside any sess.
func streamOf(loop *toolloop.AgentLoop, msgs []toolloop.Message) starter {
	return func(ctx context.Context) (*toolloop.Stream, endFunc, error) {
		return loop.RunStream(ctx, msgs), nil, nil
	}
}

// run is the starter of a run of loop on the session, with msgs after
// its transcript.
func (st *stored) run(loop *toolloop.AgentLoop, msgs ...toolloop.Message) starter {
	return func(ctx context.Context) (*toolloop.Stream, endFunc, error) {
		r, err := st.s.Start(ctx, loop, msgs...)
		if err != nil {
			return nil, nil, err
		}
		if r.Paused != nil {
			r.End(nil, nil)
			return nil, nil, st.pausedErr()
		}
		return r.Loop.RunStream(r.Context(), r.Messages), r.End, nil
	}
}

// resume is the starter of the resumption of the session's paused run.
func (st *stored) resume(loop *toolloop.AgentLoop, decisions map[string]toolloop.Approval) starter {
	return func(ctx context.Context) (*toolloop.Stream, endFunc, error) {
		r, err := st.s.Start(ctx, loop)
		if err != nil {
			return nil, nil, err
		}
		if r.Paused == nil {
			r.End(nil, nil)
			return nil, nil, fmt.Errorf("session %s is no longer paused", st.s.ID())
		}
		return r.Loop.ResumeStream(r.Context(), r.Paused, decisions), r.End, nil
	}
}

// pausedErr says that the session waits for approvals.
func (st *stored) pausedErr() error {
	return usagef("session %s is paused for approval: decide its calls with toolloop resume %s", st.s.ID(), st.hint)
}

// currentUser names the user the sessions a toolloop creates belong to.
func currentUser(getenv func(string) string) string {
	return orDefault(getenv("USER"), getenv("USERNAME"))
}

// titleOf is a session's title made from its first prompt.
func titleOf(prompt string) string {
	return oneLine(prompt)
}

// crashedState reports whether the session's last run stopped before its
// end: its process died, or it was interrupted or cancelled; the loop
// repairs its transcript and the model is asked again.
func crashedState(st *sess.State) bool {
	switch st.Info.Status {
	case sess.StatusRunning:
		return true
	case sess.StatusEnded:
		return st.StopReason == toolloop.StopAborted || st.StopReason == toolloop.StopInterrupted
	}
	return false
}

// describe says where a session's last run got to, for messages.
func describe(st *sess.State) string {
	switch st.Info.Status {
	case sess.StatusNew:
		return "has had no run"
	case sess.StatusEnded:
		return "ended its last run (" + orDefault(string(st.StopReason), "error") + ")"
	}
	return "is " + string(st.Info.Status)
}

// reportStored says which session a run carries on.
func reportStored(e *env, st *stored) {
	state := st.s.State()
	if len(state.Messages) == 0 {
		fmt.Fprintf(e.stderr, "toolloop: session %s, new\n", st.s.ID())
		return
	}
	fmt.Fprintf(e.stderr, "toolloop: session %s, %s, %s\n", st.s.ID(), plural(len(state.Messages), "message"), state.Info.Status)
}

// resumeStored is toolloop resume -session: the session's paused run
// resumed with the decisions, a run that stopped before its end carried
// on, or, with a prompt, the conversation.
func resumeStored(ctx context.Context, e *env, f *runFlags, af *approvalFlags, prompt string) error {
	st, err := openStored(ctx, e, f.store, f.dir, f.session, false, "")
	if err != nil {
		return err
	}
	state := st.s.State()
	paused := state.Paused != nil
	crashed := !paused && crashedState(state)
	var given map[string]toolloop.Approval
	var key []byte
	switch {
	case !paused && af.given():
		err = usagef("session %s is not paused for approval: -approve and -deny decide the calls a paused run waits on", st.s.ID())
	case !paused && !crashed && prompt == "":
		err = usagef("session %s %s: there is nothing to resume; give a follow-up prompt to go on with the conversation", st.s.ID(), describe(state))
	case paused && prompt != "":
		err = usagef("session %s is paused for approval: decide its calls first (toolloop resume %s), then give the follow-up prompt", st.s.ID(), st.hint)
	case paused:
		// Trust nothing the store says the run waits on before its seal,
		// made as the run paused (the database is within reach of the
		// agent's shell).
		if key, err = sealKey(e.getenv); err == nil {
			err = st.s.Verify(key)
		}
		if err != nil {
			break
		}
		if given, err = af.decisions(state.Paused); err == nil {
			err = checkDecided(state.Paused, given, f.yes, e.tty)
		}
	}
	if err != nil {
		st.close()
		return err
	}
	s, err := openSession(ctx, e, f, "", nil)
	if err != nil {
		st.close()
		return err
	}
	s.useStored(st)
	if paused {
		s.loop.Sealing.Key = key // Start checks the seal again
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
	var first starter
	switch {
	case paused:
		decisions := s.decide(ctx, state.Paused, given, f.yes)
		first = st.resume(s.loop, decisions)
		fmt.Fprintf(e.stderr, "toolloop: resuming session %s, paused for approval\n", st.s.ID())
	default:
		if crashed {
			how := "which crashed"
			switch {
			case state.StopReason == toolloop.StopInterrupted:
				how = "which was interrupted"
			case state.Info.Status == sess.StatusEnded:
				how = "which was cancelled"
			}
			fmt.Fprintf(e.stderr, "toolloop: resuming session %s, %s\n", st.s.ID(), how)
		}
		var add []toolloop.Message
		if prompt != "" {
			add = append(add, toolloop.UserMessage(prompt))
		}
		first = st.run(s.loop, add...)
	}
	err = s.converse(ctx, first, e.tty && prompt == "")
	return errors.Join(err, s.close())
}
