package builtin

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzPaths runs the file tools on arbitrary paths in a workspace full of
// links that lead out, and checks that nothing outside it was touched:
// the folder beside it keeps its content, nothing appears next to them,
// and no absolute path the input names is created.
//
//	go test -fuzz FuzzPaths ./builtin
func FuzzPaths(f *testing.F) {
	for _, p := range []string{"ok.txt", "../outside/secret.txt", "/etc/passwd", "link_dir_out/new.txt", "chain1/x",
		"sub/up/outside/secret.txt", "loop1", "a\x00b", "sub/../../outside", "link_file_out"} {
		for op := range uint8(7) {
			f.Add(p, op)
		}
	}
	tools := []string{ReadFile, WriteFile, EditFile, ListDirectory, GrepSearch, FileSearch, ApplyPatch}
	f.Fuzz(func(t *testing.T, path string, op uint8) {
		parent, src := escapeLayout(t)
		outside := filepath.Join(parent, "outside")
		before := snapshot(t, outside)
		var abs string
		if filepath.IsAbs(path) && !strings.ContainsRune(path, 0) {
			abs = filepath.Clean(path)
			if _, err := os.Lstat(abs); !errors.Is(err, fs.ErrNotExist) {
				abs = "" // it exists already: only its absence can be checked
			}
		}
		tool := tools[int(op)%len(tools)]
		r := call(t, src, tool, attackArgs(tool, path))
		if tool == ReadFile || tool == GrepSearch || tool == EditFile {
			assert.NotContains(t, r.Text(), "SECRET\n")
		}
		assert.Equal(t, before, snapshot(t, outside), "the folder beside the workspace changed")
		entries, err := os.ReadDir(parent)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Equal(t, []string{"outside", "ws"}, names, "something appeared beside the workspace")
		if abs != "" && !strings.HasPrefix(abs, filepath.Join(parent, "ws")+string(filepath.Separator)) {
			_, err := os.Lstat(abs)
			assert.ErrorIs(t, err, fs.ErrNotExist, "%s was created outside the workspace", abs)
		}
	})
}
