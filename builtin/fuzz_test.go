package builtin

import (
	"context"
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

// envFuzzFiles are the files the fuzzed hunks are applied to: LF, CRLF,
// no final newline, empty.
var envFuzzFiles = []string{
	"class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n",
	"one\r\ntwo\r\nthree\r\n",
	"a\nb\nc",
	"",
}

// FuzzEnvelope parses arbitrary text as a *** Begin Patch patch and
// applies the hunks of every Update File to a few files. It must never
// panic, and a result must hold together: a patch that parses has file
// operations with paths; a hunk set that applies changes the file's line
// count by its added minus its removed lines (plus at most the empty
// lines it may take as added), and one with only context lines leaves
// the file as it was.
//
//	go test -fuzz FuzzEnvelope ./builtin
func FuzzEnvelope(f *testing.F) {
	for _, cases := range [][]envCase{envPublicCases, envSloppyCases} {
		for _, tc := range cases {
			f.Add(tc.patch)
		}
	}
	f.Add("*** Begin Patch\n*** Update File: x\n@@ class A:\n@@     def g(self):\n         return 2\n*** End of File\n*** End Patch")
	f.Add("*** Begin Patch\n*** Update File: x\n@@\n\n\n@@\n*** End Patch")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<16 {
			t.Skip("bounded: at most 64 KiB")
		}
		e, found, err := findEnvelope(text)
		if !found || err != nil {
			return
		}
		ops, err := e.parse()
		if err != nil {
			var pe *envParseError
			require.ErrorAs(t, err, &pe)
			assert.Positive(t, pe.line)
			return
		}
		require.NotEmpty(t, ops)
		for _, op := range ops {
			require.NotEmpty(t, op.path)
			if op.kind != envUpdateFile || len(op.chunks) == 0 {
				continue
			}
			for _, file := range envFuzzFiles {
				out, _, err := applyChunks(context.Background(), []byte(file), op.chunks)
				if err != nil {
					continue
				}
				added, removed, soft, changes := 0, 0, 0, false
				for _, c := range op.chunks {
					for _, l := range c.lines {
						switch {
						case l.soft:
							soft++
						case l.op == '+':
							added++
							changes = true
						case l.op == '-':
							removed++
							changes = true
						}
					}
				}
				// A file without a final newline keeps lacking one, so its
				// last line, even an empty one, has none.
				open := file != "" && !strings.HasSuffix(file, "\n")
				lines := func(s string) int {
					n := strings.Count(s, "\n")
					if open && s != "" {
						n++
					}
					return n
				}
				// Empty lines without a prefix between added lines may
				// have been taken as added.
				delta := lines(string(out)) - lines(file)
				assert.True(t, delta >= added-removed && delta <= added-removed+soft, "file %q, output %q", file, out)
				if !changes {
					assert.Equal(t, file, string(out))
				}
			}
		}
	})
}
