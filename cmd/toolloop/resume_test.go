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
