package view

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineDiff(t *testing.T) {
	tests := []struct {
		name      string
		old, new  string
		wantLines []string
	}{
		{"one line changed", "a\nb\nc", "a\nB\nc", []string{" a", "-b", "+B", " c"}},
		{"insert", "a\nc", "a\nb\nc", []string{" a", "+b", " c"}},
		{"delete", "a\nb\nc", "a\nc", []string{" a", "-b", " c"}},
		{"common lines in the middle", "x\nkeep\ny", "p\nkeep\nq", []string{"-x", "+p", " keep", "-y", "+q"}},
		{"to nothing", "a\nb", "", []string{"-a", "-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantLines, lineDiff(splitLines(tt.old), splitLines(tt.new)))
		})
	}

	// Past lcsCells, an edit shows as all removed then all added.
	var a, b []string
	for i := range 600 {
		a = append(a, "old "+strings.Repeat("x", i%7))
		b = append(b, "new "+strings.Repeat("x", i%7))
	}
	got := lineDiff(a, b)
	require.Len(t, got, 1200)
	assert.Equal(t, "-"+a[0], got[0])
	assert.Equal(t, "+"+b[0], got[600])
}

func TestFileDiff(t *testing.T) {
	codex := "*** Begin Patch\n*** Update File: main.go\n@@ func main() {\n-\tprintln(1)\n+\tprintln(2)\n*** Add File: new.txt\n+hello\n*** Delete File: old.txt\n*** End Patch\n"
	unified := "--- a/main.go\n+++ b/main.go\n@@ -1,2 +1,2 @@\n package main\n-var x = 1\n+var x = 2\n--- /dev/null\n+++ b/added.go\n@@ -0,0 +1 @@\n+package added\n"
	tests := []struct {
		name  string
		tool  string
		args  any
		extra map[string]any
		want  []*diffFile
	}{
		{"write_file replacing a file", "write_file", map[string]any{"path": "a.txt", "content": "x\ny\n"}, map[string]any{"created": false},
			[]*diffFile{{Path: "a.txt", Note: "file written; its earlier content is not in the log", Lines: []string{"@@ -0,0 +1,2 @@", "+x", "+y"}}}},
		{"edit_file, every occurrence", "edit_file", map[string]any{"path": "a.go", "edits": []any{map[string]any{"old_string": "a", "new_string": "b", "replace_all": true}}}, nil,
			[]*diffFile{{Path: "a.go", Lines: []string{"@@ edit 1, every occurrence @@", "-a", "+b"}}}},
		{"apply_patch, Begin Patch form", "apply_patch", map[string]any{"patch": codex}, nil, []*diffFile{
			{Path: "main.go", Note: "update", Lines: []string{"@@@ func main() {", "-\tprintln(1)", "+\tprintln(2)"}},
			{Path: "new.txt", Note: "add", Lines: []string{"+hello"}},
			{Path: "old.txt", Note: "delete"},
		}},
		{"apply_patch, unified diff", "apply_patch", map[string]any{"patch": unified}, nil, []*diffFile{
			{Path: "main.go", Lines: []string{"h--- a/main.go", "h+++ b/main.go", "@@@ -1,2 +1,2 @@", " package main", "-var x = 1", "+var x = 2"}},
			{Path: "added.go", Lines: []string{"h--- /dev/null", "h+++ b/added.go", "@@@ -0,0 +1 @@", "+package added"}},
		}},
		{"another tool", "read_file", map[string]any{"path": "a"}, nil, nil},
		{"arguments of another shape", "edit_file", map[string]any{"file": "a"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := json.Marshal(tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.want, fileDiff(tt.tool, args, tt.extra))
		})
	}
}

func TestDiffBound(t *testing.T) {
	content := strings.Repeat("line\n", diffLines+50) + strings.Repeat("é", diffLineBytes)
	args, err := json.Marshal(map[string]any{"path": "big", "content": content})
	require.NoError(t, err)
	d := fileDiff("write_file", args, nil)
	require.Len(t, d, 1)
	require.Len(t, d[0].Lines, diffLines+1)
	assert.Equal(t, "…52 more lines", d[0].Lines[diffLines])

	long := strings.Repeat("é", diffLineBytes)
	args, err = json.Marshal(map[string]any{"path": "wide", "content": long})
	require.NoError(t, err)
	d = fileDiff("write_file", args, nil)
	require.Len(t, d[0].Lines, 2)
	assert.Equal(t, "+"+strings.Repeat("é", diffLineBytes/2-1)+" …(402 more bytes)", d[0].Lines[1], "cut before the character that crosses the bound")
}
