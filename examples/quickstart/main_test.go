package main

import (
	"bytes"
	"io"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the quickstart: two searches, a call that validation
// rejects, its correction, and the answer. The rejected call shows once,
// as failed, never as started.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out, ""))
	got := out.String()
	for _, want := range []string{
		"  ✓ search_notes query=deploy → {\"notes\":[1,2],\"query\":\"deploy\"}\n",
		"  ✓ search_notes query=rollback → {\"notes\":[2],\"query\":\"rollback\"}\n",
		"  ✗ read_note id=\"2\" → invalid_args: arguments for read_note do not match its input schema:\n",
		"  ✓ read_note id=2 → Rollback: `kubectl rollout undo deploy/api`; tell #ops before you do.\n",
		"== transcript\n",
		"  → read_note [call_3] {\"id\":\"2\"}\n",
		"tool read_note [call_3]: error (invalid_args)\n",
		"(4 turns, 4 tool calls, 0 input + 0 output tokens)\n",
	} {
		assert.Contains(t, got, want)
	}
	assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("read_note id=\"2\" → invalid_args")), "one line for the rejected call")
	assert.NotContains(t, got, "tool.execution_start")
}

// TestRunLog records the run with -log: the log replays to the transcript
// the run printed, every call answered.
func TestRunLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, run(t.Context(), io.Discard, path))
	rp, err := eventlog.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, rp.Ended)
	assert.False(t, rp.Torn)
	msgs := rp.Transcript()
	require.NoError(t, looptest.Validate(msgs))
	assert.Len(t, rp.Completed, 4)
	assert.Equal(t, "To roll back, run `kubectl rollout undo deploy/api` and tell #ops first (runbook note 2).", msgs[len(msgs)-1].Text())
}

// TestRunLogBadPath: a log that cannot be created fails the run before it
// starts.
func TestRunLogBadPath(t *testing.T) {
	err := run(t.Context(), io.Discard, filepath.Join(t.TempDir(), "missing", "dir", "run.jsonl"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}
