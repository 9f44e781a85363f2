package builtin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// hostileNames are file names that, printed raw, would fake lines or
// terminal output, or be misread.
var hostileNames = []string{
	"a\nb.txt",
	"x\rfake",
	"\x1b[31mred",
	"tab\there.txt",
	"bad\xff.txt",
	"\"quoted\".txt",
	" lead.txt",
	"sep\u2028line.txt",
	"c1\u0085next.txt",
	"del\x7f.txt",
}

// hostileWorkspace makes a workspace holding a file of each hostile name
// (where the file system takes it), a folder with a newline in its name,
// and returns the names made.
func hostileWorkspace(t *testing.T) (*Source, string, []string) {
	t.Helper()
	dir := t.TempDir()
	var made []string
	for _, n := range hostileNames {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("SECRET\n"), 0o644); err != nil {
			t.Logf("the file system refuses %q: %v", n, err)
			continue
		}
		made = append(made, n)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "d\nx"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d\nx", "f.txt"), []byte("SECRET inner\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("SECRET\n"), 0o644))
	src, err := Workspace(dir, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = src.Close() })
	return src, dir, made
}

func TestQuoteName(t *testing.T) {
	tests := map[string]string{
		"plain.txt":         "plain.txt",
		"dir/sub file.go":   "dir/sub file.go",
		"naïve/café.md":     "naïve/café.md",
		`back\slash`:        `back\slash`,
		"a\nb.txt":          `"a\nb.txt"`,
		"x\rfake":           `"x\rfake"`,
		"\x1b[31mred":       `"\x1b[31mred"`,
		"tab\there":         `"tab\there"`,
		"bad\xff":           `"bad\xff"`,
		`"quoted"`:          `"\"quoted\""`,
		`"`:                 `"\""`,
		" lead":             `" lead"`,
		"trail ":            `"trail "`,
		"nb\u00a0space":     `"nb\u00a0space"`,
		"rtl\u202eoverride": `"rtl\u202eoverride"`,
		"c1\u0085":          `"c1\u0085"`,
		"del\x7f":           `"del\x7f"`,
		`with\"quote`:       `with\"quote`,
		"":                  "",
	}
	for in, want := range tests {
		got := quoteName(in)
		assert.Equal(t, want, got, "%q", in)
		if got != in {
			back, err := strconv.Unquote(got)
			require.NoError(t, err)
			assert.Equal(t, in, back, "the quoted form gives the name back")
		}
	}
}

// oneLinePerEntry checks that out, split into lines, holds exactly the
// lines want (in any order) and the notes that start with "[".
func oneLinePerEntry(t *testing.T, out string, want []string) {
	t.Helper()
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "[") {
			got = append(got, l)
		}
	}
	assert.ElementsMatch(t, want, got, "output:\n%s", out)
}

func TestNamesCannotFakeLines(t *testing.T) {
	src, _, made := hostileWorkspace(t)

	t.Run("list_directory", func(t *testing.T) {
		r := call(t, src, ListDirectory, listDirectoryIn{})
		require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
		want := []string{`"d\nx/"`, `"d\nx/f.txt" (13 B)`, "plain.txt (7 B)"}
		for _, n := range made {
			want = append(want, strconv.Quote(n)+" (7 B)")
		}
		oneLinePerEntry(t, r.Text(), want)
	})

	t.Run("file_search", func(t *testing.T) {
		r := call(t, src, FileSearch, fileSearchIn{Pattern: "**"})
		require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
		want := []string{`"d\nx/"`, `"d\nx/f.txt"`, "plain.txt"}
		for _, n := range made {
			want = append(want, strconv.Quote(n))
		}
		oneLinePerEntry(t, r.Text(), want)
	})

	t.Run("grep_search", func(t *testing.T) {
		r := call(t, src, GrepSearch, grepSearchIn{Pattern: "SECRET"})
		require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
		want := []string{`"d\nx/f.txt":1: SECRET inner`, "plain.txt:1: SECRET"}
		for _, n := range made {
			want = append(want, strconv.Quote(n)+":1: SECRET")
		}
		oneLinePerEntry(t, r.Text(), want)
	})

	t.Run("the quoted form names the file", func(t *testing.T) {
		for _, n := range append(made, "d\nx/f.txt") {
			r := call(t, src, ReadFile, readFileIn{Path: strconv.Quote(n)})
			require.Equal(t, toolloop.ErrorKind(""), kindOf(r), "%q: %s", n, r.Text())
			assert.Contains(t, r.Text(), "SECRET")
		}
		r := call(t, src, ListDirectory, listDirectoryIn{Path: `"d\nx/"`})
		require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
		oneLinePerEntry(t, r.Text(), []string{`"d\nx/f.txt" (13 B)`})
		r = call(t, src, EditFile, editFileIn{Path: `"a\nb.txt"`, Edits: []edit{{OldString: "SECRET", NewString: "PUBLIC"}}})
		require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
		assert.Equal(t, "edited \"a\\nb.txt\"", strings.SplitN(r.Text(), ":", 2)[0])
	})

	t.Run("messages quote names too", func(t *testing.T) {
		r := call(t, src, ReadFile, readFileIn{Path: `"d\nx"`})
		require.Equal(t, toolloop.KindInvalidArgs, kindOf(r))
		assert.NotContains(t, r.Text(), "\n")
		assert.Contains(t, r.Text(), `"d\nx" is a directory`)
	})
}

func TestGrepEscapesControlCharacters(t *testing.T) {
	src, _ := newTestWorkspace(t, map[string]string{
		"ctl.txt": "needle\rfake.go:1: injected\n\x1b[2Kneedle hidden\x07\nneedle\u2028x\tok\x7f\n",
	}, nil)
	r := call(t, src, GrepSearch, grepSearchIn{Pattern: "needle"})
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	oneLinePerEntry(t, r.Text(), []string{
		`ctl.txt:1: needle\rfake.go:1: injected`,
		`ctl.txt:2: \x1b[2Kneedle hidden\x07`,
		"ctl.txt:3: needle\\u2028x\tok\\x7f",
	})
	assert.NotContains(t, r.Text(), "\r")
	assert.NotContains(t, r.Text(), "\x1b")
}

func TestEscapeControls(t *testing.T) {
	tests := map[string]string{
		"plain text":            "plain text",
		"tab\tkept":             "tab\tkept",
		`back\slash \n`:         `back\slash \n`,
		"cr\r":                  `cr\r`,
		"esc\x1b[0m":            `esc\x1b[0m`,
		"nul\x00":               `nul\x00`,
		"c1\u009b":              `c1\u009b`,
		"ls\u2028ps\u2029":      `ls\u2028ps\u2029`,
		"ok \u00e9\u20ac\u2019": "ok \u00e9\u20ac\u2019",
	}
	for in, want := range tests {
		assert.Equal(t, want, escapeControls(in), "%q", in)
	}
}
