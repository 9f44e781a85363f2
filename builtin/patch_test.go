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

func TestApplyPatch(t *testing.T) {
	base := map[string]string{
		"a.txt":     "one\ntwo\nthree\nfour\nfive\n",
		"b.txt":     "alpha\nbeta\ngamma\n",
		"gone.txt":  "bye\n",
		"src/m.go":  "package m\n\nfunc F() int { return 1 }\n",
		"shift.txt": "x\ny\nz\none\ntwo\nthree\n",
	}
	tests := []struct {
		name     string
		patch    string
		wantKind toolloop.ErrorKind
		want     map[string]string // files afterwards; "" means deleted
		contains []string
	}{
		{
			name: "git diff, two files",
			patch: `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -2,3 +2,3 @@
 two
-three
+THREE
 four
diff --git a/b.txt b/b.txt
--- a/b.txt
+++ b/b.txt
@@ -1,3 +1,4 @@
 alpha
+alpha2
 beta
 gamma
`,
			want: map[string]string{"a.txt": "one\ntwo\nTHREE\nfour\nfive\n", "b.txt": "alpha\nalpha2\nbeta\ngamma\n"},
		},
		{
			name: "traditional diff with prefixes",
			patch: `--- a/src/m.go
+++ b/src/m.go
@@ -3 +3 @@
-func F() int { return 1 }
+func F() int { return 2 }
`,
			want: map[string]string{"src/m.go": "package m\n\nfunc F() int { return 2 }\n"},
		},
		{
			name: "traditional diff without prefixes",
			patch: `--- b.txt
+++ b.txt
@@ -3,1 +3,1 @@
-gamma
+delta
`,
			want: map[string]string{"b.txt": "alpha\nbeta\ndelta\n"},
		},
		{
			name: "create and delete",
			patch: `--- /dev/null
+++ b/new/dir/c.txt
@@ -0,0 +1,2 @@
+hello
+world
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
`,
			want: map[string]string{"new/dir/c.txt": "hello\nworld\n", "gone.txt": ""},
		},
		{
			name: "git rename with change",
			patch: `diff --git a/b.txt b/c.txt
similarity index 80%
rename from b.txt
rename to c.txt
--- a/b.txt
+++ b/c.txt
@@ -1,3 +1,3 @@
 alpha
-beta
+BETA
 gamma
`,
			want: map[string]string{"b.txt": "", "c.txt": "alpha\nBETA\ngamma\n"},
		},
		{
			name: "hunk at the wrong line is moved",
			patch: `--- a/shift.txt
+++ b/shift.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
`,
			want:     map[string]string{"shift.txt": "x\ny\nz\none\nTWO\nthree\n"},
			contains: []string{"hunk 1 applied at line 4 (its header said 1)"},
		},
		{
			name: "all or none: second file fails",
			patch: `--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
-one
+ONE
 two
--- a/b.txt
+++ b/b.txt
@@ -1,2 +1,2 @@
 alpha
-BETA
+beta2
`,
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"b.txt", "hunk 1 of 1 (@@ -1,2 +1,2 @@) does not apply", `at line 2 the file has "beta" where the hunk expects "BETA"`, "nothing was changed"},
		},
		{
			name: "second hunk fails",
			patch: `--- a/a.txt
+++ b/a.txt
@@ -1,1 +1,1 @@
-one
+ONE
@@ -4,1 +4,1 @@
-FOUR
+4
`,
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"hunk 2 of 2"},
		},
		{
			name:     "create over existing",
			patch:    "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"already exists"},
		},
		{
			name:     "missing file",
			patch:    "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-x\n+y\n",
			wantKind: toolloop.KindInvalidArgs,
		},
		{
			name:     "bad counts",
			patch:    "--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n-one\n+ONE\n",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"could not be parsed"},
		},
		{
			name:     "not a patch",
			patch:    "hello\n",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"no file changes"},
		},
		{
			name:     "escape",
			patch:    "--- /dev/null\n+++ ../evil.txt\n@@ -0,0 +1 @@\n+x\n",
			wantKind: toolloop.KindDenied,
		},
		{
			name: "binary",
			patch: `diff --git a/x.bin b/x.bin
new file mode 100644
index 0000000..1111111
GIT binary patch
literal 1
IcmZo*000310RR91

literal 0
HcmV?d00001

`,
			wantKind: toolloop.KindInvalidArgs,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, dir := newTestWorkspace(t, base, nil)
			before := snapshot(t, filepath.Dir(dir))
			r := call(t, src, ApplyPatch, applyPatchIn{Patch: tt.patch})
			require.Equal(t, tt.wantKind, kindOf(r), r.Text())
			for _, c := range tt.contains {
				assert.Contains(t, r.Text(), c)
			}
			if tt.wantKind != "" {
				assert.Equal(t, before, snapshot(t, filepath.Dir(dir)), "a failed patch changes nothing")
				return
			}
			for name, want := range tt.want {
				p := filepath.Join(dir, name)
				if want == "" {
					assert.NoFileExists(t, p)
					continue
				}
				assert.Equal(t, want, readFile(t, p), name)
			}
			tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
			assert.Empty(t, tmps)
		})
	}
}

func TestApplyPatchRollsBackCreatedFolders(t *testing.T) {
	src, dir := newTestWorkspace(t, map[string]string{"a.txt": "a\n"}, nil)
	patch := "--- /dev/null\n+++ b/x/y/new.txt\n@@ -0,0 +1 @@\n+n\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+b\n"
	r := call(t, src, ApplyPatch, applyPatchIn{Patch: patch})
	require.Equal(t, toolloop.KindInvalidArgs, kindOf(r))
	assert.NoDirExists(t, filepath.Join(dir, "x"))
}

func TestCommitRollback(t *testing.T) {
	// A rename that fails half way through undoes the renames before it.
	src, dir := newTestWorkspace(t, map[string]string{"a.txt": "old a\n", "b/": ""}, nil)
	w := src.ws
	ca, err := w.target("a.txt")
	require.NoError(t, err)
	ca.old, ca.data = []byte("old a\n"), []byte("new a\n")
	cn, err := w.target("n.txt")
	require.NoError(t, err)
	cn.data = []byte("new n\n")
	// Removing a non-empty folder fails at commit time, after a.txt and
	// n.txt are in place.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b", "keep"), nil, 0o644))
	cb := &fileChange{rel: "b", remove: true, existed: true}
	err = w.commit([]*fileChange{ca, cn, cb})
	require.Error(t, err)
	assert.Equal(t, "old a\n", readFile(t, filepath.Join(dir, "a.txt")))
	assert.NoFileExists(t, filepath.Join(dir, "n.txt"))
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".toolloop-*"))
	assert.Empty(t, leftovers)
	assert.False(t, strings.Contains(readFile(t, filepath.Join(dir, "a.txt")), "new"))
}
