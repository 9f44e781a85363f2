package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// TestResumeCrash cuts a log as a crash would, after the read's result and
// before the write's, with a torn line: resume reports the torn line, runs
// neither call again (the write gets a result saying the run was
// interrupted), and the model goes on.
func TestResumeCrash(t *testing.T) {
	ws, log := recordRun(t)
	require.NoError(t, os.Remove(filepath.Join(ws, "b.txt")))
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	var cut strings.Builder
	for _, l := range strings.SplitAfter(string(raw), "\n") {
		cut.WriteString(l)
		if strings.Contains(l, `"type":"tool.execution_complete"`) && strings.Contains(l, `"call_id":"c1"`) {
			break
		}
	}
	cut.WriteString(`{"type":"tool.execution_comp`)
	require.NoError(t, os.WriteFile(log, []byte(cut.String()), 0o600))

	te := newTestEnv(t, "")
	te.dir = ws
	script := writeFile(t, t.TempDir(), "s.json", script1)
	require.Equal(t, exitOK, te.run(t, "resume", "-yes", "-script", script, log), te.errOut.String())
	assert.Contains(t, te.errOut.String(), "torn line")
	assert.Contains(t, te.errOut.String(), "which crashed")
	assert.Contains(t, te.out.String(), "All done here.")
	assert.NoFileExists(t, filepath.Join(ws, "b.txt"), "the interrupted write is not run again")

	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	assert.False(t, rp.Torn, "resume cut the torn line off before appending")
	assert.True(t, rp.Ended)
	msgs := rp.Transcript()
	require.NoError(t, looptest.Validate(msgs))
	res := looptest.Results(msgs)
	assert.Equal(t, toolloop.StatusOK, res["c1"].Status)
	assert.Equal(t, "hello\n", res["c1"].Text())
	require.NotNil(t, res["c2"])
	assert.True(t, res["c2"].IsError(), "the write that may or may not have run is reported, not rerun")

	// Exactly once: the run has ended now.
	te = newTestEnv(t, "")
	te.dir = ws
	assert.Equal(t, exitUsage, te.run(t, "resume", "-yes", "-script", script, log))
	// A follow-up goes on with the conversation, and the script says when
	// it has no reply for it.
	te = newTestEnv(t, "")
	te.dir = ws
	assert.Equal(t, exitFailed, te.run(t, "resume", "-yes", "-script", script, log, "and now?"))
	assert.Contains(t, te.errOut.String(), "no more replies")
}

// TestResumePausedAsks: resuming a paused run at a terminal asks about
// each pending call again; a refusal gives the call a denied result.
func TestResumePausedAsks(t *testing.T) {
	te := newTestEnv(t, "")
	writeFile(t, te.dir, "a.txt", "hello\n")
	script := writeFile(t, t.TempDir(), "s.json", script1)
	log := filepath.Join(t.TempDir(), "run.jsonl")
	require.Equal(t, exitPaused, te.run(t, "run", "-script", script, "-log", log, "go"))

	tr := newTestEnv(t, "n\n")
	tr.dir, tr.tty = te.dir, true
	require.Equal(t, exitOK, tr.run(t, "resume", "-script", script, log), tr.errOut.String())
	assert.Contains(t, tr.errOut.String(), `? write_file {"path":"b.txt"`)
	assert.Contains(t, tr.errOut.String(), "run it? [y]es, [n]o: ", "no edit for a paused call")
	assert.Contains(t, tr.out.String(), "All done here.")
	assert.NoFileExists(t, filepath.Join(te.dir, "b.txt"))

	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	res := looptest.Results(rp.Transcript())
	require.NotNil(t, res["c2"].Error)
	assert.Equal(t, toolloop.KindDenied, res["c2"].Error.Kind)
}

// TestConversation: at a terminal with no prompt, each line is a prompt
// of one conversation, logged in one log, until the input ends.
func TestConversation(t *testing.T) {
	te := newTestEnv(t, "go\n\nagain\n")
	te.tty = true
	writeFile(t, te.dir, "a.txt", "hello\n")
	script := writeFile(t, t.TempDir(), "s.json", `[
 {"role":"assistant","content":[{"type":"text","text":"first answer"}],"tool_calls":[{"id":"c1","name":"read_file","arguments":{"path":"a.txt"}}]},
 {"role":"assistant","content":[{"type":"text","text":"first done"}]},
 {"role":"assistant","content":[{"type":"text","text":"second answer"}]}]`)
	log := filepath.Join(t.TempDir(), "run.jsonl")
	require.Equal(t, exitOK, te.run(t, "run", "-script", script, "-log", log), te.errOut.String())
	assert.Contains(t, te.out.String(), "first done")
	assert.Contains(t, te.out.String(), "second answer")
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	var users []string
	for _, m := range rp.Transcript() {
		if m.Role == toolloop.RoleUser {
			users = append(users, m.Text())
		}
	}
	assert.Equal(t, []string{"go", "again"}, users)
}

// script2 reads a file and writes two, which pauses a run without a
// terminal on c2 and c3.
const script2 = `[
 {"role":"user","content":[{"type":"text","text":"go"}]},
 {"role":"assistant","tool_calls":[
   {"id":"c1","name":"read_file","arguments":{"path":"a.txt"}},
   {"id":"c2","name":"write_file","arguments":{"path":"b.txt","content":"b\n"}},
   {"id":"c3","name":"write_file","arguments":{"path":"c.txt","content":"c\n"}}]},
 {"role":"assistant","content":[{"type":"text","text":"All done here."}]}
]`

// pausedRun records a run of script2 paused on c2 and c3, and returns its
// workspace, log and script.
func pausedRun(t *testing.T) (ws, log, script string) {
	t.Helper()
	te := newTestEnv(t, "")
	writeFile(t, te.dir, "a.txt", "hello\n")
	script = writeFile(t, t.TempDir(), "s.json", script2)
	log = filepath.Join(t.TempDir(), "run.jsonl")
	require.Equal(t, exitPaused, te.run(t, "run", "-script", script, "-log", log, "go"), te.errOut.String())
	return te.dir, log, script
}

// TestPauseListsCallIDs: a paused run lists the calls it waits on by
// the IDs that resume -approve and -deny take, and says how to use them.
func TestPauseListsCallIDs(t *testing.T) {
	te := newTestEnv(t, "")
	writeFile(t, te.dir, "a.txt", "hello\n")
	script := writeFile(t, t.TempDir(), "s.json", script2)
	log := filepath.Join(t.TempDir(), "run.jsonl")
	require.Equal(t, exitPaused, te.run(t, "run", "-script", script, "-log", log, "go"))
	assert.Contains(t, te.errOut.String(), "2 call(s) wait for approval:\n  c2  write_file {")
	assert.Contains(t, te.errOut.String(), "\n  c3  write_file {")
	assert.Contains(t, te.errOut.String(), "toolloop resume -approve ID -deny ID "+log)
}

// TestResumeApproveDeny: resume -approve and -deny decide paused calls by
// ID, without a terminal; -yes approves those they leave, a terminal is
// asked about them, and with neither resume lists them and runs nothing.
// An ID no paused call has, or one named twice, is a usage error.
func TestResumeApproveDeny(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string // a terminal's input, if set
		code  int
		// want is each pending call's outcome: "ok", or the text a
		// denied result holds; nil when nothing may run.
		want     map[string]string
		stderr   []string
		noStderr []string
	}{
		{name: "approve one, deny one with a reason", args: []string{"-approve", "c2", "-deny", "c3=c.txt is generated"}, code: exitOK,
			want:   map[string]string{"c2": "ok", "c3": "the user declined the call: c.txt is generated"},
			stderr: []string{"toolloop: approved c2 (write_file)", "toolloop: denied c3 (write_file)"}},
		{name: "deny without a reason, -yes for the rest", args: []string{"-deny", "c2", "-yes"}, code: exitOK,
			want: map[string]string{"c2": "the user declined the call (toolloop resume -deny)", "c3": "ok"}},
		{name: "a reason with = in it", args: []string{"-deny", "c2=use a=b instead", "-deny", "c3"}, code: exitOK,
			want: map[string]string{"c2": "the user declined the call: use a=b instead", "c3": "the user declined the call (toolloop resume -deny)"}},
		{name: "the terminal is asked about the rest", args: []string{"-approve", "c3"}, stdin: "n\n", code: exitOK,
			want:   map[string]string{"c2": "the user declined the call at the terminal", "c3": "ok"},
			stderr: []string{`? write_file {"path":"b.txt"`}, noStderr: []string{`? write_file {"path":"c.txt"`}},
		{name: "undecided without a terminal", args: []string{"-approve", "c2"}, code: exitUsage,
			stderr: []string{"1 approval(s) that no flag decides:\n  c3  write_file {", "-approve ID or -deny ID[=REASON]", "with -yes"}},
		{name: "unknown ID", args: []string{"-approve", "c9", "-yes"}, code: exitUsage,
			stderr: []string{"-approve c9: the run waits on no call with that ID; it waits on:\n  c2  write_file {", "\n  c3  write_file {"}},
		{name: "a call that already ran", args: []string{"-deny", "c1", "-yes"}, code: exitUsage,
			stderr: []string{"-deny c1: the run waits on no call with that ID"}},
		{name: "decided twice", args: []string{"-approve", "c2", "-deny", "c2=no", "-yes"}, code: exitUsage,
			stderr: []string{"-deny c2: the call is decided twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, log, script := pausedRun(t)
			before, err := os.ReadFile(log)
			require.NoError(t, err)
			te := newTestEnv(t, tt.stdin)
			te.dir, te.tty = ws, tt.stdin != ""
			args := append(append([]string{"resume", "-script", script}, tt.args...), log)
			require.Equal(t, tt.code, te.run(t, args...), te.errOut.String())
			for _, s := range tt.stderr {
				assert.Contains(t, te.errOut.String(), s)
			}
			for _, s := range tt.noStderr {
				assert.NotContains(t, te.errOut.String(), s)
			}
			if tt.want == nil {
				after, err := os.ReadFile(log)
				require.NoError(t, err)
				assert.Equal(t, string(before), string(after), "nothing ran, nothing was logged")
				assert.NoFileExists(t, filepath.Join(ws, "b.txt"))
				assert.NoFileExists(t, filepath.Join(ws, "c.txt"))
				return
			}
			assert.Contains(t, te.out.String(), "All done here.")
			rp, err := eventlog.ReadFile(log)
			require.NoError(t, err)
			require.True(t, rp.Ended)
			res := looptest.Results(rp.Transcript())
			for id, want := range tt.want {
				file := filepath.Join(ws, map[string]string{"c2": "b.txt", "c3": "c.txt"}[id])
				require.NotNil(t, res[id], id)
				if want == "ok" {
					assert.Equal(t, toolloop.StatusOK, res[id].Status, id)
					assert.FileExists(t, file)
					continue
				}
				require.NotNil(t, res[id].Error, id)
				assert.Equal(t, toolloop.KindDenied, res[id].Error.Kind, id)
				assert.Contains(t, res[id].Text(), want, id)
				assert.NoFileExists(t, file)
			}
		})
	}
}

// TestResumeApproveNotPaused: -approve and -deny on a run that is not
// paused are a usage error, not silently ignored.
func TestResumeApproveNotPaused(t *testing.T) {
	ws, log := recordRun(t)
	te := newTestEnv(t, "")
	te.dir = ws
	script := writeFile(t, t.TempDir(), "s.json", script1)
	assert.Equal(t, exitUsage, te.run(t, "resume", "-script", script, "-approve", "c2", log, "and now?"))
	assert.Contains(t, te.errOut.String(), "is not paused for approval: -approve and -deny")
}
