package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/mcp"
)

// TestRootsFilesystem runs the reference filesystem server with no
// directory arguments: it then serves the roots the client offers, and
// follows their changes.
func TestRootsFilesystem(t *testing.T) {
	t.Parallel()
	cfg := npmConfig(t, filesystemEntry)
	dirA, dirB := realDir(t), realDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dirA, "a.txt"), []byte("in A"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dirB, "b.txt"), []byte("in B"), 0o600))
	logs := &logBuffer{}
	src := newSource(t, "fs", cfg, mcp.Options{Roots: []string{dirA}}, logs)
	ctx := testContext(t)
	assert.Equal(t, []string{"file://" + filepath.ToSlash(dirA)}, src.Roots())

	allowed := func() string {
		return callTool(ctx, t, src, "fs__list_allowed_directories", `{}`).Text()
	}
	read := func(path string) (string, bool) {
		res := callTool(ctx, t, src, "fs__read_text_file", `{"path":`+quote(path)+`}`)
		return res.Text(), res.IsError()
	}
	// The server asks for the roots right after the handshake.
	require.Eventually(t, func() bool { return strings.Contains(allowed(), dirA) }, 20*time.Second, 50*time.Millisecond,
		"allowed: %s\nlogs:\n%s", allowed(), logs)
	text, failed := read(filepath.Join(dirA, "a.txt"))
	assert.False(t, failed, text)
	assert.True(t, strings.HasPrefix(text, "in A"), text)
	text, failed = read(filepath.Join(dirB, "b.txt"))
	assert.True(t, failed, "a file outside the roots was read: %s", text)

	require.NoError(t, src.SetRoots([]string{dirB}))
	require.Eventually(t, func() bool {
		a := allowed()
		return strings.Contains(a, dirB) && !strings.Contains(a, dirA)
	}, 20*time.Second, 50*time.Millisecond, "allowed after SetRoots: %s\nlogs:\n%s", allowed(), logs)
	text, failed = read(filepath.Join(dirB, "b.txt"))
	assert.False(t, failed, text)
	assert.True(t, strings.HasPrefix(text, "in B"), text)
	_, failed = read(filepath.Join(dirA, "a.txt"))
	assert.True(t, failed, "a file of a removed root was read")
}

func TestSetRootsWithoutRoots(t *testing.T) {
	t.Parallel()
	src, err := mcp.New("s", mcp.ServerConfig{Command: "server"}, nil)
	require.NoError(t, err)
	defer src.Close()
	assert.Nil(t, src.Roots())
	assert.ErrorIs(t, src.SetRoots([]string{"/tmp"}), mcp.ErrNoRoots)

	empty, err := mcp.New("s", mcp.ServerConfig{Command: "server", Roots: []string{}}, nil)
	require.NoError(t, err)
	defer empty.Close()
	assert.Equal(t, []string{}, empty.Roots())
	require.NoError(t, empty.SetRoots([]string{"/srv/b", "/srv/a", "/srv/a"}))
	assert.Equal(t, []string{"file:///srv/a", "file:///srv/b"}, empty.Roots())
}

// realDir is a temporary directory, its symbolic links resolved, as the
// filesystem server resolves them.
func realDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func quote(s string) string {
	b := strings.Builder{}
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
