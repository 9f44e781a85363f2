package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	sess "github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sqlite"
)

// scriptChat answers a first run with a read and an answer, and a second
// run (whose request holds the first's two assistant messages) with a
// write, which pauses without a terminal, and then an answer.
const scriptChat = `[
 {"role":"assistant","content":[{"type":"text","text":"Reading first."}],"tool_calls":[{"id":"c1","name":"read_file","arguments":{"path":"a.txt"}}]},
 {"role":"assistant","content":[{"type":"text","text":"first done"}]},
 {"role":"assistant","content":[{"type":"text","text":"second answer"}],"tool_calls":[{"id":"c2","name":"write_file","arguments":{"path":"b.txt","content":"new\n"}}]},
 {"role":"assistant","content":[{"type":"text","text":"wrote it"}]}
]`

// chat is a workspace and a script for runs on stored sessions.
type chat struct {
	t      *testing.T
	ws     string
	script string
}

func newChat(t *testing.T) *chat {
	c := &chat{t: t, ws: t.TempDir(), script: writeFile(t, t.TempDir(), "s.json", scriptChat)}
	writeFile(t, c.ws, "a.txt", "hello\n")
	return c
}

// env returns a test env in the chat's workspace.
func (c *chat) env(stdin string) *testEnv {
	te := newTestEnv(c.t, stdin)
	te.dir = c.ws
	return te
}

// run runs the command in the workspace with the script, and returns its
// env and exit code.
func (c *chat) run(args ...string) (*testEnv, int) {
	c.t.Helper()
	te := c.env("")
	if args[0] == "run" || args[0] == "resume" {
		args = append([]string{args[0], "-script", c.script}, args[1:]...)
	}
	return te, te.run(c.t, args...)
}

// db is the default database's path.
func (c *chat) db() string { return filepath.Join(c.ws, stateDir, "sessions.db") }

// load reads a session through the library.
func (c *chat) load(id string) *sess.State {
	c.t.Helper()
	st, err := sqlite.Open(c.db())
	require.NoError(c.t, err)
	defer st.Close()
	s, err := sess.New(st, sess.Options{}).Load(c.t.Context(), id)
	require.NoError(c.t, err)
	return s
}

func roles(msgs []toolloop.Message) (users []string, systems int) {
	for _, m := range msgs {
		switch m.Role {
		case toolloop.RoleUser:
			users = append(users, m.Text())
		case toolloop.RoleSystem:
			systems++
		}
	}
	return users, systems
}

// TestSessionRuns: a second run on a session carries on its transcript
// (the script gives its second run's answer only to a request that holds
// the first run's), with one system prompt; each run is logged too.
func TestSessionRuns(t *testing.T) {
	c := newChat(t)
	te, code := c.run("run", "-yes", "-session", "fix", "go")
	require.Equal(t, exitOK, code, te.errOut.String())
	assert.Contains(t, te.out.String(), "first done")
	assert.Contains(t, te.errOut.String(), "session fix, new")

	te, code = c.run("run", "-yes", "-session", "fix", "again")
	require.Equal(t, exitOK, code, te.errOut.String())
	assert.Contains(t, te.out.String(), "second answer")
	assert.Contains(t, te.out.String(), "wrote it")
	assert.Contains(t, te.errOut.String(), "session fix, 5 messages, ended")

	st := c.load("fix")
	users, systems := roles(st.Messages)
	assert.Equal(t, []string{"go", "again"}, users)
	assert.Equal(t, 1, systems, "the system prompt goes in once, when the session is new")
	assert.Equal(t, sess.StatusEnded, st.Info.Status)
	assert.Equal(t, "go", st.Info.Title)
	require.NoError(t, looptest.Validate(st.Messages))
	logs, err := filepath.Glob(filepath.Join(c.ws, stateDir, "runs", "*.jsonl"))
	require.NoError(t, err)
	assert.Len(t, logs, 2, "each run has its log, as without a session")
}

// TestSessionConversation: at a terminal, each prompt is another run of
// the same session.
func TestSessionConversation(t *testing.T) {
	c := newChat(t)
	te := c.env("go\nagain\n")
	te.tty = true
	require.Equal(t, exitOK, te.run(t, "run", "-yes", "-script", c.script, "-session", "talk"), te.errOut.String())
	assert.Contains(t, te.out.String(), "wrote it")
	users, systems := roles(c.load("talk").Messages)
	assert.Equal(t, []string{"go", "again"}, users)
	assert.Equal(t, 1, systems)
}

// TestSessionPauseResume: a run that pauses leaves the session paused; a
// new run on it is refused; resume -session -approve runs the call once.
func TestSessionPauseResume(t *testing.T) {
	c := newChat(t)
	_, code := c.run("run", "-yes", "-session", "fix", "go")
	require.Equal(t, exitOK, code)
	te, code := c.run("run", "-session", "fix", "again")
	require.Equal(t, exitPaused, code, te.errOut.String())
	assert.Contains(t, te.errOut.String(), "c2  write_file")
	assert.Contains(t, te.errOut.String(), "toolloop resume -approve ID -deny ID -session fix")
	assert.NoFileExists(t, filepath.Join(c.ws, "b.txt"))
	assert.Equal(t, sess.StatusPaused, c.load("fix").Info.Status)

	te, code = c.run("run", "-session", "fix", "more")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, te.errOut.String(), "session fix is paused for approval: decide its calls with toolloop resume -session fix")

	te, code = c.run("resume", "-session", "fix")
	assert.Equal(t, exitUsage, code, "no terminal and no -yes")
	assert.Contains(t, te.errOut.String(), "no flag decides")
	te, code = c.run("resume", "-session", "fix", "-approve", "c9")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, te.errOut.String(), "waits on no call with that ID")
	te, code = c.run("resume", "-session", "fix", "-approve", "c2", "and then?")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, te.errOut.String(), "decide its calls first")

	te, code = c.run("resume", "-session", "fix", "-approve", "c2")
	require.Equal(t, exitOK, code, te.errOut.String())
	assert.Contains(t, te.out.String(), "wrote it")
	b, err := os.ReadFile(filepath.Join(c.ws, "b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(b))

	te, code = c.run("resume", "-session", "fix", "-approve", "c2")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, te.errOut.String(), "session fix is not paused for approval")
	te, code = c.run("resume", "-session", "fix")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, te.errOut.String(), "session fix ended its last run (stop): there is nothing to resume")
	// A follow-up carries on, and the script says it has no reply.
	te, code = c.run("resume", "-session", "fix", "and now?")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, te.errOut.String(), "no more replies")

	st := c.load("fix")
	require.NoError(t, looptest.Validate(st.Messages))
	res := looptest.Results(st.Messages)
	require.NotNil(t, res["c2"])
	assert.Equal(t, toolloop.StatusOK, res["c2"].Status)
	n := 0
	for _, m := range st.Messages {
		if m.Result != nil && m.Result.CallID == "c2" {
			n++
		}
	}
	assert.Equal(t, 1, n, "the approved call ran once")
	// The resumed run appended to the log of the run that paused.
	logs, err := filepath.Glob(filepath.Join(c.ws, stateDir, "runs", "*.jsonl"))
	require.NoError(t, err)
	assert.Len(t, logs, 3, "the two runs' logs and the follow-up's")
	seals, err := filepath.Glob(filepath.Join(c.ws, stateDir, "runs", "*.seal"))
	require.NoError(t, err)
	assert.Empty(t, seals, "a session's logs are not sealed: its pause is resumed through the session")
}

// TestSessionBusy: a session another process has open is refused at
// once, with exit 1, by run, resume, rewind and delete.
func TestSessionBusy(t *testing.T) {
	c := newChat(t)
	_, code := c.run("run", "-yes", "-session", "fix", "go")
	require.Equal(t, exitOK, code)

	st, err := sqlite.Open(c.db())
	require.NoError(t, err)
	defer st.Close()
	other, err := sess.New(st, sess.Options{Holder: "other"}).Open(t.Context(), "fix")
	require.NoError(t, err)
	for _, args := range [][]string{
		{"run", "-session", "fix", "again"},
		{"resume", "-session", "fix", "again"},
		{"sessions", "rewind", "fix", "0"},
		{"sessions", "delete", "fix"},
	} {
		te, code := c.run(args...)
		assert.Equal(t, exitFailed, code, args)
		assert.Contains(t, te.errOut.String(), "session fix is in use by another toolloop (or its process died less than 30s ago)", args)
	}
	require.NoError(t, other.Close())
	te, code := c.run("run", "-yes", "-session", "fix", "again")
	assert.Equal(t, exitOK, code, te.errOut.String())
}

// TestSessionsCommand: list, show, fork, rewind and delete, their
// output, JSON and errors.
func TestSessionsCommand(t *testing.T) {
	c := newChat(t)
	te, code := c.run("sessions")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, te.out.String())
	te, code = c.run("sessions", "list", "-json")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, te.out.String())
	te, code = c.run("sessions", "show", "fix")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, te.errOut.String(), "no session fix")
	assert.NoFileExists(t, c.db(), "reading makes no database")

	_, code = c.run("run", "-yes", "-session", "fix", "go")
	require.Equal(t, exitOK, code)
	_, code = c.run("run", "-session", "paused", "go")
	require.Equal(t, exitOK, code)
	_, code = c.run("run", "-session", "paused", "again")
	require.Equal(t, exitPaused, code)

	te, code = c.run("sessions")
	require.Equal(t, exitOK, code, te.errOut.String())
	lines := strings.Split(strings.TrimSpace(te.out.String()), "\n")
	require.Len(t, lines, 3, te.out.String())
	assert.Equal(t, []string{"NAME", "STATUS", "UPDATED", "SPENT", "TITLE"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"paused", "paused"}, strings.Fields(lines[1])[:2], "the most recently updated first")
	assert.Equal(t, []string{"fix", "ended"}, strings.Fields(lines[2])[:2])

	te, code = c.run("sessions", "-json")
	require.Equal(t, exitOK, code)
	var infos []sess.Info
	sc := bufio.NewScanner(strings.NewReader(te.out.String()))
	for sc.Scan() {
		var in sess.Info
		require.NoError(t, json.Unmarshal(sc.Bytes(), &in), sc.Text())
		infos = append(infos, in)
	}
	require.Len(t, infos, 2)
	assert.Equal(t, "paused", infos[0].ID)
	assert.Equal(t, sess.StatusPaused, infos[0].Status)

	te, code = c.run("sessions", "list", "-status", "ended", "-since", "1h", "-json")
	require.Equal(t, exitOK, code, te.errOut.String())
	assert.Equal(t, 1, strings.Count(te.out.String(), "\n"))
	assert.Contains(t, te.out.String(), `"id":"fix"`)
	te, code = c.run("sessions", "-since", "2200-01-01", "-json")
	require.Equal(t, exitOK, code, te.errOut.String())
	assert.Empty(t, te.out.String())

	te, code = c.run("sessions", "show", "paused")
	require.Equal(t, exitOK, code, te.errOut.String())
	out := te.out.String()
	assert.Contains(t, out, "status    paused")
	assert.Contains(t, out, "   1 user      go\n")
	assert.Contains(t, out, "               → c1 read_file {\"path\":\"a.txt\"}\n")
	assert.Contains(t, out, "   3 tool      c1 read_file ok: hello\n")
	assert.Contains(t, out, "   5 user      again\n")
	assert.Contains(t, out, "waiting for approval")
	assert.Contains(t, out, "  c2  write_file")

	te, code = c.run("sessions", "show", "-json", "paused")
	require.Equal(t, exitOK, code)
	var shownJSON struct {
		Info     sess.Info              `json:"info"`
		Messages []toolloop.Message     `json:"messages"`
		Pending  []toolloop.PendingCall `json:"pending"`
	}
	require.NoError(t, json.Unmarshal(te.out.Bytes(), &shownJSON))
	assert.Equal(t, "paused", shownJSON.Info.ID)
	assert.Len(t, shownJSON.Messages, 7)
	require.Len(t, shownJSON.Pending, 1)
	assert.Equal(t, "c2", shownJSON.Pending[0].CallID)

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"fork", []string{"fork", "fix", "4", "fix-2"}, exitOK, "forked session fix at message 4 into fix-2"},
		{"fork a taken name", []string{"fork", "fix", "2", "fix-2"}, exitUsage, "a session fix-2 exists already"},
		{"fork mid-call", []string{"fork", "fix", "3", "fix-3"}, exitUsage, "tool calls without their results"},
		{"fork past the end", []string{"fork", "fix", "9", "fix-3"}, exitUsage, "session fix has 5 messages: AT must be 0 to 5"},
		{"fork a bad index", []string{"fork", "fix", "x", "fix-3"}, exitUsage, `AT "x" is not a message index`},
		{"fork a missing session", []string{"fork", "nope", "1", "fix-3"}, exitUsage, "no session nope"},
		{"fork into a bad name", []string{"fork", "fix", "1", ".x"}, exitUsage, `".x" cannot name a session`},
		{"rewind", []string{"rewind", "fix-2", "2"}, exitOK, "rewound session fix-2 to its first 2 messages"},
		{"rewind mid-call", []string{"rewind", "fix", "3"}, exitUsage, "tool calls without their results"},
		{"rewind a missing session", []string{"rewind", "nope", "1"}, exitUsage, "no session nope"},
		{"delete", []string{"delete", "fix-2"}, exitOK, "deleted session fix-2"},
		{"delete a missing session", []string{"delete", "fix-2"}, exitUsage, "no session fix-2"},
		{"show a missing session", []string{"show", "nope"}, exitUsage, "no session nope"},
		{"unknown subcommand", []string{"frob"}, exitUsage, "unknown command sessions frob"},
		{"too many arguments", []string{"show", "a", "b"}, exitUsage, "takes one: NAME"},
		{"bad status", []string{"list", "-status", "odd"}, exitUsage, "-status odd"},
		{"bad since", []string{"-since", "yesterday"}, exitUsage, "-since yesterday"},
		{"bad limit", []string{"-limit", "-1"}, exitUsage, "-limit -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te, code := c.run(append([]string{"sessions"}, tc.args...)...)
			assert.Equal(t, tc.code, code, te.errOut.String())
			assert.Contains(t, te.out.String()+te.errOut.String(), tc.want)
		})
	}
	// The fork then rewind kept the first two messages of fix, then it
	// was deleted; fix itself is as it was.
	users, _ := roles(c.load("fix").Messages)
	assert.Equal(t, []string{"go"}, users)
}

// TestSessionForkCarriesOn: a fork runs on from where it was cut.
func TestSessionForkCarriesOn(t *testing.T) {
	c := newChat(t)
	_, code := c.run("run", "-yes", "-session", "fix", "go")
	require.Equal(t, exitOK, code)
	te, code := c.run("sessions", "fork", "fix", "5", "fix-2")
	require.Equal(t, exitOK, code, te.errOut.String())
	te, code = c.run("run", "-yes", "-session", "fix-2", "again")
	require.Equal(t, exitOK, code, te.errOut.String())
	assert.Contains(t, te.out.String(), "second answer")
	st := c.load("fix-2")
	assert.Equal(t, "fix", st.Info.Parent)
	users, systems := roles(st.Messages)
	assert.Equal(t, []string{"go", "again"}, users)
	assert.Equal(t, 1, systems)
}

// TestSessionsPath: -sessions and $TOOLLOOP_SESSIONS move the database;
// what is shown is redacted.
func TestSessionsPath(t *testing.T) {
	const key = "sk-test-abcdefghijklmnopqrstuvwxyz012345"
	c := newChat(t)
	db := filepath.Join(t.TempDir(), "s.db")
	te := c.env("")
	te.vars["OPENAI_API_KEY"] = key
	require.Equal(t, exitOK, te.run(t, "run", "-yes", "-script", c.script, "-sessions", db, "-session", "k", "my key is "+key), te.errOut.String())
	assert.FileExists(t, db)
	assert.NoFileExists(t, c.db())
	raw, err := os.ReadFile(db)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), key, "the key is redacted before it is stored")

	te = c.env("")
	te.vars[sessionsEnv] = db
	te.vars["OPENAI_API_KEY"] = key
	require.Equal(t, exitOK, te.run(t, "sessions", "show", "k"), te.errOut.String())
	assert.Contains(t, te.out.String(), "my key is [REDACTED")
	assert.NotContains(t, te.out.String(), key)
	te = c.env("")
	te.vars[sessionsEnv] = db
	require.Equal(t, exitOK, te.run(t, "sessions"), te.errOut.String())
	assert.Contains(t, te.out.String(), "k ")
	assert.NotContains(t, te.out.String(), key)

	te, code := c.run("run", "-session", ".bad", "go")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, te.errOut.String(), "a session's name is")
	te, code = c.run("resume", "-session", "nope")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, te.errOut.String(), "no session nope")
}

// TestSessionCrashed: a session whose process died mid-run, once its
// lease lapsed, is carried on by resume -session without a prompt: the
// call left without a result gets one, and the model is asked again.
func TestSessionCrashed(t *testing.T) {
	c := newChat(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(c.db()), 0o700))
	st, err := sqlite.Open(c.db())
	require.NoError(t, err)
	const lease = 300 * time.Millisecond
	s, err := sess.New(st, sess.Options{LeaseTTL: lease}).Create(t.Context(), sess.Info{ID: "c"})
	require.NoError(t, err)
	reg, started, release := waitTool(false)
	loop := &toolloop.AgentLoop{Model: looptest.Script(looptest.Calls(looptest.Call("x1", "wait", "{}")), looptest.Text("never")), Tools: reg}
	r, err := s.Start(t.Context(), loop, toolloop.UserMessage("go"))
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.End(r.Loop.Run(r.Context(), r.Messages))
	}()
	<-started
	// The process dies: its store is gone while the call runs and the
	// session's lease is held.
	require.NoError(t, st.Close())
	close(release)
	<-done
	time.Sleep(lease + 100*time.Millisecond)

	require.Equal(t, sess.StatusRunning, c.load("c").Info.Status)
	te, code := c.run("resume", "-session", "c")
	require.Equal(t, exitOK, code, te.errOut.String())
	assert.Contains(t, te.errOut.String(), "resuming session c, which crashed")
	assert.Contains(t, te.out.String(), "first done")
	state := c.load("c")
	require.NoError(t, looptest.Validate(state.Messages))
	res := looptest.Results(state.Messages)
	require.NotNil(t, res["x1"])
	assert.True(t, res["x1"].IsError(), "the call that may or may not have run is reported, not rerun")
	assert.Equal(t, sess.StatusEnded, state.Info.Status)
}

// TestSessionSteerInterrupt: in a conversation on a stored session, a
// line typed during a run that Ctrl-C interrupts before the line is
// delivered is kept in the session, and its next run starts with it,
// once.
func TestSessionSteerInterrupt(t *testing.T) {
	te := newTestEnv(t, "")
	out, errOut := &syncBuffer{}, &syncBuffer{}
	te.stdout, te.stderr = out, errOut
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	reg, started, _ := waitTool(false)
	model := looptest.Script(looptest.Calls(looptest.Call("c1", "wait", "{}")), looptest.Text("Switching."))
	s, _ := steerSession(t, te, model, reg, r)
	db := filepath.Join(t.TempDir(), "s.db")
	st, err := openStored(t.Context(), te.env, storeFlags{path: db}, "", "steer", true, "")
	require.NoError(t, err)
	s.useStored(st)
	t.Cleanup(func() { st.close() })
	done := make(chan error, 1)
	go func() {
		done <- s.converse(context.Background(), st.run(s.loop, toolloop.UserMessage("go")), true)
	}()
	<-started
	_, err = w.WriteString("use prod\n")
	require.NoError(t, err)
	eventually(t, out, "» queued: use prod")
	te.ints <- os.Interrupt
	eventually(t, errOut, "it goes with your next prompt")
	eventually(t, out, "\n> ")
	_, err = w.WriteString("\n")
	require.NoError(t, err)
	eventually(t, out, "Switching.")
	w.Close()
	require.NoError(t, <-done)
	assert.Contains(t, errOut.String(), "every call has its result in session steer (continue it with: toolloop resume -sessions "+db+" -session steer)")

	state := st.s.State()
	require.NoError(t, looptest.Validate(state.Messages))
	users, _ := roles(state.Messages)
	assert.Equal(t, []string{"go", "use prod"}, users)
	assert.Empty(t, state.Pending)
	assert.Equal(t, sess.StatusEnded, state.Info.Status)
}

// TestSessionResumeAsks: resume -session at a terminal asks about each
// call the paused session waits on; a refusal gives the call a denied
// result, and the run goes on.
func TestSessionResumeAsks(t *testing.T) {
	c := newChat(t)
	_, code := c.run("run", "-yes", "-session", "fix", "go")
	require.Equal(t, exitOK, code)
	_, code = c.run("run", "-session", "fix", "again")
	require.Equal(t, exitPaused, code)

	te := c.env("n\n")
	te.tty = true
	require.Equal(t, exitOK, te.run(t, "resume", "-script", c.script, "-session", "fix"), te.errOut.String())
	assert.Contains(t, te.errOut.String(), `? write_file {"path":"b.txt"`)
	assert.Contains(t, te.out.String(), "wrote it")
	assert.NoFileExists(t, filepath.Join(c.ws, "b.txt"))
	res := looptest.Results(c.load("fix").Messages)
	require.NotNil(t, res["c2"].Error)
	assert.Equal(t, toolloop.KindDenied, res["c2"].Error.Kind)
}
