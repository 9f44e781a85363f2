package eventlog_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// crashChildEnv, when set, makes the test binary run crashChild in the
// directory it names instead of the tests.
const crashChildEnv = "TOOLLOOP_EVENTLOG_CRASH_CHILD"

// crashModel asks for both slow tools in its first turn and answers with
// text once the transcript has an assistant message.
var crashModel = toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	for _, m := range req.Messages {
		if m.Role == toolloop.RoleAssistant {
			return &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("finished")}}}, nil
		}
	}
	return &toolloop.Response{Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{
		{ID: "call_a", Name: "slow_a", Arguments: []byte(`{}`)},
		{ID: "call_b", Name: "slow_b", Arguments: []byte(`{}`)},
	}}}, nil
})

// markerTools returns slow_a, which takes a moment, and slow_b, which
// takes a minute. Each appends a line to its marker file in dir when it
// starts, so the test can count how often each ran, across processes.
func markerTools(dir string) *toolloop.ToolRegistry {
	mark := func(name string) error {
		f, err := os.OpenFile(filepath.Join(dir, name+".runs"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(f, os.Getpid())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	slow := func(name string, d time.Duration) toolloop.Tool {
		return toolloop.NewTool(name, "Takes a while.", func(ctx context.Context, _ struct{}) (any, error) {
			if err := mark(name); err != nil {
				return nil, err
			}
			select {
			case <-time.After(d):
				return name + " done", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	}
	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(slow("slow_a", 200*time.Millisecond), slow("slow_b", time.Minute))
	return reg
}

// crashChild runs the agent with its event log in the directory named by
// crashChildEnv, until the test kills it.
func crashChild() int {
	dir := os.Getenv(crashChildEnv)
	w, err := eventlog.Open(filepath.Join(dir, "log.jsonl"), eventlog.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	loop := &toolloop.AgentLoop{Model: crashModel, Tools: markerTools(dir), OnEvent: w.Record}
	_, err = loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("run both")})
	fmt.Fprintln(os.Stderr, "the child was not killed:", err, w.Close())
	return 3
}

func runs(t *testing.T, dir, tool string) int {
	b, err := os.ReadFile(filepath.Join(dir, tool+".runs"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

// TestCrashAndResume kills an agent with SIGKILL in the middle of a turn
// with two slow tools, one done and one running, and carries on from its
// event log.
func TestCrashAndResume(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "log.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	require.NoError(t, cmd.Start())

	// Wait until the log shows slow_a complete and slow_b started.
	midTurn := func() bool {
		f, err := os.Open(logPath)
		if err != nil {
			return false
		}
		defer f.Close()
		done, started := map[string]bool{}, map[string]bool{}
		for e, err := range eventlog.Events(f) {
			if err != nil {
				return false
			}
			switch e.Type {
			case toolloop.EventStart:
				started[e.CallID] = true
			case toolloop.EventComplete:
				done[e.CallID] = true
			}
		}
		return done["call_a"] && started["call_b"] && !done["call_b"]
	}
	deadline := time.Now().Add(30 * time.Second)
	for !midTurn() {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the log never showed the turn half done; child output:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.Eventually(t, func() bool { return runs(t, dir, "slow_b") == 1 }, 10*time.Second, time.Millisecond)
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no deferred call, no Close
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "child output:\n%s", stderr.String())
	assert.Equal(t, -1, ee.ExitCode(), "killed by a signal")

	// Restart from the event log.
	rp, err := eventlog.ReadFile(logPath)
	require.NoError(t, err)
	assert.False(t, rp.Ended, "the killed run never ended")
	assert.Equal(t, map[string]bool{"call_a": true}, rp.Completed)

	w, err := eventlog.Open(logPath, eventlog.Options{})
	require.NoError(t, err)
	loop := &toolloop.AgentLoop{Model: crashModel, Tools: markerTools(dir), OnEvent: w.Record}
	res, err := loop.Run(context.Background(), rp.Transcript())
	require.NoError(t, err)
	require.NoError(t, w.Close())

	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "finished", res.FinalText)
	results := looptest.Results(res.Messages)
	require.Contains(t, results, "call_a")
	require.Contains(t, results, "call_b")
	assert.Equal(t, toolloop.StatusOK, results["call_a"].Status)
	assert.Equal(t, "slow_a done", results["call_a"].Text())
	require.NotNil(t, results["call_b"].Error)
	assert.Equal(t, toolloop.KindCanceled, results["call_b"].Error.Kind)
	assert.Equal(t, 1, runs(t, dir, "slow_a"), "the completed tool never runs twice")
	assert.Equal(t, 1, runs(t, dir, "slow_b"), "the interrupted tool is not run again")

	// The log now holds the whole story.
	rp, err = eventlog.ReadFile(logPath)
	require.NoError(t, err)
	assert.True(t, rp.Ended)
	assert.False(t, rp.Torn)
	looptest.AssertTranscript(t, res.Messages, rp.Transcript())
}
