package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example: the sub-agent's search, its pause for
// approval, the resume, and the lead's answer, with the note saved once.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out))
	got := out.String()
	for _, want := range []string{
		"✓ ↳ search_papers query=raft",
		"call_1/call_2 save_notes",
		"✓ ↳ save_notes name=raft text=\"leader election, log replication, safety\" (approved) → saved raft",
		"✓ research",
		"(notes saved: 1; 2 turns of the lead;",
	} {
		assert.Contains(t, got, want)
	}
	assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("→ saved raft")), "the sub-agent's write ran once")
}
