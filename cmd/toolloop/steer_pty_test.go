//go:build unix

package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

const steerScript = `[
 {"role":"assistant","content":[{"type":"text","text":"Deploying."}],"tool_calls":[
   {"id":"c1","name":"exec_shell","arguments":{"command":"touch started; while [ ! -e go ]; do sleep 0.05; done; echo deployed"}}]},
 {"role":"assistant","content":[{"type":"text","text":"Using staging, as you asked."}]},
 {"role":"assistant","content":[{"type":"text","text":"Working again."}],"tool_calls":[
   {"id":"c2","name":"exec_shell","arguments":{"command":"touch started2 && sleep 30"}}]},
 {"role":"assistant","content":[{"type":"text","text":"Noted."}]}
]`

// TestTerminalSteer types while toolloop run works, in a pseudo-terminal:
// a question during the run still gets its answer, a line typed while a
// shell command runs is shown as queued and then delivered before the
// model's next request, which answers it; Esc interrupts the next run
// (the mode printed, every call answered), and the text typed and not
// sent starts the next prompt.
func TestTerminalSteer(t *testing.T) {
	ws := t.TempDir()
	script := writeFile(t, t.TempDir(), "script.json", steerScript)
	log := filepath.Join(t.TempDir(), "run.jsonl")

	p := startPTY(t, ws, "run", "-script", script, "-log", log)
	p.expect("> ")
	p.send("deploy\r")
	p.expect("Deploying.")
	p.expect("? exec_shell")
	p.expect("[e]dit the arguments: ")
	p.send("y\r") // the question has the terminal, not the keys
	waitFile(t, filepath.Join(ws, "started"))
	p.send("use staging\r")
	p.expect("» queued: use staging")
	writeFile(t, ws, "go", "")
	p.expect("✓ exec_shell")
	p.expect("» delivered: use staging")
	p.expect("Using staging, as you asked.")
	p.expect("> ")

	p.send("again\r")
	p.expect("Working again.")
	p.expect("[e]dit the arguments: ")
	p.send("y\r")
	waitFile(t, filepath.Join(ws, "started2"))
	p.send("note")
	p.expect("> note")
	p.send("\x1b")
	p.expect("Esc interrupting (now)")
	p.expect("✗ exec_shell")
	p.expect("! interrupted (now)")
	p.expect("the run was interrupted; every call has its result in " + log)
	p.expect("> note")
	p.send(" this\r")
	p.expect("Noted.")
	p.expect("> ")
	p.send("\x04")
	assert.Equal(t, exitOK, p.wait())

	assert.Equal(t, []string{"deploy", "use staging", "again", "note this"}, userTexts(t, log))
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	res := looptest.Results(rp.Transcript())
	assert.Equal(t, toolloop.StatusOK, res["c1"].Status)
	require.NotNil(t, res["c2"].Error)
	assert.Equal(t, toolloop.KindCanceled, res["c2"].Error.Kind)
}

const interruptScript = `[
 {"role":"assistant","content":[{"type":"text","text":"Step one."}],"tool_calls":[
   {"id":"c1","name":"exec_shell","arguments":{"command":"touch started && sleep 30"}}]},
 {"role":"assistant","content":[{"type":"text","text":"Switching to prod."}]},
 {"role":"assistant","tool_calls":[{"id":"c2","name":"exec_shell","arguments":{"command":"touch started2 && sleep 30"}}]}
]`

// TestTerminalInterrupt: Esc interrupts a run while a shell command
// runs; the line typed before it, not delivered, goes with the next
// prompt (Enter alone sends it); Ctrl-C interrupts the next run, and a
// second Ctrl-C quits with 130, leaving a log that replays. (A second
// Ctrl-C while the interrupt is still acted on: TestSecondInterruptQuits.)
func TestTerminalInterrupt(t *testing.T) {
	ws := t.TempDir()
	script := writeFile(t, t.TempDir(), "script.json", interruptScript)
	log := filepath.Join(t.TempDir(), "run.jsonl")

	p := startPTY(t, ws, "run", "-yes", "-script", script, "-log", log)
	p.expect("> ")
	p.send("go\r")
	p.expect("Step one.")
	waitFile(t, filepath.Join(ws, "started"))
	p.send("use prod\r")
	p.expect("» queued: use prod")
	p.send("\x1b")
	p.expect("Esc interrupting (now)")
	p.expect("! interrupted (now)")
	p.expect("1 message typed during the run was not delivered before it ended; it goes with your next prompt")
	p.expect("» use prod")
	p.expect("> ")
	p.send("\r")
	p.expect("Switching to prod.")
	p.expect("> ")

	p.send("more\r")
	waitFile(t, filepath.Join(ws, "started2"))
	p.send("\x03")
	p.expect("^C interrupting (now)")
	p.expect("! interrupted (now)")
	p.expect("> ")
	p.send("\x03")
	assert.Equal(t, exitInterrupted, p.wait())

	assert.Equal(t, []string{"go", "use prod", "more"}, userTexts(t, log))
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	res := looptest.Results(rp.Transcript())
	require.NotNil(t, res["c1"].Error)
	assert.Equal(t, toolloop.KindCanceled, res["c1"].Error.Kind)
	assert.True(t, res["c2"].IsError(), "the interrupted command's result says so")
}
