//go:build unix

package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// hiddenTree is a workspace with a program's state folder at the root and
// deeper down, and links that lead into it under other names.
func hiddenTree(t *testing.T, opts *Options) (*Source, string) {
	t.Helper()
	src, dir := newTestWorkspace(t, map[string]string{
		"a.txt":                  "secret-word in the open\n",
		".toolloop/runs/r.jsonl": "secret-word in a run log\n",
		"sub/b.txt":              "b\n",
		"sub/.toolloop/x.jsonl":  "secret-word deeper down\n",
	}, opts)
	for link, dest := range map[string]string{
		"logs":     ".toolloop",                                    // a folder link
		"log.txt":  ".toolloop/runs/r.jsonl",                       // a file link
		"chain":    "logs",                                         // a link to a link
		"sub/up":   "..",                                           // a way back up
		"abs-logs": filepath.Join(dir, ".toolloop"),                // an absolute link inside
		"dangling": filepath.Join(".toolloop", "runs", "new.json"), // to a file not there yet
	} {
		require.NoError(t, os.Symlink(dest, filepath.Join(dir, link)))
	}
	return src, dir
}

// TestHiddenNames: with Options.Hidden, the listing, search and find
// tools never show the hidden folder, and every tool that takes a path
// refuses one in it, whatever the path's spelling, symbolic links
// included; nothing in it is read or changed.
func TestHiddenNames(t *testing.T) {
	src, dir := hiddenTree(t, &Options{Hidden: []string{".toolloop"}})
	before := snapshot(t, filepath.Join(dir, ".toolloop"))

	t.Run("listing", func(t *testing.T) {
		r := call(t, src, ListDirectory, listDirectoryIn{Depth: 5})
		require.Empty(t, kindOf(r), r.Text())
		assert.Contains(t, r.Text(), "a.txt")
		assert.Contains(t, r.Text(), "sub/b.txt")
		for _, line := range strings.Split(r.Text(), "\n") {
			assert.NotRegexp(t, `^(sub/)?\.toolloop`, line, "links are shown, with their targets, but not followed")
		}
		assert.NotContains(t, r.Text(), "left out", "hidden names are not counted as left out")
	})
	t.Run("find", func(t *testing.T) {
		for _, pattern := range []string{"*.jsonl", "**/runs", ".toolloop", "*"} {
			r := call(t, src, FileSearch, fileSearchIn{Pattern: pattern})
			require.Empty(t, kindOf(r), r.Text())
			assert.NotContains(t, r.Text(), ".toolloop/", pattern)
			assert.NotContains(t, r.Text(), "x.jsonl", pattern)
		}
	})
	t.Run("grep", func(t *testing.T) {
		r := call(t, src, GrepSearch, grepSearchIn{Pattern: "secret-word"})
		require.Empty(t, kindOf(r), r.Text())
		assert.Contains(t, r.Text(), "a.txt")
		assert.NotContains(t, r.Text(), "run log")
		assert.NotContains(t, r.Text(), "deeper down")
	})

	refused := []struct {
		name, tool string
		args       any
	}{
		{"read", ReadFile, readFileIn{Path: ".toolloop/runs/r.jsonl"}},
		{"read deeper", ReadFile, readFileIn{Path: "sub/.toolloop/x.jsonl"}},
		{"read other case", ReadFile, readFileIn{Path: ".TOOLLOOP/runs/r.jsonl"}},
		{"read roundabout", ReadFile, readFileIn{Path: "./sub/../.toolloop/./runs/r.jsonl"}},
		{"read absolute", ReadFile, readFileIn{Path: filepath.Join(dir, ".toolloop", "runs", "r.jsonl")}},
		{"read quoted", ReadFile, readFileIn{Path: `".toolloop/runs/r.jsonl"`}},
		{"read through a folder link", ReadFile, readFileIn{Path: "logs/runs/r.jsonl"}},
		{"read through a file link", ReadFile, readFileIn{Path: "log.txt"}},
		{"read through a chain of links", ReadFile, readFileIn{Path: "chain/runs/r.jsonl"}},
		{"read through a link up", ReadFile, readFileIn{Path: "sub/up/logs/runs/r.jsonl"}},
		{"read through an absolute link", ReadFile, readFileIn{Path: "abs-logs/runs/r.jsonl"}},
		{"list", ListDirectory, listDirectoryIn{Path: ".toolloop"}},
		{"list through a link", ListDirectory, listDirectoryIn{Path: "logs"}},
		{"find in", FileSearch, fileSearchIn{Pattern: "*", Path: ".toolloop"}},
		{"find by path", FileSearch, fileSearchIn{Pattern: ".toolloop/runs/*"}},
		{"grep in", GrepSearch, grepSearchIn{Pattern: "secret", Path: ".toolloop"}},
		{"grep a file", GrepSearch, grepSearchIn{Pattern: "secret", Path: "log.txt"}},
		{"write", WriteFile, writeFileIn{Path: ".toolloop/runs/forged.jsonl", Content: "{}\n"}},
		{"overwrite", WriteFile, writeFileIn{Path: ".toolloop/runs/r.jsonl", Content: "{}\n"}},
		{"write through a link", WriteFile, writeFileIn{Path: "logs/runs/forged.jsonl", Content: "{}\n"}},
		{"write through a dangling link", WriteFile, writeFileIn{Path: "dangling", Content: "{}\n"}},
		{"create the folder", WriteFile, writeFileIn{Path: "sub/deeper/.toolloop", Content: "x"}},
		{"edit", EditFile, editFileIn{Path: ".toolloop/runs/r.jsonl", Edits: []edit{{OldString: "secret", NewString: "x"}}}},
		{"patch add", ApplyPatch, applyPatchIn{Patch: "*** Begin Patch\n*** Add File: .toolloop/runs/forged.jsonl\n+{}\n*** End Patch"}},
		{"patch move into", ApplyPatch, applyPatchIn{Patch: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: logs/runs/a.txt\n@@\n-secret-word in the open\n+moved\n*** End Patch"}},
		{"unified diff", ApplyPatch, applyPatchIn{Patch: "--- a/.toolloop/runs/r.jsonl\n+++ b/.toolloop/runs/r.jsonl\n@@ -1 +1 @@\n-secret-word in a run log\n+{}\n"}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, src, tt.tool, tt.args)
			assert.Equal(t, toolloop.KindDenied, kindOf(r), r.Text())
			assert.NotContains(t, r.Text(), "secret-word")
		})
	}
	assert.Equal(t, before, snapshot(t, filepath.Join(dir, ".toolloop")), "nothing in the hidden folder changed")
	assert.Equal(t, "secret-word in the open\n", readFile(t, filepath.Join(dir, "a.txt")), "a refused patch changes nothing")
	assert.NoDirExists(t, filepath.Join(dir, "sub", "deeper"))

	// Names that merely start like a hidden one are not hidden.
	r := call(t, src, WriteFile, writeFileIn{Path: ".toolloop-notes.txt", Content: "ok\n"})
	assert.Empty(t, kindOf(r), r.Text())
	r = call(t, src, ReadFile, readFileIn{Path: "sub/b.txt"})
	assert.Equal(t, "b\n", r.Text())
}

// TestHiddenNamesOff: without Options.Hidden nothing is hidden.
func TestHiddenNamesOff(t *testing.T) {
	src, _ := hiddenTree(t, nil)
	r := call(t, src, ListDirectory, listDirectoryIn{Depth: 3})
	assert.Contains(t, r.Text(), ".toolloop/runs/r.jsonl")
	r = call(t, src, ReadFile, readFileIn{Path: "logs/runs/r.jsonl"})
	assert.Equal(t, "secret-word in a run log\n", r.Text())
}

func TestHiddenNamesBad(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", "/abs"} {
		_, err := Workspace(t.TempDir(), &Options{Hidden: []string{name}})
		assert.Error(t, err, "%q", name)
	}
}

// TestHiddenNamesCheckpoints: checkpoints neither record a hidden folder
// nor rewind it, so a rewind leaves a program's logs as they are.
func TestHiddenNamesCheckpoints(t *testing.T) {
	src, dir := newTestWorkspace(t, map[string]string{"a.txt": "one\n", ".toolloop/run.jsonl": "line 1\n"},
		&Options{Hidden: []string{".toolloop"}, Checkpoints: &CheckpointOptions{Dir: t.TempDir()}})
	r := run(t, src, "c1", 1, WriteFile, writeFileIn{Path: "a.txt", Content: "two\n"})
	require.Empty(t, kindOf(r), r.Text())
	// The program logs on while the run goes on.
	log := filepath.Join(dir, ".toolloop", "run.jsonl")
	require.NoError(t, os.WriteFile(log, []byte("line 1\nline 2\n"), 0o600))

	cps := src.Checkpoints().List()
	require.Len(t, cps, 1)
	for _, c := range cps[0].Changes {
		assert.NotContains(t, c.Path, ".toolloop")
	}
	_, err := src.Checkpoints().Rewind(t.Context(), "c1")
	require.NoError(t, err)
	assert.Equal(t, "one\n", readFile(t, filepath.Join(dir, "a.txt")))
	assert.Equal(t, "line 1\nline 2\n", readFile(t, log), "the rewind left the log alone")
}
