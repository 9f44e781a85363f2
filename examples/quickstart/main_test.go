package main

import (
	"bytes"
	"testing"

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
	require.NoError(t, run(t.Context(), &out))
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
