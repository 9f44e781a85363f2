package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sanitize"
)

// TestSecondInterruptQuits: a second Ctrl-C during a turn whose tool does
// not stop quits at once with 130, after closing the log.
func TestSecondInterruptQuits(t *testing.T) {
	te := newTestEnv(t, "")
	started, release := make(chan struct{}), make(chan struct{})
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("stuck", "Never stops on its own.", func(context.Context, struct{}) (any, error) {
		close(started)
		<-release // ignores cancellation
		return "done", nil
	}))
	red := &sanitize.Redactor{}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	log := &runLog{path: path, red: red}
	s := &session{e: te.env, log: log, red: red, print: func(toolloop.Event) {}, loop: &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Calls(looptest.Call("c1", "stuck", "{}")), looptest.Text("ok")),
		Tools: &reg, OnEvent: log.record,
	}}
	codes := make(chan int, 1)
	old := exitNow
	exitNow = func(code int) { codes <- code }
	t.Cleanup(func() { exitNow = old })

	done := make(chan error, 1)
	go func() {
		_, err := s.turn(context.Background(), func(c context.Context) *toolloop.Stream {
			return s.loop.RunStream(c, []toolloop.Message{toolloop.UserMessage("go")})
		})
		done <- err
	}()
	<-started
	te.ints <- os.Interrupt
	te.ints <- os.Interrupt
	assert.Equal(t, exitInterrupted, <-codes)
	assert.Contains(t, te.errOut.String(), "quitting")
	// The log was closed before quitting: what it holds replays.
	rp, err := eventlog.ReadFile(path)
	require.NoError(t, err)
	assert.False(t, rp.Ended, "a resume treats the run as crashed")
	assert.Len(t, rp.Transcript(), 2, "the prompt and the model's call")

	close(release)
	require.ErrorIs(t, <-done, errInterrupted)
}
