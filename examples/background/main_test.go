package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example: the suite starts as a background job, the
// model reads and lists while it runs, the suite's whole output streams
// into the job, its end is delivered once, and the model's answer reacts
// to it.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), t.TempDir(), &out))
	got := out.String()
	for _, want := range []string{
		"  ⧗ job_1 started (exec_shell, call c1)\n",
		"  & job_1 exec_shell command=./run_tests.sh background=true → started in the background\n",
		"  ✓ read_file path=CHANGELOG.md → # Changelog",
		"  ✓ list_directory → CHANGELOG.md",
		"The suite is still running; I will report when it ends.\n",
		"  │ === RUN   TestParse\n",
		"  │ --- PASS: TestExport\n  │ PASS (4 tests)\n",
		"  ⧗ job_1 finished: ok\n",
		"  ✓ job_1 exec_shell command=./run_tests.sh background=true (",
		"  » job end delivered: [Job job_1 (exec_shell, started by call c1) ended: ok after ",
		"The suite passed: 4 of 4 tests ran and passed (exit code 0).",
		"job job_1: ok, 181 bytes of output, told to the model: true\n",
	} {
		assert.Contains(t, got, want)
	}
	assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("job end delivered")), "the end is delivered once")
	// The model did its other work before the suite's end reached it.
	assert.Less(t, bytes.Index(out.Bytes(), []byte("✓ list_directory")), bytes.Index(out.Bytes(), []byte("job end delivered")))
}
