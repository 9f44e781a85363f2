package builtin

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// envCase is a patch, the workspace it applies to, and every file of the
// workspace afterwards.
type envCase struct {
	name   string
	origin string // where the patch comes from
	before map[string]string
	patch  string
	after  map[string]string
	notes  []string // what the result must say
}

// The patches of these cases are public examples of the *** Begin Patch
// format, or close adaptations of them (a fixture had to be written for
// each, and absolute paths made relative); origin says where each comes
// from.
var envPublicCases = []envCase{
	{
		name:   "add file",
		origin: "Codex apply-patch test scenario 001_add_file",
		before: map[string]string{},
		patch:  "*** Begin Patch\n*** Add File: bar.md\n+This is a new file\n*** End Patch\n",
		after:  map[string]string{"bar.md": "This is a new file\n"},
	},
	{
		name:   "add, delete and update",
		origin: "Codex apply-patch test scenario 002_multiple_operations",
		before: map[string]string{"delete.txt": "obsolete\n", "modify.txt": "line1\nline2\n"},
		patch:  "*** Begin Patch\n*** Add File: nested/new.txt\n+created\n*** Delete File: delete.txt\n*** Update File: modify.txt\n@@\n-line2\n+changed\n*** End Patch\n",
		after:  map[string]string{"nested/new.txt": "created\n", "modify.txt": "line1\nchanged\n"},
	},
	{
		name:   "two hunks",
		origin: "Codex apply-patch test scenario 003_multiple_chunks",
		before: map[string]string{"multi.txt": "line1\nline2\nline3\nline4\n"},
		patch:  "*** Begin Patch\n*** Update File: multi.txt\n@@\n-line2\n+changed2\n@@\n-line4\n+changed4\n*** End Patch\n",
		after:  map[string]string{"multi.txt": "line1\nchanged2\nline3\nchanged4\n"},
	},
	{
		name:   "move to a new folder",
		origin: "Codex apply-patch test scenario 004_move_to_new_directory",
		before: map[string]string{"old/name.txt": "old content\n", "old/other.txt": "unrelated file\n"},
		patch:  "*** Begin Patch\n*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new content\n*** End Patch\n",
		after:  map[string]string{"renamed/dir/name.txt": "new content\n", "old/other.txt": "unrelated file\n"},
	},
	{
		// Codex adds the final newline; this package keeps the file's
		// convention, so a file without one stays without.
		name:   "file without a final newline",
		origin: "Codex apply-patch test scenario 014_update_file_appends_trailing_newline",
		before: map[string]string{"no_newline.txt": "no newline at end"},
		patch:  "*** Begin Patch\n*** Update File: no_newline.txt\n@@\n-no newline at end\n+first line\n+second line\n*** End Patch\n",
		after:  map[string]string{"no_newline.txt": "first line\nsecond line"},
	},
	{
		name:   "hunk of added lines only appends",
		origin: "Codex apply-patch test scenario 016_pure_addition_update_chunk",
		before: map[string]string{"input.txt": "line1\nline2\n"},
		patch:  "*** Begin Patch\n*** Update File: input.txt\n@@\n+added line 1\n+added line 2\n*** End Patch\n",
		after:  map[string]string{"input.txt": "line1\nline2\nadded line 1\nadded line 2\n"},
	},
	{
		name:   "header padded with spaces",
		origin: "Codex apply-patch test scenario 017_whitespace_padded_hunk_header",
		before: map[string]string{"foo.txt": "old\n"},
		patch:  "*** Begin Patch\n  *** Update File: foo.txt\n@@\n-old\n+new\n*** End Patch\n",
		after:  map[string]string{"foo.txt": "new\n"},
	},
	{
		name:   "begin and end markers padded with spaces",
		origin: "Codex apply-patch test scenarios 018_whitespace_padded_patch_markers and 020_whitespace_padded_patch_marker_lines",
		before: map[string]string{"file.txt": "one\n"},
		patch:  " *** Begin Patch \n*** Update File: file.txt\n@@\n-one\n+two\n *** End Patch \n",
		after:  map[string]string{"file.txt": "two\n"},
	},
	{
		name:   "non-ASCII text",
		origin: "Codex apply-patch test scenario 019_unicode_simple",
		before: map[string]string{"foo.txt": "line1\nnaïve café\nline3\n"},
		patch:  "*** Begin Patch\n*** Update File: foo.txt\n@@\n line1\n-naïve café\n+naïve café ✅\n*** End Patch\n",
		after:  map[string]string{"foo.txt": "line1\nnaïve café ✅\nline3\n"},
	},
	{
		name:   "delete file",
		origin: "Codex apply-patch test scenario 020_delete_file_success",
		before: map[string]string{"obsolete.txt": "obsolete\n", "keep.txt": "keep\n"},
		patch:  "*** Begin Patch\n*** Delete File: obsolete.txt\n*** End Patch\n",
		after:  map[string]string{"keep.txt": "keep\n"},
	},
	{
		name:   "removal only",
		origin: "Codex apply-patch test scenario 021_update_file_deletion_only",
		before: map[string]string{"lines.txt": "line1\nline2\nline3\n"},
		patch:  "*** Begin Patch\n*** Update File: lines.txt\n@@\n line1\n-line2\n line3\n*** End Patch\n",
		after:  map[string]string{"lines.txt": "line1\nline3\n"},
	},
	{
		name:   "end of file marker",
		origin: "Codex apply-patch test scenario 022_update_file_end_of_file_marker",
		before: map[string]string{"tail.txt": "first\nsecond\n"},
		patch:  "*** Begin Patch\n*** Update File: tail.txt\n@@\n first\n-second\n+second updated\n*** End of File\n*** End Patch\n",
		after:  map[string]string{"tail.txt": "first\nsecond updated\n"},
	},
	{
		name:   "first hunk without @@",
		origin: "Codex apply-patch parser test (update hunk without an explicit @@ header)",
		before: map[string]string{"file2.py": "import foo\n"},
		patch:  "*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch",
		after:  map[string]string{"file2.py": "import foo\nbar\n"},
	},
	{
		name:   "stacked @@ anchors in a heredoc",
		origin: "OpenAI GPT-4.1 prompting guide (cookbook), the apply_patch example",
		before: map[string]string{"pygorithm/searching/binary_search.py": pySearch("pass", "pass")},
		patch: `apply_patch <<"EOF"
*** Begin Patch
*** Update File: pygorithm/searching/binary_search.py
@@ class BaseClass
@@     def search():
-        pass
+        raise NotImplementedError()

@@ class Subclass
@@     def search():
-        pass
+        raise NotImplementedError()

*** End Patch
EOF
`,
		after: map[string]string{"pygorithm/searching/binary_search.py": pySearch("raise NotImplementedError()", "raise NotImplementedError()")},
	},
	{
		name:   "anchors then context",
		origin: "VS Code Copilot's apply_patch tool, the example its patch-healing prompt shows (path made relative)",
		before: map[string]string{"pygorithm/searching/binary_search.py": "class BaseClass:\n    def search():\n        results = get_results()\n        results\n\nclass Subclass(BaseClass):\n    def search():\n        pass\n"},
		patch:  "*** Begin Patch\n*** Update File: pygorithm/searching/binary_search.py\n@@ class BaseClass\n@@     def search():\n         results = get_results()\n-        results\n+        return results\n@@ class Subclass\n@@     def search():\n-        pass\n+        raise NotImplementedError()\n*** End Patch",
		after:  map[string]string{"pygorithm/searching/binary_search.py": "class BaseClass:\n    def search():\n        results = get_results()\n        return results\n\nclass Subclass(BaseClass):\n    def search():\n        raise NotImplementedError()\n"},
	},
	{
		name:   "in a Markdown fence, two files and a delete",
		origin: "a public diff-format system prompt's \"minimal example (fenced, raw)\" of the V4A format",
		before: map[string]string{
			"pygorithm/searching/binary_search.py":      "class BaseClass:\n    def search(self):\n        pass\n\nclass Subclass(BaseClass):\n    def search(self):\n        pass\n",
			"pygorithm/searching/binary_search_test.py": "class TestSubclass:\n    def test_search(self):\n        pass\n",
			"pygorithm/searching/dummy.py":              "x = 1\n",
		},
		patch: "```patch\n*** Begin Patch\n*** Update File: pygorithm/searching/binary_search.py\n@@ class BaseClass\n@@     def search(self):\n-        pass\n+        raise NotImplementedError()\n@@ class Subclass\n@@     def search(self):\n-        pass\n+        raise NotImplementedError()\n*** Update File: pygorithm/searching/binary_search_test.py\n@@ class TestSubclass\n@@     def test_search(self):\n-        pass\n+        raise NotImplementedError()\n*** Delete File: pygorithm/searching/dummy.py\n*** End Patch\n```",
		after: map[string]string{
			"pygorithm/searching/binary_search.py":      "class BaseClass:\n    def search(self):\n        raise NotImplementedError()\n\nclass Subclass(BaseClass):\n    def search(self):\n        raise NotImplementedError()\n",
			"pygorithm/searching/binary_search_test.py": "class TestSubclass:\n    def test_search(self):\n        raise NotImplementedError()\n",
		},
	},
	{
		name:   "add, move with update, delete",
		origin: "Codex apply_patch tool instructions, the full example",
		before: map[string]string{"src/app.py": "def greet():\nprint(\"Hi\")\n", "obsolete.txt": "old\n"},
		patch:  "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-print(\"Hi\")\n+print(\"Hello, world!\")\n*** Delete File: obsolete.txt\n*** End Patch\n",
		after:  map[string]string{"hello.txt": "Hello world\n", "src/main.py": "def greet():\nprint(\"Hello, world!\")\n"},
	},
	{
		name:   "seven operations with anchors",
		origin: "Codex apply-patch parser test (the large patch its streaming test feeds character by character)",
		before: map[string]string{
			"src/config.rs":                    "use std::time::Duration;\n\nimpl Config {\n    pub apply_patch_progress: bool,\n    pub include_diagnostics: bool,\n}\n\nfn default_progress_interval() -> Duration {\n    Duration::from_millis(500)\n}\n",
			"src/legacy_patch_progress.rs":     "// legacy\n",
			"crates/cli/src/main.rs":           "fn run() {\n    let args = Args::parse();\n    dispatch(args)\n}\n",
			"README.md":                        "# Codex\n\n## Development workflow\n\nBuild the Rust workspace before opening a pull request.\n",
			"docs/old-apply-patch-progress.md": "old\n",
		},
		patch: `*** Begin Patch
*** Add File: docs/release-notes.md
+# Release notes
+
+## CLI
+- Surface apply_patch progress while arguments stream.
+- Keep final patch application gated on the completed tool call.
+- Include file summaries in the progress event payload.
*** Update File: src/config.rs
@@ impl Config
-    pub apply_patch_progress: bool,
+    pub stream_apply_patch_progress: bool,
     pub include_diagnostics: bool,
@@ fn default_progress_interval()
-    Duration::from_millis(500)
+    Duration::from_millis(250)
*** Delete File: src/legacy_patch_progress.rs
*** Update File: crates/cli/src/main.rs
*** Move to: crates/cli/src/bin/codex.rs
@@ fn run()
-    let args = Args::parse();
-    dispatch(args)
+    let cli = Cli::parse();
+    dispatch(cli)
*** Add File: tests/fixtures/apply_patch_progress.json
+{
+  "type": "apply_patch_progress",
+  "hunks": [
+    { "operation": "add", "path": "docs/release-notes.md" },
+    { "operation": "update", "path": "src/config.rs" }
+  ]
+}
*** Update File: README.md
@@ Development workflow
 Build the Rust workspace before opening a pull request.
+When touching streamed tool calls, include parser coverage for partial input.
+Prefer tests that exercise the exact event payload shape.
*** Delete File: docs/old-apply-patch-progress.md
*** End Patch`,
		after: map[string]string{
			"docs/release-notes.md":                    "# Release notes\n\n## CLI\n- Surface apply_patch progress while arguments stream.\n- Keep final patch application gated on the completed tool call.\n- Include file summaries in the progress event payload.\n",
			"src/config.rs":                            "use std::time::Duration;\n\nimpl Config {\n    pub stream_apply_patch_progress: bool,\n    pub include_diagnostics: bool,\n}\n\nfn default_progress_interval() -> Duration {\n    Duration::from_millis(250)\n}\n",
			"crates/cli/src/bin/codex.rs":              "fn run() {\n    let cli = Cli::parse();\n    dispatch(cli)\n}\n",
			"tests/fixtures/apply_patch_progress.json": "{\n  \"type\": \"apply_patch_progress\",\n  \"hunks\": [\n    { \"operation\": \"add\", \"path\": \"docs/release-notes.md\" },\n    { \"operation\": \"update\", \"path\": \"src/config.rs\" }\n  ]\n}\n",
			"README.md":                                "# Codex\n\n## Development workflow\n\nBuild the Rust workspace before opening a pull request.\nWhen touching streamed tool calls, include parser coverage for partial input.\nPrefer tests that exercise the exact event payload shape.\n",
		},
	},
}

// envSloppyCases are what models get wrong in practice, written for this
// package: each must still apply.
var envSloppyCases = []envCase{
	{
		name:   "trailing whitespace in the file",
		before: map[string]string{"a.go": "func f() {  \n\treturn 1\t\n}\n"},
		patch:  "*** Begin Patch\n*** Update File: a.go\n@@\n func f() {\n-\treturn 1\n+\treturn 2\n }\n*** End Patch\n",
		after:  map[string]string{"a.go": "func f() {  \n\treturn 2\n}\n"},
		notes:  []string{"a.go: hunk 1 matched at line 1 ignoring trailing whitespace"},
	},
	{
		name:   "indentation differs",
		before: map[string]string{"a.py": "def f():\n    x = 1\n    return x\n"},
		patch:  "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n  x = 1\n-  return x\n+    return x + 1\n*** End Patch\n",
		after:  map[string]string{"a.py": "def f():\n    x = 1\n    return x + 1\n"},
		notes:  []string{"ignoring leading and trailing whitespace"},
	},
	{
		name:   "Unicode punctuation in the file",
		before: map[string]string{"doc.md": "Say \u201chello\u201d \u2014 it\u2019s\u00a0fine.\nend\n"},
		patch:  "*** Begin Patch\n*** Update File: doc.md\n@@\n-Say \"hello\" - it's fine.\n+Say \"hi\".\n end\n*** End Patch\n",
		after:  map[string]string{"doc.md": "Say \"hi\".\nend\n"},
		notes:  []string{"Unicode dashes, quotes and spaces"},
	},
	{
		name:   "CRLF file keeps its line endings",
		before: map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n"},
		patch:  "*** Begin Patch\r\n*** Update File: w.txt\r\n@@\r\n one\r\n-two\r\n+TWO\r\n+2\r\n three\r\n*** End Patch\r\n",
		after:  map[string]string{"w.txt": "one\r\nTWO\r\n2\r\nthree\r\n"},
	},
	{
		name:   "mixed line endings: context lines keep theirs",
		before: map[string]string{"m.txt": "a\r\nb\nc\r\nd\r\n"},
		patch:  "*** Begin Patch\n*** Update File: m.txt\n@@\n a\n b\n-c\n+C\n d\n*** End Patch\n",
		after:  map[string]string{"m.txt": "a\r\nb\nC\r\nd\r\n"},
	},
	{
		name:   "no final newline, change in the middle",
		before: map[string]string{"n.txt": "a\nb\nc"},
		patch:  "*** Begin Patch\n*** Update File: n.txt\n@@\n-a\n+A\n*** End Patch",
		after:  map[string]string{"n.txt": "A\nb\nc"},
	},
	{
		name:   "no final newline, lines appended",
		before: map[string]string{"n.txt": "a\nb"},
		patch:  "*** Begin Patch\n*** Update File: n.txt\n@@\n+c\n*** End Patch",
		after:  map[string]string{"n.txt": "a\nb\nc"},
	},
	{
		name:   "appending to an empty file",
		before: map[string]string{"e.txt": ""},
		patch:  "*** Begin Patch\n*** Update File: e.txt\n@@\n+first\n*** End Patch",
		after:  map[string]string{"e.txt": "first\n"},
	},
	{
		name:   "@@ text inserts after that line",
		before: map[string]string{"c.py": "class A:\n    x = 1\n"},
		patch:  "*** Begin Patch\n*** Update File: c.py\n@@ class A:\n+    y = 0\n*** End Patch",
		after:  map[string]string{"c.py": "class A:\n    y = 0\n    x = 1\n"},
	},
	{
		name:   "unified-diff line numbers after @@ are ignored",
		before: map[string]string{"u.txt": "a\nb\nc\n"},
		patch:  "*** Begin Patch\n*** Update File: u.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n*** End Patch",
		after:  map[string]string{"u.txt": "a\nB\nc\n"},
	},
	{
		name:   "empty context lines without their space, blank lines between hunks",
		before: map[string]string{"g.go": "package g\n\nfunc A() {}\n\nfunc B() {}\n"},
		patch:  "*** Begin Patch\n*** Update File: g.go\n@@\n package g\n\n-func A() {}\n+func A() { a() }\n\n@@\n-func B() {}\n+func B() { b() }\n\n*** End Patch",
		after:  map[string]string{"g.go": "package g\n\nfunc A() { a() }\n\nfunc B() { b() }\n"},
	},
	{
		name:   "tab-indented context line without its space",
		before: map[string]string{"t.go": "func f() {\n\tx := 1\n\treturn\n}\n"},
		patch:  "*** Begin Patch\n*** Update File: t.go\n@@ func f() {\n\tx := 1\n-\treturn\n+\treturn x\n*** End Patch",
		after:  map[string]string{"t.go": "func f() {\n\tx := 1\n\treturn x\n}\n"},
	},
	{
		name:   "@@ text that is only part of a line",
		before: map[string]string{"r.md": "# T\n\n## Usage\n\nrun it\n\n## Other\n\nrun it\n"},
		patch:  "*** Begin Patch\n*** Update File: r.md\n@@ Other\n-run it\n+run it twice\n*** End Patch",
		after:  map[string]string{"r.md": "# T\n\n## Usage\n\nrun it\n\n## Other\n\nrun it twice\n"},
	},
	{
		name:   "empty line without its + in a block of added lines",
		before: map[string]string{"f.py": "def f():\n    return 1\n"},
		patch:  "*** Begin Patch\n*** Update File: f.py\n@@\n def f():\n+    x = 1\n\n+    y = 2\n     return 1\n*** End Patch",
		after:  map[string]string{"f.py": "def f():\n    x = 1\n\n    y = 2\n    return 1\n"},
	},
	{
		name:   "unified diff with a context line that is the marker",
		before: map[string]string{"doc.txt": "*** Begin Patch\nold\n"},
		patch:  "--- a/doc.txt\n+++ b/doc.txt\n@@ -1,2 +1,2 @@\n *** Begin Patch\n-old\n+new\n",
		after:  map[string]string{"doc.txt": "*** Begin Patch\nnew\n"},
	},
	{
		name:   "empty lines in an added file without their +",
		before: map[string]string{},
		patch:  "*** Begin Patch\n*** Add File: p.txt\n+a\n\n+b\n\n*** End Patch",
		after:  map[string]string{"p.txt": "a\n\nb\n"},
	},
	{
		name:   "add an empty file",
		before: map[string]string{},
		patch:  "*** Begin Patch\n*** Add File: empty.txt\n*** End Patch",
		after:  map[string]string{"empty.txt": ""},
	},
	{
		name:   "move only",
		before: map[string]string{"a.txt": "a\n"},
		patch:  "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b/a.txt\n*** End Patch",
		after:  map[string]string{"b/a.txt": "a\n"},
	},
	{
		name:   "delete then add the same path",
		before: map[string]string{"a.txt": "old\n"},
		patch:  "*** Begin Patch\n*** Delete File: a.txt\n*** Add File: a.txt\n+new\n*** End Patch",
		after:  map[string]string{"a.txt": "new\n"},
	},
	{
		name:   "end of file marker picks the last of two matches",
		before: map[string]string{"d.txt": "x\nend\nx\nend\n"},
		patch:  "*** Begin Patch\n*** Update File: d.txt\n@@\n x\n-end\n+END\n*** End of File\n*** End Patch",
		after:  map[string]string{"d.txt": "x\nend\nx\nEND\n"},
	},
	{
		name:   "quoted path, as list_directory shows it",
		before: map[string]string{"we\nird.txt": "a\n"},
		patch:  "*** Begin Patch\n*** Update File: \"we\\nird.txt\"\n@@\n-a\n+b\n*** End Patch",
		after:  map[string]string{"we\nird.txt": "b\n"},
	},
}

func pySearch(base, sub string) string {
	return "class BaseClass:\n    def search():\n        " + base + "\n\nclass Subclass(BaseClass):\n    def search():\n        " + sub + "\n"
}

func TestApplyEnvelopePatch(t *testing.T) {
	for _, cases := range [][]envCase{envPublicCases, envSloppyCases} {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				src, dir := newTestWorkspace(t, tc.before, nil)
				r := call(t, src, ApplyPatch, applyPatchIn{Patch: tc.patch})
				require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
				if diff := cmp.Diff(tc.after, files(t, dir)); diff != "" {
					t.Errorf("workspace afterwards (-want +got):\n%s\nresult: %s", diff, r.Text())
				}
				for _, n := range tc.notes {
					assert.Contains(t, r.Text(), n)
				}
				if tc.notes == nil {
					assert.NotContains(t, r.Text(), "matched", "an exact match needs no note")
				}
			})
		}
	}
}

// files returns every regular file under dir with its content.
func files(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	require.NoError(t, err)
	return out
}

func TestApplyEnvelopePatchKeepsMode(t *testing.T) {
	src, dir := newTestWorkspace(t, map[string]string{"run.sh": "echo a\n"}, nil)
	require.NoError(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o755))
	r := call(t, src, ApplyPatch, applyPatchIn{Patch: "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo a\n+echo b\n*** End Patch"})
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	fi, err := os.Stat(filepath.Join(dir, "bin/run.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	assert.Equal(t, "echo b\n", readFile(t, filepath.Join(dir, "bin/run.sh")))
}

func TestApplyEnvelopePatchErrors(t *testing.T) {
	base := map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"b.txt":     "alpha\nbeta\n",
		"c.py":      "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n",
		"bin.dat":   "x\x00y",
		"dir/x.txt": "x\n",
	}
	tests := []struct {
		name     string
		patch    string
		wantKind toolloop.ErrorKind
		contains []string
	}{
		{
			name:     "no End Patch",
			patch:    "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{`"*** End Patch"`, "cut off"},
		},
		{
			name:     "unknown header",
			patch:    "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"line 2 of the patch", "not a file header"},
		},
		{
			name: "context not found in hunk 2 of file 3",
			patch: `*** Begin Patch
*** Add File: new.txt
+fresh
*** Update File: a.txt
@@
-one
+ONE
*** Update File: c.py
@@ def f(self):
-        return 1
+        return 10
@@ def g(self):
-        return 3
+        return 30
*** End Patch`,
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"file 3 of the patch (*** Update File: c.py)", "hunk 2 of 2 (@@ def g(self):) does not apply", `at line 6, the file has "        return 2" where the hunk expects "        return 3"`, "nothing was changed"},
		},
		{
			name:     "add over an existing file",
			patch:    "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"file 1 of the patch (*** Add File: a.txt)", "already exists"},
		},
		{
			name:     "update of a missing file",
			patch:    "*** Begin Patch\n*** Add File: ok.txt\n+ok\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"file 2 of the patch (*** Update File: missing.txt)", "does not exist"},
		},
		{
			name:     "delete of a missing file",
			patch:    "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"does not exist"},
		},
		{
			name:     "delete of a folder",
			patch:    "*** Begin Patch\n*** Delete File: dir\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"is a directory"},
		},
		{
			name:     "move onto an existing file",
			patch:    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-one\n+ONE\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"already exists"},
		},
		{
			name:     "path leading out",
			patch:    "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch",
			wantKind: toolloop.KindDenied,
		},
		{
			name:     "absolute path outside the workspace",
			patch:    "*** Begin Patch\n*** Update File: /Users/someone/pygorithm/searching/binary_search.py\n@@ class BaseClass\n@@     def search():\n-        pass\n+        raise NotImplementedError()\n*** End Patch",
			wantKind: toolloop.KindDenied,
		},
		{
			name:     "move out of the workspace",
			patch:    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: ../../a.txt\n*** End Patch",
			wantKind: toolloop.KindDenied,
		},
		{
			name:     "@@ line not in the file",
			patch:    "*** Begin Patch\n*** Update File: c.py\n@@ class B\n-        return 1\n+        return 10\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"hunk 1 of 1 (@@ class B)", `its @@ line "class B" matches no line of the file`},
		},
		{
			name:     "hunks out of order",
			patch:    "*** Begin Patch\n*** Update File: a.txt\n@@\n-three\n+3\n@@\n-one\n+1\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"hunk 2 of 2", "must follow the file's order"},
		},
		{
			name:     "update with no hunks",
			patch:    "*** Begin Patch\n*** Update File: a.txt\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"has no hunks"},
		},
		{
			name:     "hunk with no lines",
			patch:    "*** Begin Patch\n*** Update File: a.txt\n@@ one\n*** Delete File: b.txt\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"has no lines"},
		},
		{
			name:     "line that is not a hunk line",
			patch:    "*** Begin Patch\n*** Update File: a.txt\n@@\n one\nx two\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"line 5 of the patch", "not a hunk line"},
		},
		{
			name:     "hunk lines before any file",
			patch:    "*** Begin Patch\n@@\n-one\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"outside a file"},
		},
		{
			name:     "empty patch",
			patch:    "*** Begin Patch\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"no file operations"},
		},
		{
			name:     "two patches",
			patch:    "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n*** Begin Patch\n*** Add File: y.txt\n+y\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"comes before the end of the patch"},
		},
		{
			name:     "text before the patch",
			patch:    "Here is the patch:\n*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"line 2 of the patch", "other text comes before it"},
		},
		{
			name:     "binary file",
			patch:    "*** Begin Patch\n*** Update File: bin.dat\n@@\n-x\n+y\n*** End Patch",
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"binary"},
		},
		{
			name:     "unclosed heredoc",
			patch:    "<<'EOF'\n*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n",
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
			assert.Equal(t, before, snapshot(t, filepath.Dir(dir)), "a failed patch changes nothing")
		})
	}
}

func TestApplyEnvelopePatchSizeLimit(t *testing.T) {
	src, dir := newTestWorkspace(t, map[string]string{"a.txt": "a\n"}, &Options{MaxFileBytes: 8})
	before := snapshot(t, dir)
	r := call(t, src, ApplyPatch, applyPatchIn{Patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n+0123456789\n*** End Patch"})
	require.Equal(t, toolloop.KindInvalidArgs, kindOf(r), r.Text())
	assert.Contains(t, r.Text(), "more than the 8-byte limit")
	assert.Equal(t, before, snapshot(t, dir))
}

func TestFindEnvelope(t *testing.T) {
	tests := []struct {
		text  string
		found bool
	}{
		{"*** Begin Patch\n*** End Patch", true},
		{"\n\n  *** Begin Patch\n*** End Patch\n\n", true},
		{"<<'EOF'\n*** Begin Patch\n*** End Patch\nEOF", true},
		{"<<EOF\n*** Begin Patch\n*** End Patch\nEOF\n", true},
		{"apply_patch <<\"PATCH\"\n*** Begin Patch\n*** End Patch\nPATCH", true},
		{"```diff\n*** Begin Patch\n*** End Patch\n```", true},
		{"```\n<<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\n```", true},
		{"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", false},
		{"", false},
		{"*** Begin", false},
	}
	for _, tt := range tests {
		e, found, err := findEnvelope(tt.text)
		assert.Equal(t, tt.found, found, "%q", tt.text)
		if found {
			require.NoError(t, err, "%q", tt.text)
			assert.Equal(t, envBegin, strings.TrimSpace(e.lines[e.begin]))
		}
	}
}

// TestEnvelopePatchAttackCorpus tries every file operation of the
// envelope form on paths that lead out of the workspace: each is refused
// and nothing, outside the workspace or in it, changes.
func TestEnvelopePatchAttackCorpus(t *testing.T) {
	parent, src := escapeLayout(t)
	before := snapshot(t, parent)
	paths := []string{
		"../outside/secret.txt", "../outside/new.txt", "/etc/passwd", filepath.Join(parent, "outside", "secret.txt"),
		"sub/../../outside/secret.txt", "link_dir_out/secret.txt", "link_dir_out/new.txt", "link_dir_out_abs/secret.txt",
		"link_file_out", "chain1/secret.txt", "chain1/new.txt", "sub/up/outside/secret.txt", "link_root_abs/etc/passwd",
		"loop1/x", "ok.txt\x00../../outside/secret.txt", `"../outside/secret.txt"`, `"link_dir_out/new.txt"`,
	}
	for _, p := range paths {
		patches := map[string]string{
			"add":       "*** Begin Patch\n*** Add File: " + p + "\n+PWNED\n*** End Patch",
			"update":    "*** Begin Patch\n*** Update File: " + p + "\n@@\n-SECRET\n+PWNED\n*** End Patch",
			"delete":    "*** Begin Patch\n*** Delete File: " + p + "\n*** End Patch",
			"move to":   "*** Begin Patch\n*** Update File: ok.txt\n*** Move to: " + p + "\n@@\n-fine\n+PWNED\n*** End Patch",
			"move from": "*** Begin Patch\n*** Update File: " + p + "\n*** Move to: stolen.txt\n*** End Patch",
		}
		for op, patch := range patches {
			t.Run(op+"/"+p, func(t *testing.T) {
				r := call(t, src, ApplyPatch, applyPatchIn{Patch: patch})
				require.True(t, r.IsError(), "succeeded: %s", r.Text())
				assert.Contains(t, []toolloop.ErrorKind{toolloop.KindDenied, toolloop.KindInvalidArgs}, kindOf(r), r.Text())
				assert.NotContains(t, r.Text(), "SECRET\n")
			})
		}
	}
	assert.Equal(t, before, snapshot(t, parent), "nothing outside the workspace, or in it, changed")
}

func TestSoftAdded(t *testing.T) {
	soft := envLine{op: ' ', soft: true}
	add := func(s string) envLine { return envLine{op: '+', text: s} }
	ctx := func(s string) envLine { return envLine{op: ' ', text: s} }
	got, ok := softAdded([]envLine{ctx("a"), add("b"), soft, soft, add("c"), soft, ctx("d")})
	require.True(t, ok)
	assert.Equal(t, []envLine{ctx("a"), add("b"), add(""), add(""), add("c"), soft, ctx("d")}, got)
	_, ok = softAdded([]envLine{ctx("a"), soft, add("c")})
	assert.False(t, ok, "a soft line after context stays context")
}
