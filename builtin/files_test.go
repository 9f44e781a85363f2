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

func TestReadFile(t *testing.T) {
	long := strings.Repeat("x", maxLineBytes+50)
	files := map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"nonl.txt":  "one\ntwo",
		"empty.txt": "",
		"data.json": `{"a": 1}` + "\n",
		"bin.dat":   "PK\x03\x04\x00\x00binary",
		"long.txt":  "short\n" + long + "\nend\n",
		"latin.txt": "caf\xe9\n",
		"big.txt":   strings.Repeat("0123456789\n", 400),
		"dir/":      "",
	}
	src, _ := newTestWorkspace(t, files, &Options{MaxFileBytes: 6000, MaxOutputBytes: 2500})
	tests := []struct {
		name     string
		args     readFileIn
		wantKind toolloop.ErrorKind
		want     string // exact text, if set
		contains []string
		mime     string
	}{
		{name: "whole file", args: readFileIn{Path: "a.txt"}, want: "one\ntwo\nthree\n", mime: "text/plain; charset=utf-8"},
		{name: "no final newline", args: readFileIn{Path: "nonl.txt"}, want: "one\ntwo"},
		{name: "range", args: readFileIn{Path: "a.txt", Offset: 2, Limit: 1}, contains: []string{"two\n", "[showing lines 2-2 of 3; call read_file with offset=3 to read more]"}},
		{name: "range to end", args: readFileIn{Path: "a.txt", Offset: 3}, contains: []string{"three\n", "[showing lines 3-3 of 3]"}},
		{name: "absolute inside", args: readFileIn{Path: filepath.Join(src.Dir(), "a.txt")}, want: "one\ntwo\nthree\n"},
		{name: "offset past end", args: readFileIn{Path: "a.txt", Offset: 9}, wantKind: toolloop.KindInvalidArgs},
		{name: "empty", args: readFileIn{Path: "empty.txt"}, want: "[the file is empty]"},
		{name: "json mime", args: readFileIn{Path: "data.json"}, mime: "application/json"},
		{name: "binary", args: readFileIn{Path: "bin.dat"}, wantKind: toolloop.KindInvalidArgs, contains: []string{"binary file"}, mime: "application/zip"},
		{name: "long line cut", args: readFileIn{Path: "long.txt"}, contains: []string{"short\n", "[... line cut: 50 more bytes]", "end\n", "[1 line longer than 2000 bytes were cut]"}},
		{name: "invalid utf-8", args: readFileIn{Path: "latin.txt"}, contains: []string{"caf\uFFFD", "not valid UTF-8"}},
		{name: "output cap", args: readFileIn{Path: "big.txt"}, contains: []string{"[showing lines 1-227 of 400; call read_file with offset=228 to read more]"}},
		{name: "too big", args: readFileIn{Path: "toobig.txt"}, wantKind: toolloop.KindInvalidArgs},
		{name: "directory", args: readFileIn{Path: "dir"}, wantKind: toolloop.KindInvalidArgs, contains: []string{"list_directory"}},
		{name: "missing", args: readFileIn{Path: "nope.txt"}, wantKind: toolloop.KindInvalidArgs, contains: []string{"no such file"}},
		{name: "empty path", args: readFileIn{Path: ""}, wantKind: toolloop.KindInvalidArgs},
	}
	require.NoError(t, os.WriteFile(filepath.Join(src.Dir(), "toobig.txt"), make([]byte, 7000), 0o644))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, src, ReadFile, tt.args)
			assert.Equal(t, tt.wantKind, kindOf(r), r.Text())
			if tt.want != "" {
				assert.Equal(t, tt.want, r.Text())
			}
			for _, c := range tt.contains {
				assert.Contains(t, r.Text(), c)
			}
			if tt.mime != "" {
				assert.Equal(t, tt.mime, r.Meta.MIMEType)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	src, dir := newTestWorkspace(t, map[string]string{"old.sh": "echo old\n", "d/": ""}, nil)
	require.NoError(t, os.Chmod(filepath.Join(dir, "old.sh"), 0o750))
	require.NoError(t, os.Symlink("old.sh", filepath.Join(dir, "link.sh")))
	outside := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, "out.txt")))

	tests := []struct {
		name     string
		path     string
		content  string
		wantKind toolloop.ErrorKind
		created  bool
	}{
		{name: "create with parents", path: "new/deep/file.txt", content: "hello\n", created: true},
		{name: "overwrite", path: "old.sh", content: "echo new\n"},
		{name: "empty content", path: "empty.txt", content: "", created: true},
		{name: "directory", path: "d", wantKind: toolloop.KindInvalidArgs},
		{name: "root", path: ".", wantKind: toolloop.KindInvalidArgs},
		{name: "link inside", path: "link.sh", wantKind: toolloop.KindInvalidArgs},
		{name: "link outside", path: "out.txt", wantKind: toolloop.KindDenied},
		{name: "parent is a file", path: "old.sh/x", wantKind: toolloop.KindInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, src, WriteFile, writeFileIn{Path: tt.path, Content: tt.content})
			require.Equal(t, tt.wantKind, kindOf(r), r.Text())
			if tt.wantKind != "" {
				return
			}
			assert.Equal(t, tt.content, readFile(t, filepath.Join(dir, tt.path)))
			assert.Equal(t, tt.created, r.Meta.Extra["created"])
		})
	}
	fi, err := os.Stat(filepath.Join(dir, "old.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), fi.Mode().Perm(), "an overwritten file keeps its mode")
	assert.NoFileExists(t, filepath.Join(outside, "x"))
	entries, err := filepath.Glob(filepath.Join(dir, "*.tmp"))
	require.NoError(t, err)
	assert.Empty(t, entries, "no temporary files are left behind")
}

func TestWriteFileTooBig(t *testing.T) {
	src, dir := newTestWorkspace(t, nil, &Options{MaxFileBytes: 10})
	r := call(t, src, WriteFile, writeFileIn{Path: "f", Content: strings.Repeat("x", 11)})
	assert.Equal(t, toolloop.KindInvalidArgs, kindOf(r))
	assert.NoFileExists(t, filepath.Join(dir, "f"))
}

func TestEditFile(t *testing.T) {
	const orig = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name     string
		file     string
		edits    []edit
		wantKind toolloop.ErrorKind
		want     string // the file afterwards
		contains []string
	}{
		{
			name:  "unique",
			edits: []edit{{OldString: "func a() {\n\treturn 1", NewString: "func a() {\n\treturn 2"}},
			want:  "func a() {\n\treturn 2\n}\n\nfunc b() {\n\treturn 1\n}\n",
		},
		{
			name:     "ambiguous",
			edits:    []edit{{OldString: "return 1", NewString: "return 2"}},
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"matches 2 times, at lines 2, 6", "replace_all"},
		},
		{
			name:  "replace all",
			edits: []edit{{OldString: "return 1", NewString: "return 2", ReplaceAll: true}},
			want:  strings.ReplaceAll(orig, "return 1", "return 2"),
		},
		{
			name:     "not found",
			edits:    []edit{{OldString: "return 3", NewString: "x"}},
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"not found"},
		},
		{
			name:     "whitespace hint",
			edits:    []edit{{OldString: "func  b()  {", NewString: "x"}},
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"differs only in whitespace starts at line 5"},
		},
		{
			name: "several edits in order",
			edits: []edit{
				{OldString: "func a()", NewString: "func c()"},
				{OldString: "func c() {\n\treturn 1", NewString: "func c() {\n\treturn 3"},
			},
			want: "func c() {\n\treturn 3\n}\n\nfunc b() {\n\treturn 1\n}\n",
		},
		{
			name: "all or none",
			edits: []edit{
				{OldString: "func a()", NewString: "func c()"},
				{OldString: "func a()", NewString: "func d()"},
			},
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"edit 2 of 2", "the file was not changed"},
		},
		{
			name:     "identical",
			edits:    []edit{{OldString: "func a()", NewString: "func a()"}},
			wantKind: toolloop.KindInvalidArgs,
		},
		{
			name:     "crlf hint",
			file:     "a\r\nb\r\n",
			edits:    []edit{{OldString: "a\nb", NewString: "c"}},
			wantKind: toolloop.KindInvalidArgs,
			contains: []string{"CRLF"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := orig
			if tt.file != "" {
				content = tt.file
			}
			src, dir := newTestWorkspace(t, map[string]string{"f.go": content}, nil)
			r := call(t, src, EditFile, editFileIn{Path: "f.go", Edits: tt.edits})
			require.Equal(t, tt.wantKind, kindOf(r), r.Text())
			for _, c := range tt.contains {
				assert.Contains(t, r.Text(), c)
			}
			got := readFile(t, filepath.Join(dir, "f.go"))
			if tt.wantKind != "" {
				assert.Equal(t, content, got, "a failed edit leaves the file unchanged")
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEditFileMissing(t *testing.T) {
	src, _ := newTestWorkspace(t, map[string]string{"bin": "a\x00b"}, nil)
	for _, p := range []string{"nope.go", "bin"} {
		r := call(t, src, EditFile, editFileIn{Path: p, Edits: []edit{{OldString: "a", NewString: "b"}}})
		assert.Equal(t, toolloop.KindInvalidArgs, kindOf(r), r.Text())
	}
}
