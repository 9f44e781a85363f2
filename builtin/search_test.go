package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// tree is a small project with things the walkers must leave out.
var tree = map[string]string{
	".gitignore":              "*.log\nbuild/\n!keep.log\n",
	"README.md":               "# Project\nTODO: write docs\n",
	"main.go":                 "package main\n\nfunc main() {\n\t// TODO: fix\n\tprintln(\"hello\")\n}\n",
	"util/str.go":             "package util\n\nfunc Upper(s string) string { return s } // todo\n",
	"util/str_test.go":        "package util\n\nfunc TestUpper() {}\n",
	"util/.gitignore":         "*.tmp\n",
	"util/scratch.tmp":        "TODO scratch\n",
	"web/app.ts":              "// TODO: types\nexport const x = 1\n",
	"web/app.tsx":             "export const y = 2\n",
	"debug.log":               "TODO in log\n",
	"keep.log":                "TODO kept\n",
	"build/out.txt":           "TODO built\n",
	".git/config":             "TODO git\n",
	"node_modules/m/index.js": "TODO module\n",
	"bin/tool":                "TODO\x00binary",
	"empty/":                  "",
}

// sized is how list_directory shows a file of tree.
func sized(name string) string { return fmt.Sprintf("%s (%d B)", name, len(tree[name])) }

func TestListDirectory(t *testing.T) {
	src, dir := newTestWorkspace(t, tree, nil)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))

	tests := []struct {
		name     string
		args     listDirectoryIn
		wantKind toolloop.ErrorKind
		want     []string // lines that must be there
		absent   []string // substrings that must not be
	}{
		{
			name: "root, depth 1",
			args: listDirectoryIn{Depth: 1},
			want: []string{sized(".gitignore"), sized("README.md"), "bin/", "empty/", sized("keep.log"), sized("main.go"), "out -> " + outside, "util/", "web/",
				"[4 folders, 5 files; 4 entries left out (.git, node_modules or .gitignore)]"},
			absent: []string{"debug.log", "build", ".git/", "node_modules/", "util/str.go", "secret"},
		},
		{
			name:   "default depth 2",
			args:   listDirectoryIn{},
			want:   []string{sized("util/str.go"), sized("util/str_test.go"), sized("web/app.ts"), "[4 folders, 11 files; 5 entries left out (.git, node_modules or .gitignore)]"},
			absent: []string{"scratch.tmp", "secret"},
		},
		{name: "subfolder", args: listDirectoryIn{Path: "util"}, want: []string{sized("util/str.go")}, absent: []string{"main.go"}},
		{name: "empty folder", args: listDirectoryIn{Path: "empty"}, want: []string{"(empty)"}},
		{name: "a file", args: listDirectoryIn{Path: "main.go"}, wantKind: toolloop.KindInvalidArgs},
		{name: "link out", args: listDirectoryIn{Path: "out"}, wantKind: toolloop.KindDenied},
		{name: "missing", args: listDirectoryIn{Path: "nope"}, wantKind: toolloop.KindInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, src, ListDirectory, tt.args)
			require.Equal(t, tt.wantKind, kindOf(r), r.Text())
			lines := strings.Split(r.Text(), "\n")
			for _, w := range tt.want {
				assert.Contains(t, lines, w)
			}
			for _, a := range tt.absent {
				assert.NotContains(t, r.Text(), a)
			}
		})
	}
}

func TestListDirectoryCap(t *testing.T) {
	files := map[string]string{"z/deep/f": ""}
	for i := range maxListEntries + 5 {
		files[fmt.Sprintf("a/f%04d", i)] = ""
	}
	src, _ := newTestWorkspace(t, files, nil)
	r := call(t, src, ListDirectory, listDirectoryIn{Depth: 3})
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r))
	assert.Contains(t, r.Text(), "[listing stopped at 1000 entries")
	assert.Contains(t, strings.Split(r.Text(), "\n"), "z/", "shallow entries are listed first")
}

func TestGrepSearch(t *testing.T) {
	src, _ := newTestWorkspace(t, tree, nil)
	tests := []struct {
		name     string
		args     grepSearchIn
		wantKind toolloop.ErrorKind
		want     []string // the match lines, in order
		notes    []string
	}{
		{
			name: "literal, gitignore respected",
			args: grepSearchIn{Pattern: "TODO"},
			want: []string{"README.md:2: TODO: write docs", "keep.log:1: TODO kept", "main.go:4: \t// TODO: fix", "web/app.ts:1: // TODO: types"},
		},
		{
			name: "case insensitive",
			args: grepSearchIn{Pattern: "todo", CaseInsensitive: true, Path: "util"},
			want: []string{"util/str.go:3: func Upper(s string) string { return s } // todo"},
		},
		{
			name: "regex without literal",
			args: grepSearchIn{Pattern: `^\s+\w+\("`},
			want: []string{"main.go:5: \tprintln(\"hello\")"},
		},
		{
			name: "anchors",
			args: grepSearchIn{Pattern: `^package \w+$`, Glob: "*.go"},
			want: []string{"main.go:1: package main", "util/str.go:1: package util", "util/str_test.go:1: package util"},
		},
		{
			name: "glob by name",
			args: grepSearchIn{Pattern: "export", Glob: "*.{ts,tsx}"},
			want: []string{"web/app.ts:2: export const x = 1", "web/app.tsx:1: export const y = 2"},
		},
		{
			name: "glob by path",
			args: grepSearchIn{Pattern: "package", Glob: "util/**/*_test.go"},
			want: []string{"util/str_test.go:1: package util"},
		},
		{
			name: "single file",
			args: grepSearchIn{Pattern: "func", Path: "main.go"},
			want: []string{"main.go:3: func main() {"},
		},
		{
			name:  "limit",
			args:  grepSearchIn{Pattern: "TODO", MaxResults: 2},
			want:  []string{"README.md:2: TODO: write docs", "keep.log:1: TODO kept"},
			notes: []string{"[showing the first 2 matching lines; there are more. Narrow the search"},
		},
		{name: "no match", args: grepSearchIn{Pattern: "zzz"}, notes: []string{`[no matches for "zzz" in .]`}},
		{name: "binary skipped", args: grepSearchIn{Pattern: "TODO", Path: "bin"}, notes: []string{"[1 file not searched: binary"}},
		{name: "bad regex", args: grepSearchIn{Pattern: "a(b"}, wantKind: toolloop.KindInvalidArgs},
		{name: "lookahead", args: grepSearchIn{Pattern: "a(?=b)"}, wantKind: toolloop.KindInvalidArgs},
		{name: "bad glob", args: grepSearchIn{Pattern: "a", Glob: "[a"}, wantKind: toolloop.KindInvalidArgs},
		{name: "escape", args: grepSearchIn{Pattern: "a", Path: "../"}, wantKind: toolloop.KindDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, src, GrepSearch, tt.args)
			require.Equal(t, tt.wantKind, kindOf(r), r.Text())
			if tt.wantKind != "" {
				return
			}
			var got []string
			for _, l := range strings.Split(r.Text(), "\n") {
				if l != "" && !strings.HasPrefix(l, "[") {
					got = append(got, l)
				}
			}
			assert.Equal(t, tt.want, got)
			for _, n := range tt.notes {
				assert.Contains(t, r.Text(), n)
			}
		})
	}
}

func TestGrepOrderManyFiles(t *testing.T) {
	// Workers search files in parallel; the output is still in path order,
	// and a limit keeps the first matches in that order.
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = fmt.Sprintf("x\nneedle %d\n", i)
	}
	names := keys(files)
	src, _ := newTestWorkspace(t, files, nil)
	for range 5 {
		for _, limit := range []int{1000, 10} {
			r := call(t, src, GrepSearch, grepSearchIn{Pattern: "needle", MaxResults: limit})
			lines := strings.Split(strings.TrimSpace(r.Text()), "\n")
			n := min(limit, len(names))
			require.Len(t, lines, n+1)
			for i, l := range lines[:n] {
				require.True(t, strings.HasPrefix(l, names[i]+":2: needle"), "%d: %s", i, l)
			}
		}
	}
}

func TestSearcherMatchesEveryLineLikeRegexp(t *testing.T) {
	text := "alpha beta\n\nfoo(bar)\r\nBETA\nx\ttabbed\nend without newline"
	patterns := []string{"beta", "(?i)beta", `^$`, `\w+\(`, `a\nb`, `foo\(bar\)`, `^x`, `newline$`, `(ab|be)ta`, `e*`, `\s`, "t+a", "(?:fo)+o"}
	for _, p := range patterns {
		t.Run(p, func(t *testing.T) {
			s, err := newSearcher(p, false)
			require.NoError(t, err)
			re := regexp.MustCompile(p)
			var want []int
			for i, line := range strings.Split(text, "\n") {
				if re.MatchString(strings.TrimSuffix(line, "\r")) || re.MatchString(line) {
					want = append(want, i+1)
				}
			}
			var got []int
			for _, h := range s.search([]byte(text), 100) {
				got = append(got, h.line)
			}
			assert.Equal(t, want, got)
		})
	}
}

func TestRequiredLiteral(t *testing.T) {
	tests := map[string]string{
		"hello":            "hello",
		"(?m)func \\w+\\(": "func ",
		"a+bcd":            "bcd",
		"(?i)abc":          "",
		"ab|cd":            "",
		"x*":               "",
		"(foo)bar":         "foo",
		"foo.bar":          "foo",
		"(?:abc){2}":       "abcabc",
		"(?:abc){0,2}x":    "x",
		"[ab]c":            "c",
	}
	for in, want := range tests {
		assert.Equal(t, want, string(requiredLiteral(in)), in)
	}
}

func TestFileSearch(t *testing.T) {
	src, _ := newTestWorkspace(t, tree, nil)
	tests := []struct {
		name     string
		args     fileSearchIn
		wantKind toolloop.ErrorKind
		want     []string
		note     string
	}{
		{name: "by name", args: fileSearchIn{Pattern: "*.go"}, want: []string{"main.go", "util/str.go", "util/str_test.go"}},
		{name: "doublestar", args: fileSearchIn{Pattern: "**/*_test.go"}, want: []string{"util/str_test.go"}},
		{name: "braces", args: fileSearchIn{Pattern: "web/*.{ts,tsx}"}, want: []string{"web/app.ts", "web/app.tsx"}},
		{name: "folders", args: fileSearchIn{Pattern: "u*"}, want: []string{"util/"}},
		{name: "relative to path", args: fileSearchIn{Pattern: "*.go", Path: "util"}, want: []string{"util/str.go", "util/str_test.go"}},
		{name: "path pattern under path", args: fileSearchIn{Pattern: "str*.go", Path: "util"}, want: []string{"util/str.go", "util/str_test.go"}},
		{name: "ignored left out", args: fileSearchIn{Pattern: "**/*.log"}, want: []string{"keep.log"}},
		{name: "limit", args: fileSearchIn{Pattern: "*", MaxResults: 2}, want: []string{".gitignore", "README.md"}, note: "there are more"},
		{name: "none", args: fileSearchIn{Pattern: "*.rs"}, note: `[no paths match "*.rs" in .`},
		{name: "missing static dir", args: fileSearchIn{Pattern: "nope/**/*.go"}, note: "[no paths match"},
		{name: "bad pattern", args: fileSearchIn{Pattern: "[a"}, wantKind: toolloop.KindInvalidArgs},
		{name: "escape by pattern", args: fileSearchIn{Pattern: "../*"}, wantKind: toolloop.KindDenied},
		{name: "escape by path", args: fileSearchIn{Pattern: "*", Path: "/etc"}, wantKind: toolloop.KindDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, src, FileSearch, tt.args)
			require.Equal(t, tt.wantKind, kindOf(r), r.Text())
			if tt.wantKind != "" {
				return
			}
			var got []string
			for _, l := range strings.Split(r.Text(), "\n") {
				if l != "" && !strings.HasPrefix(l, "[") {
					got = append(got, l)
				}
			}
			assert.Equal(t, tt.want, got)
			assert.Contains(t, r.Text(), tt.note)
		})
	}
}
