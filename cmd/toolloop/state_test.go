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

// TestStateHidden: the workspace tools do not show the model toolloop's
// own .toolloop folder, and refuse to read or write in it, so a model
// can neither read earlier runs' logs nor forge one.
func TestStateHidden(t *testing.T) {
	te := newTestEnv(t, "")
	writeFile(t, te.dir, "a.txt", "hello\n")
	script := writeFile(t, t.TempDir(), "s.json", script1)
	require.Equal(t, exitOK, te.run(t, "run", "-yes", "-script", script, "go"), te.errOut.String())
	logs, err := filepath.Glob(filepath.Join(te.dir, stateDir, "runs", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	earlier, err := filepath.Rel(te.dir, logs[0])
	require.NoError(t, err)

	spy := writeFile(t, t.TempDir(), "spy.json", `[
 {"role":"assistant","tool_calls":[
   {"id":"s1","name":"list_directory","arguments":{"path":".","depth":3}},
   {"id":"s2","name":"file_search","arguments":{"pattern":"*.jsonl"}},
   {"id":"s3","name":"grep_search","arguments":{"pattern":"tool.execution"}},
   {"id":"s4","name":"read_file","arguments":{"path":"`+filepath.ToSlash(earlier)+`"}},
   {"id":"s5","name":"write_file","arguments":{"path":".toolloop/runs/forged.jsonl","content":"{}\n"}}]},
 {"role":"assistant","content":[{"type":"text","text":"nothing to see"}]}]`)
	log := filepath.Join(t.TempDir(), "spy.jsonl")
	te2 := newTestEnv(t, "")
	te2.dir = te.dir
	require.Equal(t, exitOK, te2.run(t, "run", "-yes", "-script", spy, "-log", log, "look around"), te2.errOut.String())
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	res := looptest.Results(rp.Transcript())
	for _, id := range []string{"s1", "s2", "s3"} {
		assert.Equal(t, toolloop.StatusOK, res[id].Status, id)
		assert.NotContains(t, res[id].Text(), stateDir, id)
	}
	assert.Contains(t, res["s1"].Text(), "a.txt")
	for _, id := range []string{"s4", "s5"} {
		require.NotNil(t, res[id].Error, id)
		assert.Equal(t, toolloop.KindDenied, res[id].Error.Kind, id)
	}
	assert.NoFileExists(t, filepath.Join(te.dir, stateDir, "runs", "forged.jsonl"))
}
