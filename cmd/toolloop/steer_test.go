package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sanitize"
	"github.com/toolloop/toolloop/sink"
)

// syncBuffer is a buffer a test reads while the command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// eventually waits for s in b.
func eventually(t *testing.T, b *syncBuffer, s string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(b.String(), s) }, 20*time.Second, 5*time.Millisecond,
		"waiting for %q; the output is:\n%s", s, b)
}

// waitFile waits for a file a scripted shell command creates.
func waitFile(t *testing.T, path string) {
	t.Helper()
	require.Eventually(t, func() bool { _, err := os.Stat(path); return err == nil },
		20*time.Second, 10*time.Millisecond, "%s never appeared", path)
}

// userTexts are the texts of the user messages of a log's transcript.
func userTexts(t *testing.T, log string) []string {
	t.Helper()
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	msgs := rp.Transcript()
	require.NoError(t, looptest.Validate(msgs), "every call has its result")
	var out []string
	for _, m := range msgs {
		if m.Role == toolloop.RoleUser && m.Text() != "" {
			out = append(out, m.Text())
		}
	}
	return out
}

// TestSteerScriptedInput: without a terminal, the lines of stdin read
// while a run works are queued and delivered before the model's next
// request, which sees them.
func TestSteerScriptedInput(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the script runs a POSIX shell command")
	}
	te := newTestEnv(t, "")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	out := &syncBuffer{}
	te.stdin, te.stdout = r, out
	script := writeFile(t, t.TempDir(), "s.json", `[
 {"role":"assistant","tool_calls":[{"id":"c1","name":"exec_shell","arguments":{"command":"touch started; while [ ! -e go ]; do sleep 0.05; done"}}]},
 {"role":"assistant","content":[{"type":"text","text":"Using staging."}]}]`)
	log := filepath.Join(t.TempDir(), "run.jsonl")
	code := make(chan int, 1)
	go func() { code <- te.run(t, "run", "-yes", "-script", script, "-log", log, "deploy") }()
	waitFile(t, filepath.Join(te.dir, "started"))
	_, err = w.WriteString("use staging\n")
	require.NoError(t, err)
	eventually(t, out, "» queued: use staging")
	writeFile(t, te.dir, "go", "")
	require.Equal(t, exitOK, <-code, te.errOut.String())
	w.Close()
	assert.Contains(t, out.String(), "» delivered: use staging\nUsing staging.")
	assert.Equal(t, []string{"deploy", "use staging"}, userTexts(t, log))
}

// waitTool returns a registry with one tool, "wait", that signals started
// and returns when its context ends, or, if stuck, when release closes.
func waitTool(stuck bool) (reg *toolloop.ToolRegistry, started, release chan struct{}) {
	reg = &toolloop.ToolRegistry{}
	started, release = make(chan struct{}, 8), make(chan struct{})
	reg.MustRegister(toolloop.NewTool("wait", "Waits.", func(ctx context.Context, _ struct{}) (any, error) {
		started <- struct{}{}
		if stuck {
			<-release // ignores cancellation
			return "done", nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return "done", nil
		}
	}))
	return reg, started, release
}

// steerSession is a session on a scripted model and the wait tool, whose
// input is a pipe read line by line (as stdin without raw mode is).
func steerSession(t *testing.T, te *testEnv, model toolloop.Model, reg *toolloop.ToolRegistry, in *os.File) (*session, string) {
	t.Helper()
	red := &sanitize.Redactor{}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	log := &runLog{path: path, red: red}
	lr := newLineReader(in)
	out := &output{w: te.stdout}
	s := &session{e: te.env, log: log, red: red, in: lr, out: out, keys: newLineKeys(lr),
		print: sink.NewPrinter(out, nil), loop: &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: log.record}}
	t.Cleanup(func() { lr.close(); log.close() })
	return s, path
}

// TestSteerInterruptHoldsMessages: in a conversation, a line typed during
// a run that Ctrl-C interrupts before the line is delivered goes with the
// next prompt; an empty prompt sends it alone.
func TestSteerInterruptHoldsMessages(t *testing.T) {
	te := newTestEnv(t, "")
	out := &syncBuffer{}
	errOut := &syncBuffer{}
	te.stdout, te.stderr = out, errOut
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	reg, started, _ := waitTool(false)
	model := looptest.Script(looptest.Calls(looptest.Call("c1", "wait", "{}")), looptest.Text("Switching."))
	s, path := steerSession(t, te, model, reg, r)
	done := make(chan error, 1)
	go func() {
		done <- s.converse(context.Background(), streamOf(s.loop, []toolloop.Message{toolloop.UserMessage("go")}), true)
	}()
	<-started
	_, err = w.WriteString("use prod\n")
	require.NoError(t, err)
	eventually(t, out, "» queued: use prod")
	te.ints <- os.Interrupt
	eventually(t, out, "! interrupted (now)")
	eventually(t, errOut, "1 message typed during the run was not delivered before it ended; it goes with your next prompt")
	eventually(t, out, "\n> ")
	_, err = w.WriteString("\n")
	require.NoError(t, err)
	eventually(t, out, "Switching.")
	w.Close()
	require.NoError(t, <-done)
	assert.Contains(t, errOut.String(), "^C interrupting (now)")
	assert.Contains(t, errOut.String(), "the run was interrupted; every call has its result in "+path)

	rp, err := eventlog.ReadFile(path)
	require.NoError(t, err)
	msgs := rp.Transcript()
	require.NoError(t, looptest.Validate(msgs))
	res := looptest.Results(msgs)
	require.NotNil(t, res["c1"].Error)
	assert.Equal(t, toolloop.KindCanceled, res["c1"].Error.Kind)
	var users []string
	for _, m := range msgs {
		if m.Role == toolloop.RoleUser && m.Text() != "" {
			users = append(users, m.Text())
		}
	}
	assert.Equal(t, []string{"go", "use prod"}, users)
}

// fakeKeys is a keyboard a test presses Esc on.
type fakeKeys struct {
	mu       sync.Mutex
	esc      func()
	restored bool
}

func (k *fakeKeys) start(_ func(string), esc func()) func() string {
	k.mu.Lock()
	k.esc = esc
	k.mu.Unlock()
	return func() string { return "" }
}

func (k *fakeKeys) pressEsc() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.esc()
}

func (k *fakeKeys) hold() func() { return func() {} }
func (k *fakeKeys) close()       {}
func (k *fakeKeys) restore() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.restored = true
}

// TestSecondInterruptQuits: during a turn whose tool does not stop, Esc or
// Ctrl-C interrupts it, and a Ctrl-C after that quits at once with 130,
// after putting the terminal back and closing the log.
func TestSecondInterruptQuits(t *testing.T) {
	for _, first := range []string{"ctrl-c", "esc"} {
		t.Run(first, func(t *testing.T) {
			te := newTestEnv(t, "")
			errOut := &syncBuffer{}
			te.stderr = errOut
			reg, started, release := waitTool(true)
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			defer w.Close()
			s, path := steerSession(t, te, looptest.Script(looptest.Calls(looptest.Call("c1", "wait", "{}")), looptest.Text("ok")), reg, r)
			keys := &fakeKeys{}
			s.keys = keys
			codes := make(chan int, 1)
			old := exitNow
			exitNow = func(code int) { codes <- code }
			t.Cleanup(func() { exitNow = old })

			done := make(chan error, 1)
			go func() {
				_, err := s.turn(context.Background(), streamOf(s.loop, []toolloop.Message{toolloop.UserMessage("go")}))
				done <- err
			}()
			<-started
			if first == "esc" {
				keys.pressEsc()
				eventually(t, errOut, "Esc interrupting (now)")
			} else {
				te.ints <- os.Interrupt
				eventually(t, errOut, "^C interrupting (now)")
			}
			te.ints <- os.Interrupt
			assert.Equal(t, exitInterrupted, <-codes)
			assert.Contains(t, errOut.String(), "quitting")
			assert.True(t, keys.restored, "the terminal is put back before the process exits")
			// The log was closed before quitting: what it holds replays.
			rp, err := eventlog.ReadFile(path)
			require.NoError(t, err)
			assert.False(t, rp.Ended, "a resume treats the run as crashed")
			assert.Len(t, rp.Transcript(), 2, "the prompt and the model's call")

			close(release)
			require.ErrorIs(t, <-done, errInterrupted)
		})
	}
}
