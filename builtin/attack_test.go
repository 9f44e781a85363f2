package builtin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// escapeLayout makes parent/outside (with a secret) and parent/ws (the
// workspace) full of ways out, and returns parent and the source.
func escapeLayout(t testing.TB) (string, *Source) {
	t.Helper()
	parent := t.TempDir()
	outside := filepath.Join(parent, "outside")
	ws := filepath.Join(parent, "ws")
	writeTree(t, parent, map[string]string{
		"outside/secret.txt":   "SECRET\n",
		"outside/dir/deep.txt": "SECRET\n",
		"ws/ok.txt":            "fine\n",
		"ws/sub/inner.txt":     "inner\n",
	})
	links := map[string]string{
		"link_dir_out":     "../outside",
		"link_dir_out_abs": outside,
		"link_file_out":    "../outside/secret.txt",
		"chain1":           "chain2",
		"chain2":           "link_dir_out",
		"sub/up":           "../..",
		"link_root_abs":    "/",
		"loop1":            "loop2",
		"loop2":            "loop1",
		"link_in":          "ok.txt",
		"sub/link_sibling": "../ok.txt",
	}
	for name, dest := range links {
		require.NoError(t, os.Symlink(dest, filepath.Join(ws, name)))
	}
	src, err := Workspace(ws, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = src.Close() })
	return parent, src
}

// attackArgs returns the arguments that make a tool use path.
func attackArgs(tool, path string) any {
	switch tool {
	case ReadFile:
		return readFileIn{Path: path}
	case WriteFile:
		return writeFileIn{Path: path, Content: "PWNED\n"}
	case EditFile:
		return editFileIn{Path: path, Edits: []edit{{OldString: "SECRET", NewString: "PWNED"}}}
	case ListDirectory:
		return listDirectoryIn{Path: path, Depth: 3}
	case GrepSearch:
		return grepSearchIn{Pattern: "SECRET", Path: path}
	case FileSearch:
		return fileSearchIn{Pattern: "**", Path: path}
	case ApplyPatch:
		return applyPatchIn{Patch: "--- " + path + "\n+++ " + path + "\n@@ -1 +1 @@\n-SECRET\n+PWNED\n"}
	}
	panic(tool)
}

func TestAttackCorpus(t *testing.T) {
	parent, src := escapeLayout(t)
	outside := filepath.Join(parent, "outside")
	before := snapshot(t, parent)
	tools := []string{ReadFile, WriteFile, EditFile, ListDirectory, GrepSearch, FileSearch, ApplyPatch}
	corpus := []struct {
		name string
		path string
		kind toolloop.ErrorKind
	}{
		{"parent", "../outside/secret.txt", toolloop.KindDenied},
		{"parent new file", "../outside/new.txt", toolloop.KindDenied},
		{"far parent", "../../../../../../etc/passwd", toolloop.KindDenied},
		{"absolute", "/etc/passwd", toolloop.KindDenied},
		{"absolute outside", filepath.Join(outside, "secret.txt"), toolloop.KindDenied},
		{"absolute sibling prefix", filepath.Join(parent, "ws-evil", "x"), toolloop.KindDenied},
		{"dot dot inside out", "sub/../../outside/secret.txt", toolloop.KindDenied},
		{"dot slash", "./../outside", toolloop.KindDenied},
		{"dir link out", "link_dir_out/secret.txt", toolloop.KindDenied},
		{"dir link out, new file", "link_dir_out/new.txt", toolloop.KindDenied},
		{"dir link out, deep", "link_dir_out/dir/deep.txt", toolloop.KindDenied},
		{"dir link itself", "link_dir_out", toolloop.KindDenied},
		{"absolute dir link", "link_dir_out_abs/secret.txt", toolloop.KindDenied},
		{"file link out", "link_file_out", toolloop.KindDenied},
		{"chained links", "chain1/secret.txt", toolloop.KindDenied},
		{"chained links, new file", "chain1/new.txt", toolloop.KindDenied},
		{"link up from a subfolder", "sub/up/outside/secret.txt", toolloop.KindDenied},
		{"link to root", "link_root_abs/etc/passwd", toolloop.KindDenied},
		{"link loop", "loop1/x", toolloop.KindInvalidArgs},
		{"nul byte", "ok.txt\x00../../outside/secret.txt", toolloop.KindInvalidArgs},
		{"long name", strings.Repeat("a", 300), toolloop.KindInvalidArgs},
		{"long path", strings.Repeat("a/", 2100), toolloop.KindInvalidArgs},
	}
	for _, c := range corpus {
		for _, tool := range tools {
			t.Run(c.name+"/"+tool, func(t *testing.T) {
				r := call(t, src, tool, attackArgs(tool, c.path))
				require.True(t, r.IsError(), "%s succeeded: %s", c.path, r.Text())
				assert.NotContains(t, r.Text(), "SECRET")
				want := []toolloop.ErrorKind{c.kind}
				if tool == ApplyPatch {
					// The patch parser may refuse a mangled header first.
					want = []toolloop.ErrorKind{toolloop.KindDenied, toolloop.KindInvalidArgs}
				}
				assert.Contains(t, want, kindOf(r), r.Text())
			})
		}
	}
	assert.Equal(t, before, snapshot(t, parent), "nothing outside the workspace, or in it, changed")
}

func TestLinksInsideWork(t *testing.T) {
	_, src := escapeLayout(t)
	r := call(t, src, ReadFile, readFileIn{Path: "link_in"})
	assert.Equal(t, "fine\n", r.Text())
	r = call(t, src, ReadFile, readFileIn{Path: "sub/link_sibling"})
	assert.Equal(t, "fine\n", r.Text())
	r = call(t, src, ListDirectory, listDirectoryIn{Depth: 5})
	require.False(t, r.IsError(), r.Text())
	assert.Contains(t, r.Text(), "link_dir_out -> ../outside\n")
	assert.NotContains(t, r.Text(), "deep.txt", "listing does not follow links")
	r = call(t, src, GrepSearch, grepSearchIn{Pattern: "SECRET|fine"})
	assert.Equal(t, "ok.txt:1: fine\n[1 matching line in 1 file]", r.Text(), "walks do not follow links")
}

// TestSwappedSymlinkRace swaps a folder of the workspace for a link to the
// outside again and again while tools write and read through it: os.Root
// resolves every path component by handle, so no write lands outside.
func TestSwappedSymlinkRace(t *testing.T) {
	parent := t.TempDir()
	outside := filepath.Join(parent, "outside")
	ws := filepath.Join(parent, "ws")
	writeTree(t, parent, map[string]string{"outside/secret.txt": "SECRET\n", "ws/sub/f.txt": "inside\n"})
	src, err := Workspace(ws, nil)
	require.NoError(t, err)
	defer src.Close()
	sub := filepath.Join(ws, "sub")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var swaps atomic.Int64
	wg.Go(func() {
		for ctx.Err() == nil {
			_ = os.RemoveAll(sub)
			_ = os.Symlink(outside, sub)
			_ = os.Remove(sub)
			_ = os.MkdirAll(sub, 0o755)
			_ = os.WriteFile(filepath.Join(sub, "f.txt"), []byte("inside\n"), 0o644)
			swaps.Add(1)
		}
	})
	for i := range 300 {
		r := call(t, src, WriteFile, writeFileIn{Path: "sub/new.txt", Content: "PWNED\n"})
		if r.IsError() {
			assert.Contains(t, []toolloop.ErrorKind{toolloop.KindDenied, toolloop.KindInvalidArgs, toolloop.KindExecutionFailed}, kindOf(r))
		}
		r = call(t, src, ReadFile, readFileIn{Path: "sub/secret.txt"})
		assert.NotContains(t, r.Text(), "SECRET", "read %d", i)
		r = call(t, src, EditFile, editFileIn{Path: "sub/secret.txt", Edits: []edit{{OldString: "SECRET", NewString: "PWNED"}}})
		assert.True(t, r.IsError())
		_ = call(t, src, GrepSearch, grepSearchIn{Pattern: "SECRET", Path: "sub"})
	}
	cancel()
	wg.Wait()
	t.Logf("%d swaps", swaps.Load())
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"secret.txt"}, names)
	assert.Equal(t, "SECRET\n", readFile(t, filepath.Join(outside, "secret.txt")))
	assert.False(t, slices.Contains(names, "new.txt"))
}
