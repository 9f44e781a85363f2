package builtin

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// newTestWorkspace makes a workspace holding files (path → content; a
// path ending in / is a folder) and returns its source and directory.
func newTestWorkspace(t testing.TB, files map[string]string, opts *Options) (*Source, string) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	src, err := Workspace(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = src.Close() })
	return src, dir
}

func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if name[len(name)-1] == '/' {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// call runs a tool of src directly with args (a value to marshal, or a
// json.RawMessage), turning a returned error into the result the loop
// would make of it.
func call(t testing.TB, src *Source, name string, args any) *toolloop.ToolResult {
	t.Helper()
	return callCtx(context.Background(), t, src, name, args, nil)
}

func callCtx(ctx context.Context, t testing.TB, src *Source, name string, args any, rep toolloop.Reporter) *toolloop.ToolResult {
	t.Helper()
	raw, ok := args.(json.RawMessage)
	if !ok {
		var err error
		raw, err = json.Marshal(args)
		require.NoError(t, err)
	}
	tool := src.Tool(name)
	require.NotNil(t, tool, "tool %s", name)
	res, err := tool.Run(ctx, &toolloop.Call{ID: "c1", Name: name, Arguments: raw, Reporter: rep})
	if err != nil {
		return toolloop.ErrorResult(err)
	}
	require.NotNil(t, res)
	if res.Error != nil {
		res.Status = toolloop.StatusError
	}
	return res
}

// kindOf is the error kind of a result, or "" for a success.
func kindOf(r *toolloop.ToolResult) toolloop.ErrorKind {
	if r.Error == nil {
		return ""
	}
	return r.Error.Kind
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// snapshot lists every path under dir with its content or link target,
// to prove that nothing there changed.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			out[rel] = "-> " + dest
		case d.IsDir():
			out[rel] = "/"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, _ := d.Info()
			out[rel] = string(b) + "|" + fi.Mode().String()
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func keys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
