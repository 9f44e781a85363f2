//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// term is the toolloop binary in a pseudo-terminal.
type ptyProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // how far expect has matched
	done chan struct{}
}

func startPTY(t *testing.T, dir string, args ...string) *ptyProc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(name, "_API_KEY") || name == "EDITOR" || name == "VISUAL" {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "NO_COLOR=1", "TERM=dumb", "TOOLLOOP_CONFIG_DIR="+configHome)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	require.NoError(t, err)
	p := &ptyProc{t: t, cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		tty.Close()
		<-p.done
	})
	return p
}

// expect waits for s in the output after what was matched before.
func (p *ptyProc) expect(s string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p.mu.Lock()
		out := p.out.String()
		p.mu.Unlock()
		if i := strings.Index(out[p.seen:], s); i >= 0 {
			p.seen += i + len(s)
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %q; the terminal shows:\n%s", s, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *ptyProc) send(s string) {
	p.t.Helper()
	_, err := io.WriteString(p.tty, s)
	require.NoError(p.t, err)
}

// wait waits for the process to end and returns its exit code.
func (p *ptyProc) wait() int {
	p.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- p.cmd.Wait() }()
	select {
	case err := <-errc:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		require.NoError(p.t, err)
		return 0
	case <-time.After(20 * time.Second):
		p.mu.Lock()
		defer p.mu.Unlock()
		p.t.Fatalf("toolloop did not exit; the terminal shows:\n%s", p.out.String())
		return -1
	}
}

const ptyScript = `[
 {"role":"assistant","content":[{"type":"text","text":"Streaming words: alpha beta gamma."}],"tool_calls":[
   {"id":"c1","name":"read_file","arguments":{"path":"a.txt"}},
   {"id":"c2","name":"write_file","arguments":{"path":"yes.txt","content":"y\n"}},
   {"id":"c3","name":"write_file","arguments":{"path":"no.txt","content":"n\n"}}]},
 {"role":"assistant","tool_calls":[{"id":"c4","name":"exec_shell","arguments":{"command":"touch started && sleep 30"}}]},
 {"role":"assistant","content":[{"type":"text","text":"Resumed and finished."}]}
]`

// TestTerminalSession drives toolloop run in a pseudo-terminal with a
// scripted model: the text streams, one write is approved and one
// refused, Ctrl-C in the middle of a shell command interrupts the run with
// every call answered in the log, a Ctrl-C at the prompt quits with 130,
// and toolloop resume finishes the run.
func TestTerminalSession(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "hello\n")
	script := writeFile(t, t.TempDir(), "script.json", ptyScript)
	log := filepath.Join(t.TempDir(), "run.jsonl")

	p := startPTY(t, ws, "run", "-script", script, "-log", log)
	p.expect("> ")
	p.send("look around\r")
	p.expect("Streaming words: alpha beta gamma.")
	p.expect("✓ read_file path=a.txt → hello")
	p.expect(`? write_file {"path":"yes.txt"`)
	p.expect("[e]dit the arguments: ")
	p.send("y\r")
	p.expect(`? write_file {"path":"no.txt"`)
	p.expect("[e]dit the arguments: ")
	p.send("n\r")
	p.expect("? exec_shell")
	p.expect("[e]dit the arguments: ")
	p.send("y\r")
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(ws, "started")); return err == nil },
		20*time.Second, 10*time.Millisecond, "the shell command never started")
	p.send("\x03")
	p.expect("^C interrupting (now)")
	p.expect("interrupted (now)")
	p.expect("the run was interrupted; every call has its result in " + log)
	p.expect("> ")
	p.send("\x03")
	assert.Equal(t, exitInterrupted, p.wait())

	assert.FileExists(t, filepath.Join(ws, "yes.txt"))
	assert.NoFileExists(t, filepath.Join(ws, "no.txt"))
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	msgs := rp.Transcript()
	require.NoError(t, looptest.Validate(msgs), "every call has its result")
	res := looptest.Results(msgs)
	require.Len(t, res, 4)
	assert.Equal(t, toolloop.StatusOK, res["c1"].Status)
	assert.Equal(t, toolloop.StatusOK, res["c2"].Status)
	require.NotNil(t, res["c3"].Error)
	assert.Equal(t, toolloop.KindDenied, res["c3"].Error.Kind)
	assert.True(t, res["c4"].IsError(), "the cancelled command's result says so")
	assert.Equal(t, toolloop.StopInterrupted, rp.StopReason)

	// Resume: the model goes on from the cancelled turn.
	r := startPTY(t, ws, "resume", "-script", script, log)
	r.expect("which was interrupted")
	r.expect("Resumed and finished.")
	r.expect("> ")
	r.send("\x04") // end of input
	assert.Equal(t, exitOK, r.wait())
	rp, err = eventlog.ReadFile(log)
	require.NoError(t, err)
	assert.True(t, rp.Ended)
	assert.Equal(t, toolloop.StopEnd, rp.StopReason)
	msgs = rp.Transcript()
	assert.Equal(t, "Resumed and finished.", msgs[len(msgs)-1].Text())
	assert.Len(t, rp.Completed, 4, "no call ran twice")
}
