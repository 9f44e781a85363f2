package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// regexp2's match-timeout clock (codemode sets a default timeout) is
	// one goroutine for the process, started on first use.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock"))
}

// TestRun runs the example: the program's calls are inner calls under
// its call, the run pauses at each write, and across both resumes every
// read runs once.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), t.TempDir(), &out))
	got := out.String()
	for _, want := range []string{
		"→ program call_1\n",
		"    ✓ ↳ call_1/1 file_search pattern=\"**/*.go\"",
		"paused: call_1/12 write_file path=../REPORT.md waits for a person; 11 inner calls done; approved: false\n",
		"denied by the approver: not outside the project",
		"paused: call_1/13 write_file path=REPORT.md waits for a person; 12 inner calls done; approved: true\n",
		"created REPORT.md",
		"(13 inner calls)",
		"read 10 Go files\na write outside the workspace was refused (denied)\n",
		"REPORT.md:\npkg/retry/retry.go (1797 bytes): // pkg/retry/retry.go is file 9 of the project.\n",
		"2 model turns, 14 tool calls (13 of them the program's)\n",
	} {
		assert.Contains(t, got, want)
	}
	// Each read ran once: the resumed program was answered from the journal.
	reads := regexp.MustCompile(`✓ ↳ call_1/\d+ read_file`).FindAllString(got, -1)
	assert.Len(t, reads, 10, got)
}
