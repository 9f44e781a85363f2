//go:build unix

package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// ckWorkspace makes a workspace with checkpoints on, its store in a
// temporary directory of the test.
func ckWorkspace(t *testing.T, files map[string]string, co *CheckpointOptions) (*Source, string) {
	t.Helper()
	if co == nil {
		co = &CheckpointOptions{}
	}
	if co.Dir == "" {
		co.Dir = t.TempDir()
	}
	return newTestWorkspace(t, files, &Options{Checkpoints: co})
}

// run calls a tool of src as the loop would, with a call ID and a turn.
func run(t *testing.T, src *Source, id string, turn int, name string, args any) *toolloop.ToolResult {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	tl := src.Tool(name)
	require.NotNil(t, tl, name)
	res, err := tl.Run(context.Background(), &toolloop.Call{ID: id, Name: name, Arguments: raw, RunID: "run-1", Turn: turn})
	if err != nil {
		return toolloop.ErrorResult(err)
	}
	return res
}

// treeState lists every path under dir, .git included, with its type,
// permission bits and content or link target, for byte-for-byte
// comparisons of whole trees.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			out[rel] = "link -> " + dest
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %v", fi.Mode())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v %q", fi.Mode(), b)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// without drops the paths under the given prefixes from a tree state.
func without(s map[string]string, prefixes ...string) map[string]string {
	out := map[string]string{}
	for k, v := range s {
		keep := true
		for _, p := range prefixes {
			if k == p || strings.HasPrefix(k, p+"/") {
				keep = false
			}
		}
		if keep {
			out[k] = v
		}
	}
	return out
}

func requireOK(t *testing.T, r *toolloop.ToolResult) {
	t.Helper()
	require.Nil(t, r.Error, "%s", r.Text())
}

// TestCheckpointSession records a session of writes, an edit, a patch and
// shell commands, then rewinds to each call in turn, in no particular
// order, and compares the whole tree with the state recorded before that
// call, byte for byte and mode for mode. Ignored files and the user's
// .git are never touched.
func TestCheckpointSession(t *testing.T) {
	src, dir := ckWorkspace(t, map[string]string{
		"a.txt":          "alpha\nbeta\ngamma\n",
		"src/main.go":    "package main\n",
		"keep/":          "",
		".gitignore":     "*.log\nbuild/\n",
		"x.log":          "ignored\n",
		"build/out.bin":  "ignored build output\n",
		".git/HEAD":      "ref: refs/heads/main\n",
		".git/config":    "[core]\n\tbare = false\n",
		".git/info/note": "user data\n",
		"sub/.git":       "gitdir: ../.git/worktrees/sub\n",
	}, nil)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	require.NoError(t, os.Symlink("a.txt", filepath.Join(dir, "link")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("mode 600\n"), 0o600))
	gitBefore := treeState(t, filepath.Join(dir, ".git"))

	patch := "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n" +
		"--- /dev/null\n+++ b/src/util.go\n@@ -0,0 +1,2 @@\n+package main\n+// util\n" +
		"--- a/run.sh\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-#!/bin/sh\n-echo hi\n"
	shell := "mkdir -p made/empty && printf 'z\\000z' > z.bin && rm -r src && chmod 640 secret.txt && chmod 700 keep" +
		" && ln -sf b.txt link && echo more >> x.log && echo new > y.log && chmod +x a.txt"
	steps := []struct {
		id, tool string
		args     any
	}{
		{"w1", WriteFile, writeFileIn{Path: "new/b.txt", Content: "bee\n"}},
		{"e1", EditFile, editFileIn{Path: "a.txt", Edits: []edit{{OldString: "alpha", NewString: "ALPHA"}}}},
		{"p1", ApplyPatch, applyPatchIn{Patch: strings.Replace(patch, " alpha\n", " ALPHA\n", 1)}},
		{"s1", ExecShell, execShellIn{Command: shell}},
		{"s2", ExecShell, execShellIn{Command: "rm -r made && mkdir made && echo back > made/f && rm new/b.txt && echo x >> sub/.git"}},
		{"w2", WriteFile, writeFileIn{Path: "a.txt", Content: "final\n"}},
	}
	before := map[string]map[string]string{}
	for i, s := range steps {
		before[s.id] = treeState(t, dir)
		requireOK(t, run(t, src, s.id, i+1, s.tool, s.args))
	}
	final := treeState(t, dir)
	require.Equal(t, "file -rwxr-xr-x \"final\\n\"", final["a.txt"], "the chmod +x survived the write")
	require.Equal(t, "file -rw-r----- \"mode 600\\n\"", final["secret.txt"])

	cps := src.Checkpoints().List()
	require.Len(t, cps, len(steps))
	for i, cp := range cps {
		assert.Equal(t, steps[i].id, cp.CallID)
		assert.Equal(t, steps[i].tool, cp.Tool)
		assert.Equal(t, "run-1", cp.RunID)
		assert.Equal(t, i+1, cp.Turn)
		assert.True(t, cp.Complete)
	}
	assert.Equal(t, []Change{
		{Path: "a.txt", Kind: ChangeModified},
		{Path: "keep/", Kind: ChangeModified},
		{Path: "link", Kind: ChangeModified},
		{Path: "made/", Kind: ChangeAdded},
		{Path: "made/empty/", Kind: ChangeAdded},
		{Path: "secret.txt", Kind: ChangeModified},
		{Path: "src/", Kind: ChangeDeleted},
		{Path: "src/main.go", Kind: ChangeDeleted},
		{Path: "src/util.go", Kind: ChangeDeleted},
		{Path: "z.bin", Kind: ChangeAdded},
	}, cps[3].Changes, "the shell's creations, deletions and chmods, and nothing ignored")

	// Rewind to each call, in an order that goes back and forth.
	ignored := []string{".git", "sub/.git", "x.log", "y.log", "build"}
	var first, last Checkpoint
	for _, id := range []string{"s1", "w1", "w2", "e1", "s2", "p1"} {
		cp, err := src.Checkpoints().Rewind(t.Context(), id)
		require.NoError(t, err, id)
		if first.CallID == "" {
			first = cp
		}
		assert.Equal(t, without(before[id], ignored...), without(treeState(t, dir), ignored...), "rewound to before %s", id)
		assert.Equal(t, "ignored\nmore\n", readFile(t, filepath.Join(dir, "x.log")), "an ignored file is left alone")
		assert.Equal(t, "new\n", readFile(t, filepath.Join(dir, "y.log")), "an ignored file is left alone")
		assert.Equal(t, "gitdir: ../.git/worktrees/sub\nx\n", readFile(t, filepath.Join(dir, "sub/.git")), "a .git file is left alone")
		last = cp
	}
	// Undo the last rewind: back to the state before p1 was rewound to,
	// which was the state before s2.
	_, err := src.Checkpoints().Rewind(t.Context(), last.CallID)
	require.NoError(t, err)
	assert.Equal(t, without(before["s2"], ignored...), without(treeState(t, dir), ignored...))

	// And forward again to where the session ended, the state before the
	// first rewind.
	_, err = src.Checkpoints().Rewind(t.Context(), first.CallID)
	require.NoError(t, err)
	assert.Equal(t, without(final, ignored...), without(treeState(t, dir), ignored...))

	assert.Equal(t, gitBefore, treeState(t, filepath.Join(dir, ".git")), "the user's .git is untouched")
	assert.Equal(t, "ignored build output\n", readFile(t, filepath.Join(dir, "build/out.bin")))
	st, err := filepath.Rel(dir, src.Checkpoints().Dir())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(st, ".."), "the store is outside the workspace")
}

func TestCheckpointDiff(t *testing.T) {
	src, _ := ckWorkspace(t, map[string]string{"a.txt": "one\ntwo\n"}, nil)
	requireOK(t, run(t, src, "e1", 1, EditFile, editFileIn{Path: "a.txt", Edits: []edit{{OldString: "two", NewString: "TWO"}}}))
	r := run(t, src, "s1", 2, ExecShell, execShellIn{Command: "mkdir d && chmod 600 a.txt && printf 'x' > d/new.txt"})
	requireOK(t, r)

	diff, err := src.Checkpoints().Diff("e1")
	require.NoError(t, err)
	assert.Contains(t, diff, "diff --git a/a.txt b/a.txt\n")
	assert.Contains(t, diff, "-two\n+TWO\n")

	diff, err = src.Checkpoints().Diff("s1")
	require.NoError(t, err)
	assert.Contains(t, diff, "# added directory d/\n")
	assert.Contains(t, diff, "# permissions of a.txt: 0644 -> 0600\n")
	assert.Contains(t, diff, "+++ b/d/new.txt\n")

	sum, ok := r.Meta.Extra["checkpoint"].(map[string]any)
	require.True(t, ok, "the result carries a summary for events")
	assert.Equal(t, "s1", sum["call_id"])
	assert.Equal(t, 2, sum["added"])
	assert.Equal(t, 1, sum["modified"])
	assert.Equal(t, []string{"m a.txt", "a d/", "a d/new.txt"}, sum["paths"])
	assert.Equal(t, diff, sum["diff"])
	assert.Equal(t, 0, r.Meta.Extra["exit_code"], "the tool's own facts stay")

	_, err = src.Checkpoints().Diff("nope")
	assert.ErrorIs(t, err, ErrNoCheckpoint)
	_, err = src.Checkpoints().Rewind(t.Context(), "nope")
	assert.ErrorIs(t, err, ErrNoCheckpoint)
}

func TestCheckpointDiffBytes(t *testing.T) {
	long := strings.Repeat("a line of text\n", 200)
	for _, tt := range []struct {
		name     string
		limit    int
		wantDiff bool
		wantCut  bool
	}{
		{name: "cut", limit: 100, wantDiff: true, wantCut: true},
		{name: "whole", limit: 1 << 20, wantDiff: true},
		{name: "off", limit: -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, _ := ckWorkspace(t, nil, &CheckpointOptions{DiffBytes: tt.limit})
			r := run(t, src, "w1", 1, WriteFile, writeFileIn{Path: "f.txt", Content: long})
			requireOK(t, r)
			sum := r.Meta.Extra["checkpoint"].(map[string]any)
			d, ok := sum["diff"].(string)
			require.Equal(t, tt.wantDiff, ok)
			assert.Equal(t, tt.wantCut, sum["diff_truncated"] == true)
			if tt.wantCut {
				assert.LessOrEqual(t, len(d), tt.limit)
				assert.True(t, strings.HasSuffix(d, "\n"))
			}
		})
	}
}

func TestCheckpointRewindUndo(t *testing.T) {
	src, dir := ckWorkspace(t, map[string]string{"a.txt": "v1\n"}, nil)
	requireOK(t, run(t, src, "w1", 1, WriteFile, writeFileIn{Path: "a.txt", Content: "v2\n"}))
	requireOK(t, run(t, src, "w2", 2, WriteFile, writeFileIn{Path: "b.txt", Content: "b\n"}))
	after := treeState(t, dir)

	r := run(t, src, "r1", 3, Rewind, rewindIn{CallID: "w1"})
	requireOK(t, r)
	assert.Contains(t, r.Text(), "rewound to before call w1 (write_file, turn 1): 2 paths changed\n~ a.txt\n- b.txt\n")
	assert.Contains(t, r.Text(), "rewind to call r1")
	assert.Equal(t, "w1", r.Meta.Extra["rewound_to"])
	assert.Equal(t, "v1\n", readFile(t, filepath.Join(dir, "a.txt")))
	assert.NoFileExists(t, filepath.Join(dir, "b.txt"))

	requireOK(t, run(t, src, "r2", 4, Rewind, rewindIn{CallID: "r1"}))
	assert.Equal(t, after, treeState(t, dir), "the rewind is undone")

	bad := run(t, src, "r3", 5, Rewind, rewindIn{CallID: "zzz"})
	assert.Equal(t, toolloop.KindInvalidArgs, kindOf(bad))
	assert.Contains(t, bad.Text(), "w1 (write_file), w2 (write_file), r1 (rewind), r2 (rewind)")
	assert.Len(t, src.Checkpoints().List(), 4, "a rewind that finds no checkpoint records nothing")
}

func TestCheckpointSizeCaps(t *testing.T) {
	src, dir := ckWorkspace(t, map[string]string{
		"big.txt": strings.Repeat("b", 50),
		"a.txt":   "aaaaaa",
		"b.txt":   "bbbbbb",
	}, &CheckpointOptions{MaxFileBytes: 20, MaxTotalBytes: 10})
	r := run(t, src, "s1", 1, ExecShell, execShellIn{Command: "printf %060d 0 > big.txt && echo changed > a.txt && echo changed > b.txt"})
	requireOK(t, r)
	cps := src.Checkpoints().List()
	require.Len(t, cps, 1)
	assert.Equal(t, []Change{
		{Path: "a.txt", Kind: ChangeModified},
		{Path: "b.txt", Kind: ChangeModified, Skipped: skipTotal},
		{Path: "big.txt", Kind: ChangeModified, Skipped: skipLarge},
	}, cps[0].Changes)
	diff, err := src.Checkpoints().Diff("s1")
	require.NoError(t, err)
	assert.Contains(t, diff, "# modified big.txt: content not recorded (larger than the limit of 20 bytes a file)\n")
	assert.Contains(t, diff, "# modified b.txt: content not recorded (beyond the limit of 10 bytes a snapshot)\n")

	_, err = src.Checkpoints().Rewind(t.Context(), "s1")
	require.NoError(t, err)
	assert.Equal(t, "aaaaaa", readFile(t, filepath.Join(dir, "a.txt")))
	assert.Equal(t, "changed\n", readFile(t, filepath.Join(dir, "b.txt")), "skipped files are left alone")
	assert.Equal(t, strings.Repeat("0", 60), readFile(t, filepath.Join(dir, "big.txt")), "skipped files are left alone")
}

// TestCheckpointRewindStaysInside rewinds across a directory that was
// replaced by a link out of the workspace: the link goes, the directory
// comes back, and nothing is written where the link pointed.
func TestCheckpointRewindStaysInside(t *testing.T) {
	outside := t.TempDir()
	src, dir := ckWorkspace(t, map[string]string{"d/f.txt": "inside\n"}, nil)
	cmd := fmt.Sprintf("rm -r d && ln -s %s d && ln -s %s/x.txt e", outside, outside)
	requireOK(t, run(t, src, "s1", 1, ExecShell, execShellIn{Command: cmd}))
	requireOK(t, run(t, src, "s2", 2, ExecShell, execShellIn{Command: "rm e && mkdir e"}))

	_, err := src.Checkpoints().Rewind(t.Context(), "s2")
	require.NoError(t, err)
	assert.Equal(t, "link -> "+outside+"/x.txt", treeState(t, dir)["e"], "a link out is restored as a link")
	_, err = src.Checkpoints().Rewind(t.Context(), "s1")
	require.NoError(t, err)
	assert.Equal(t, "inside\n", readFile(t, filepath.Join(dir, "d/f.txt")))
	assert.Len(t, treeState(t, outside), 1, "nothing was written through the link: the outside directory is empty")
}

// TestCheckpointReadOnlyDir restores files into a directory without
// write permission, and the permission itself.
func TestCheckpointReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories anyway")
	}
	src, dir := ckWorkspace(t, map[string]string{"ro/f.txt": "one\n"}, nil)
	requireOK(t, run(t, src, "s1", 1, ExecShell, execShellIn{Command: "rm ro/f.txt && echo two > ro/g.txt && chmod 555 ro"}))
	want := treeState(t, dir)
	requireOK(t, run(t, src, "s2", 2, ExecShell, execShellIn{Command: "chmod 755 ro && rm -r ro"}))
	_, err := src.Checkpoints().Rewind(t.Context(), "s2")
	require.NoError(t, err)
	assert.Equal(t, want, treeState(t, dir))
	_, err = src.Checkpoints().Rewind(t.Context(), "s1")
	require.NoError(t, err)
	assert.Equal(t, "one\n", readFile(t, filepath.Join(dir, "ro/f.txt")))
	assert.NoFileExists(t, filepath.Join(dir, "ro/g.txt"))
}

func TestCheckpointConcurrentCalls(t *testing.T) {
	src, dir := ckWorkspace(t, map[string]string{"base.txt": "base\n"}, nil)
	start := treeState(t, dir)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			id := fmt.Sprintf("w%d", i)
			r := run(t, src, id, 1, WriteFile, writeFileIn{Path: fmt.Sprintf("f%d.txt", i), Content: id})
			assert.Nil(t, r.Error)
			_, err := src.Checkpoints().Diff(id)
			assert.NoError(t, err)
			_ = src.Checkpoints().List()
		})
	}
	wg.Wait()
	cps := src.Checkpoints().List()
	require.Len(t, cps, 8)
	for _, cp := range cps {
		assert.True(t, cp.Complete, cp.CallID)
	}
	_, err := src.Checkpoints().Rewind(t.Context(), cps[0].CallID)
	require.NoError(t, err)
	assert.Equal(t, start, treeState(t, dir), "the first call's checkpoint is the starting state")
}

// TestCheckpointPersistence opens a second source on the same store: it
// lists the first one's checkpoints, shows their diffs and rewinds to
// them.
func TestCheckpointPersistence(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "v1\n"})
	first, err := Workspace(dir, &Options{Checkpoints: &CheckpointOptions{Dir: store}})
	require.NoError(t, err)
	requireOK(t, run(t, first, "w1", 1, WriteFile, writeFileIn{Path: "a.txt", Content: "v2\n"}))
	want, err := first.Checkpoints().Diff("w1")
	require.NoError(t, err)
	require.NoError(t, first.Close())
	assert.DirExists(t, store, "a store the user named outlives the source")

	second, err := Workspace(dir, &Options{Checkpoints: &CheckpointOptions{Dir: store}})
	require.NoError(t, err)
	defer second.Close()
	cps := second.Checkpoints().List()
	require.Len(t, cps, 1)
	assert.Equal(t, "w1", cps[0].CallID)
	assert.Equal(t, []Change{{Path: "a.txt", Kind: ChangeModified}}, cps[0].Changes)
	got, err := second.Checkpoints().Diff("w1")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = second.Checkpoints().Rewind(t.Context(), "w1")
	require.NoError(t, err)
	assert.Equal(t, "v1\n", readFile(t, filepath.Join(dir, "a.txt")))
}

func TestCheckpointTempStore(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, &Options{Checkpoints: &CheckpointOptions{}})
	store := src.Checkpoints().Dir()
	assert.DirExists(t, store)
	requireOK(t, run(t, src, "w1", 1, WriteFile, writeFileIn{Path: "a.txt", Content: "a"}))
	require.NoError(t, src.Close())
	assert.NoDirExists(t, store, "Close removes a temporary store")
	_, err := src.Checkpoints().Rewind(t.Context(), "w1")
	assert.ErrorIs(t, err, fs.ErrClosed)
}

func TestCheckpointOptionsRefused(t *testing.T) {
	dir := t.TempDir()
	_, err := Workspace(dir, &Options{Checkpoints: &CheckpointOptions{Dir: filepath.Join(dir, ".store")}})
	assert.Error(t, err, "a store inside the workspace")
	_, err = Workspace(dir, &Options{Tools: []string{Rewind}})
	assert.Error(t, err, "rewind without checkpoints")
	notRepo := t.TempDir()
	writeTree(t, notRepo, map[string]string{"precious.txt": "x"})
	_, err = Workspace(dir, &Options{Checkpoints: &CheckpointOptions{Dir: notRepo}})
	assert.Error(t, err, "a directory with other things in it")

	src, err := Workspace(dir, &Options{Tools: []string{ReadFile, WriteFile}, Checkpoints: &CheckpointOptions{Dir: t.TempDir()}})
	require.NoError(t, err)
	defer src.Close()
	assert.Nil(t, src.Tool(Rewind), "rewind is offered only when the tools are not chosen, or chosen")
	off, err := Workspace(dir, nil)
	require.NoError(t, err)
	defer off.Close()
	assert.Nil(t, off.Checkpoints())
	assert.Nil(t, off.Tool(Rewind))
}

// TestCheckpointStoreFailure: when the state before a call cannot be
// recorded, the call is not made.
func TestCheckpointStoreFailure(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories anyway")
	}
	store := t.TempDir()
	src, dir := ckWorkspace(t, map[string]string{"a.txt": "a"}, &CheckpointOptions{Dir: store})
	require.NoError(t, os.Chmod(filepath.Join(store, "objects"), 0o500))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(store, "objects"), 0o755) })
	r := run(t, src, "w1", 1, WriteFile, writeFileIn{Path: "a.txt", Content: "b"})
	assert.Equal(t, toolloop.KindExecutionFailed, kindOf(r))
	assert.Equal(t, "a", readFile(t, filepath.Join(dir, "a.txt")), "the call was not made")
}

// TestCheckpointSkipsSpecialFiles: a named pipe and a directory that
// cannot be read are neither read (a pipe would block) nor touched by a
// rewind, which restores everything else.
func TestCheckpointSkipsSpecialFiles(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads directories without read permission")
	}
	src, dir := ckWorkspace(t, map[string]string{"a.txt": "a\n", "locked/inside.txt": "secret\n"}, nil)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(dir, "locked"), 0))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "locked"), 0o755) })

	requireOK(t, run(t, src, "s1", 1, ExecShell, execShellIn{Command: "rm a.txt pipe && mkfifo pipe2"}))
	assert.Equal(t, []Change{
		{Path: "a.txt", Kind: ChangeDeleted},
		{Path: "pipe", Kind: ChangeDeleted, Skipped: skipSpecial},
		{Path: "pipe2", Kind: ChangeAdded, Skipped: skipSpecial},
	}, src.Checkpoints().List()[0].Changes)

	_, err := src.Checkpoints().Rewind(t.Context(), "s1")
	require.NoError(t, err)
	assert.Equal(t, "a\n", readFile(t, filepath.Join(dir, "a.txt")))
	assert.NoFileExists(t, filepath.Join(dir, "pipe"), "a pipe is not recreated")
	fi, err := os.Lstat(filepath.Join(dir, "pipe2"))
	require.NoError(t, err, "nor removed")
	assert.Equal(t, fs.ModeNamedPipe, fi.Mode().Type())
	fi, err = os.Lstat(filepath.Join(dir, "locked"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0), fi.Mode().Perm(), "the unreadable directory is left as it is")
}
