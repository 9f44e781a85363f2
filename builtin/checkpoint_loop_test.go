//go:build unix

package builtin_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// TestCheckpointsInTheLoop runs a session through the agent loop with
// checkpoints on: the model is offered rewind, a guard asks before every
// destructive call (rewind included), each call's diff reaches the
// completion event and the event log, and the rewind undoes the calls
// before it.
func TestCheckpointsInTheLoop(t *testing.T) {
	src, dir := newSource(t, map[string]string{"a.txt": "one\n"},
		&builtin.Options{Checkpoints: &builtin.CheckpointOptions{Dir: t.TempDir()}})
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	specs := reg.Specs(context.Background())
	i := slices.IndexFunc(specs, func(s toolloop.ToolSpec) bool { return s.Name == builtin.Rewind })
	require.GreaterOrEqual(t, i, 0, "rewind is offered with checkpoints on")
	assert.True(t, specs[i].Annotations.Destructive)
	assert.True(t, specs[i].Exclusive)

	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("w1", "write_file", `{"path": "a.txt", "content": "two\n"}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("s1", "exec_shell", `{"command": "echo three > b.txt"}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("r1", "rewind", `{"call_id": "w1"}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("r2", "rewind", `{"call_id": "w1"}`))},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	var mu sync.Mutex
	var asked []string
	guard := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "ask", Destructive: true, Decision: toolloop.Ask, Reason: "changes files"}}}
	approver := toolloop.ApproverFunc(func(_ context.Context, c *toolloop.Call, _ string) (toolloop.Approval, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, c.ID)
		return toolloop.Approval{Approved: c.ID != "r2"}, nil
	})
	var logBuf bytes.Buffer
	log := eventlog.NewWriter(&logBuf, eventlog.Options{})
	rec := &looptest.Recorder{}
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: guard, Approver: approver,
		OnEvent: func(e toolloop.Event) { rec.Record(e); log.Record(e) }}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	require.NoError(t, log.Close())

	assert.Equal(t, []string{"w1", "s1", "r1", "r2"}, asked, "the guard is asked for every call that changes files")
	results := looptest.Results(res.Messages)
	assert.Equal(t, toolloop.KindDenied, results["r2"].Error.Kind)
	assert.Nil(t, results["r1"].Error)
	assert.Equal(t, "one\n", readFileT(t, filepath.Join(dir, "a.txt")), "rewound to before w1")
	assert.NoFileExists(t, filepath.Join(dir, "b.txt"), "the shell's file is gone too")

	var complete *toolloop.Event
	for _, e := range rec.ForCall("s1") {
		if e.Type == toolloop.EventComplete {
			complete = &e
		}
	}
	require.NotNil(t, complete)
	sum, ok := complete.Result.Meta.Extra["checkpoint"].(map[string]any)
	require.True(t, ok)
	assert.Contains(t, sum["diff"], "+++ b/b.txt\n@@ -0,0 +1 @@\n+three\n")

	found := false
	for e, err := range eventlog.Events(&logBuf) {
		require.NoError(t, err)
		if e.Type == toolloop.EventComplete && e.CallID == "w1" {
			sum := e.Result.Meta.Extra["checkpoint"].(map[string]any)
			assert.Contains(t, sum["diff"], "-one\n+two\n", "the diff is in the event log")
			found = true
		}
	}
	assert.True(t, found)

	var ids []string
	for _, cp := range src.Checkpoints().List() {
		ids = append(ids, cp.CallID)
	}
	assert.Equal(t, []string{"w1", "s1", "r1"}, ids, "a denied call records nothing")
}

func readFileT(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func TestCheckpointToolConformance(t *testing.T) {
	src, _ := newSource(t, map[string]string{"a.txt": "a\n"},
		&builtin.Options{Checkpoints: &builtin.CheckpointOptions{Dir: t.TempDir()}})
	looptest.TestTool(t, src.Tool(builtin.WriteFile), []byte(`{"path": "b.txt", "content": "b"}`))
	_, err := src.Tool(builtin.WriteFile).Run(context.Background(),
		&toolloop.Call{ID: "w0", Name: builtin.WriteFile, Arguments: []byte(`{"path": "c.txt", "content": "c"}`)})
	require.NoError(t, err)
	looptest.TestTool(t, src.Tool(builtin.Rewind), []byte(`{"call_id": "w0"}`))
}
