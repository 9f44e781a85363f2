package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example in a scratch workspace: the fix lands, the
// fixed script runs, and the path outside the workspace and the
// denylisted command are refused.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "greet.sh")
	require.NoError(t, os.WriteFile(script, []byte(program), 0o755))
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), dir, &out))

	fixed, err := os.ReadFile(script)
	require.NoError(t, err)
	assert.Contains(t, string(fixed), `echo "Hello, $name!"`)

	got := out.String()
	for _, want := range []string{
		"  ✓ edit_file path=greet.sh ",
		"  ✓ exec_shell command=\"./greet.sh && ./greet.sh Go\" → Hello, world! …",
		"  ✗ read_file path=../../etc/passwd → denied: ",
		"  ✗ exec_shell command=\"sudo rm -rf /\" → denied by policy: ",
		"Fixed the misspelled variable in greet.sh",
	} {
		assert.Contains(t, got, want)
	}
}
