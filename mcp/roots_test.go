//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the protocol of 2026-07-28 but work for at least a year, and servers use them; the issue asks for them.

package mcp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/mcp"
)

// TestRootsFilesystem runs the reference filesystem server with no
// directory arguments: it then serves the roots the client offers, and
// follows their changes.
func TestRootsFilesystem(t *testing.T) {
	t.Parallel()
	cfg := npmServer(t, "server-filesystem")
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

// TestRootsGo: a Go server on the 2026-07-28 protocol asks for the roots
// in its results, and sees them change.
func TestRootsGo(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "rooted", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			ans, ok := req.Params.InputResponses["r"].(*sdk.ListRootsResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"r": &sdk.ListRootsParams{}}}, nil
			}
			var uris []string
			for _, r := range ans.Roots {
				uris = append(uris, r.URI)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(uris, " ")}}}, nil
		})
	cfg := inMemory(srv)
	cfg.Roots = []string{"/srv/a"}
	src := newSource(t, "rooted", cfg, mcp.Options{Roots: []string{"/ignored"}}, nil)
	ctx := testContext(t)
	assert.Equal(t, "file:///srv/a", callTool(ctx, t, src, "rooted__roots", `{}`).Text())
	require.NoError(t, src.SetRoots([]string{"/srv/b", "file:///srv/c"}))
	assert.Equal(t, "file:///srv/b file:///srv/c", callTool(ctx, t, src, "rooted__roots", `{}`).Text())
}

func TestServersSetRoots(t *testing.T) {
	t.Parallel()
	cfg := &mcp.Config{Servers: map[string]mcp.ServerConfig{
		"shared": {Command: "server"},
		"own":    {Command: "server", Roots: []string{"/srv/own"}},
	}}
	ss, err := mcp.NewServers(cfg, &mcp.Options{Roots: []string{"/srv/a"}})
	require.NoError(t, err)
	defer ss.Close()
	require.NoError(t, ss.SetRoots([]string{"/srv/b"}))
	assert.Equal(t, []string{"file:///srv/b"}, ss.Source("shared").Roots())
	assert.Equal(t, []string{"file:///srv/own"}, ss.Source("own").Roots(), "a server's own roots stay")

	// Too many roots: an error, and nothing changes.
	many := make([]string, mcp.MaxRoots+1)
	for i := range many {
		many[i] = fmt.Sprintf("/srv/%d", i)
	}
	require.Error(t, ss.SetRoots(many))
	assert.Equal(t, []string{"file:///srv/b"}, ss.Source("shared").Roots())

	// Servers without a roots capability are skipped, not an error.
	none, err := mcp.NewServers(&mcp.Config{Servers: map[string]mcp.ServerConfig{"plain": {Command: "server"}}}, nil)
	require.NoError(t, err)
	defer none.Close()
	require.NoError(t, none.SetRoots([]string{"/srv/b"}))
	assert.Nil(t, none.Source("plain").Roots())
}
