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
// fixed script runs, the path outside the workspace and the denylisted
// command are refused, and the rewind brings back the script that a
// later command deleted, executable bit included.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "greet.sh")
	require.NoError(t, os.WriteFile(script, []byte(program), 0o755))
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), dir, &out))

	fixed, err := os.ReadFile(script)
	require.NoError(t, err)
	assert.Contains(t, string(fixed), `echo "Hello, $name!"`)
	fi, err := os.Stat(script)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	assert.NoFileExists(t, filepath.Join(dir, "NOTES"), "the rewind removed what the command made")

	got := out.String()
	for _, want := range []string{
		"  ✓ edit_file path=greet.sh ",
		"  ✓ exec_shell command=\"./greet.sh && ./greet.sh Go\" → Hello, world! …",
		"  ✗ read_file path=../../etc/passwd → denied: ",
		"  ✗ exec_shell command=\"sudo rm -rf /\" → denied by policy: ",
		"  ✓ rewind call_id=c6 → rewound to before call c6 (exec_shell, turn 5): 2 paths changed …",
		"  ✓ exec_shell command=\"ls && ./greet.sh again\" → greet.sh …",
		"Fixed the misspelled variable in greet.sh",
		"  c6 exec_shell (turn 5): added NOTES deleted greet.sh\n",
		"  c7 rewind (turn 6): deleted NOTES added greet.sh\n",
		"-echo \"Hello, $nmae!\"\n+echo \"Hello, $name!\"\n",
	} {
		assert.Contains(t, got, want)
	}
}
