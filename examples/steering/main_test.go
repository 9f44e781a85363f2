package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example: the message sent while run_tests runs is
// delivered before the next model turn and the deploy goes to staging;
// the interrupt keeps the notes streamed so far, marked interrupted, and
// the run goes on with the message. The output is the same every time.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out))
	got := out.String()
	for _, want := range []string{
		"  … run_tests: running 42 tests\nyou: Use staging, not prod.\n  ✓ run_tests → 42 passed\n",
		"  » delivered: Use staging, not prod.\n  ✓ deploy env=staging → api v2 is live on staging\n",
		"Done: api v2 is live on staging; prod is untouched.\n",
		"- The list endpoint pages its results.\nyou: Just one line, please. [interrupts]\n  ! interrupted (now); going on with the queued messages\n  » delivered: Just one line, please.\n",
		"assistant (stop: interrupted)\n  Release notes for api v2:\n  - The list endpoint pages its results.\n\nuser\n  Just one line, please.\n",
		"api v2: paged lists, 30-second timeouts, v1 gone; on staging.\n",
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "env=prod")
	assert.NotContains(t, got, "410 Gone", "the interrupt stopped the notes before their end")

	var again bytes.Buffer
	require.NoError(t, run(t.Context(), &again))
	assert.Equal(t, got, again.String())
}
