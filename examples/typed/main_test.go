package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example: two lookups, an answer the schema rejects,
// and the corrected answer, decoded into a Triage.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out))
	got := out.String()
	for _, want := range []string{
		"✗ final_answer",
		"invalid_args",
		"severity",
		"✓ final_answer",
		"== answer (a Triage, after 3 turns)\n",
		`"severity": "critical"`,
		`"duplicate_of": 4198`,
	} {
		assert.Contains(t, got, want)
	}
}
