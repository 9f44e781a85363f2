//go:build unix

package builtin

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// TestHardLinkOut checks what the package documentation says of a hard
// link in the workspace to a file outside it (made, say, by an unconfined
// command): the file tools cannot tell it from an ordinary file, so they
// read through it, but every write replaces the link with a new file and
// a delete removes only the link, so the file outside never changes.
func TestHardLinkOut(t *testing.T) {
	writes := []struct {
		name, tool string
		args       any
	}{
		{"write_file", WriteFile, writeFileIn{Path: "hard.txt", Content: "PWNED\n"}},
		{"edit_file", EditFile, editFileIn{Path: "hard.txt", Edits: []edit{{OldString: "SECRET", NewString: "PWNED"}}}},
		{"unified diff", ApplyPatch, applyPatchIn{Patch: "--- a/hard.txt\n+++ b/hard.txt\n@@ -1 +1 @@\n-SECRET\n+PWNED\n"}},
		{"Update File", ApplyPatch, applyPatchIn{Patch: "*** Begin Patch\n*** Update File: hard.txt\n@@\n-SECRET\n+PWNED\n*** End Patch"}},
		{"Delete File", ApplyPatch, applyPatchIn{Patch: "*** Begin Patch\n*** Delete File: hard.txt\n*** End Patch"}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			parent := t.TempDir()
			writeTree(t, parent, map[string]string{"outside/secret.txt": "SECRET\n", "ws/ok.txt": "ok\n"})
			secret := filepath.Join(parent, "outside", "secret.txt")
			if err := os.Link(secret, filepath.Join(parent, "ws", "hard.txt")); err != nil {
				t.Skipf("no hard links here: %v", err)
			}
			src, err := Workspace(filepath.Join(parent, "ws"), nil)
			require.NoError(t, err)
			defer src.Close()

			r := call(t, src, ReadFile, readFileIn{Path: "hard.txt"})
			assert.Equal(t, "SECRET\n", r.Text(), "reads go through the link: the documented limit")

			r = call(t, src, w.tool, w.args)
			require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
			assert.Equal(t, "SECRET\n", readFile(t, secret), "the file outside is unchanged")
			fi, err := os.Stat(secret)
			require.NoError(t, err)
			st, ok := fi.Sys().(*syscall.Stat_t)
			require.True(t, ok)
			assert.EqualValues(t, 1, st.Nlink, "the link in the workspace is gone")
		})
	}
}
