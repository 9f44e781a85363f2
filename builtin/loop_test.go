package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/looptest"
)

func newSource(t *testing.T, files map[string]string, opts *builtin.Options) (*builtin.Source, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	src, err := builtin.Workspace(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = src.Close() })
	return src, dir
}

func TestAgentLoopWithWorkspace(t *testing.T) {
	src, dir := newSource(t, map[string]string{"main.go": "package main\n\n// TODO: greet\nfunc main() {}\n"}, nil)
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))

	patch := "--- a/main.go\n+++ b/main.go\n@@ -3,2 +3,2 @@\n-// greet\n+// greet the world\n func main() {}\n"
	model := looptest.NewModel(t,
		looptest.Turn{
			Check: func(req *toolloop.Request) string {
				var names []string
				for _, s := range req.Tools {
					names = append(names, s.Name)
				}
				if !slices.Equal(names, []string{"apply_patch", "edit_file", "exec_shell", "file_search", "grep_search",
					"list_directory", "read_file", "web_fetch", "write_file"}) {
					return fmt.Sprintf("tools offered: %v", names)
				}
				return ""
			},
			Reply: looptest.Calls(
				looptest.Call("r1", "read_file", `{"path": "main.go"}`),
				looptest.Call("r2", "grep_search", `{"pattern": "TODO"}`),
				looptest.Call("r3", "read_file", `{"path": "../../etc/passwd"}`),
				looptest.Call("r4", "read_file", `{"path": "main.go", "bogus": 1}`),
			),
		},
		looptest.Turn{Reply: looptest.Calls(
			looptest.Call("e1", "edit_file", `{"path": "main.go", "edits": [{"old_string": "// TODO: greet", "new_string": "// greet"}]}`),
			looptest.Call("s1", "exec_shell", `{"command": "grep -c greet main.go && echo to stderr >&2"}`),
			looptest.Call("s2", "exec_shell", `{"command": "sudo rm -rf /"}`),
			looptest.Call("s3", "exec_shell", `{"command": "exit 7"}`),
		)},
		looptest.Turn{Reply: looptest.Calls(
			looptest.Call("p1", "apply_patch", mustJSON(t, map[string]string{"patch": patch})),
			looptest.Call("w1", "write_file", `{"path": "docs/notes.md", "content": "notes\n"}`),
			looptest.Call("l1", "list_directory", `{}`),
		)},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	rec := &looptest.Recorder{}
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: &builtin.CommandPolicy{}, OnEvent: rec.Record}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("tidy main.go")})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "done", res.FinalText)

	results := looptest.Results(res.Messages)
	kinds := map[string]toolloop.ErrorKind{}
	for id, r := range results {
		if r.Error != nil {
			kinds[id] = r.Error.Kind
		}
		assert.Equal(t, toolloop.SourceBuiltin, r.Meta.Source)
		assert.Equal(t, "workspace", r.Meta.SourceName)
	}
	assert.Equal(t, map[string]toolloop.ErrorKind{
		"r3": toolloop.KindDenied,      // outside the workspace
		"r4": toolloop.KindInvalidArgs, // the schema refuses unknown arguments
		"s2": toolloop.KindDenied,      // the command policy
		"s3": toolloop.KindExecutionFailed,
	}, kinds)
	assert.Equal(t, "package main\n\n// TODO: greet\nfunc main() {}\n", results["r1"].Text())
	assert.Equal(t, "main.go:3: // TODO: greet\n[1 matching line in 1 file]", results["r2"].Text())
	assert.Equal(t, "1\nto stderr\n[exit code 0]", results["s1"].Text())
	assert.Equal(t, 7, results["s3"].Meta.Extra["exit_code"])
	assert.Contains(t, results["l1"].Text(), "docs/notes.md (6 B)\n")
	got, err := os.ReadFile(filepath.Join(dir, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, "package main\n\n// greet the world\nfunc main() {}\n", string(got))

	var partial string
	for _, e := range rec.ForCall("s1") {
		if e.Type == toolloop.EventPartialResult {
			partial += e.Text
		}
	}
	assert.Equal(t, "1\nto stderr\n", partial, "shell output is streamed as partial results")
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestAnnotationsDriveRuleGuard(t *testing.T) {
	src, dir := newSource(t, map[string]string{"a.txt": "a\n"}, nil)
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(
			looptest.Call("1", "read_file", `{"path": "a.txt"}`),
			looptest.Call("2", "write_file", `{"path": "a.txt", "content": "b"}`),
			looptest.Call("3", "exec_shell", `{"command": "touch b.txt"}`),
			looptest.Call("4", "web_fetch", `{"url": "http://127.0.0.1:1/"}`),
		)},
		looptest.Turn{Reply: looptest.Text("ok")},
	)
	guard := &toolloop.RuleGuard{Rules: []toolloop.Rule{
		{Name: "read-only agent", Destructive: true, Decision: toolloop.Deny, Reason: "this agent may not change anything"},
	}}
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: guard}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	r := looptest.Results(res.Messages)
	assert.False(t, r["1"].IsError())
	assert.Equal(t, toolloop.KindDenied, r["2"].Error.Kind)
	assert.Equal(t, toolloop.KindDenied, r["3"].Error.Kind)
	assert.Equal(t, toolloop.KindDenied, r["4"].Error.Kind, "loopback is refused by web_fetch itself")
	assert.NoFileExists(t, filepath.Join(dir, "b.txt"))

	for _, spec := range reg.Specs(context.Background()) {
		a := spec.Annotations
		assert.NotEqual(t, a.ReadOnly, a.Destructive, "%s is either read-only or destructive", spec.Name)
		assert.Equal(t, a.Destructive, a.JudgmentRequired, spec.Name)
		assert.Equal(t, a.Destructive, spec.Exclusive, spec.Name)
		assert.NotEmpty(t, a.Title, spec.Name)
	}
}

func TestToolConformance(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello")
	}))
	defer server.Close()
	src, _ := newSource(t, map[string]string{"a.txt": "alpha\nbeta\n", "b.txt": "x\n"},
		&builtin.Options{Fetch: builtin.FetchOptions{AllowPrivateNetworks: true}})
	args := map[string]string{
		builtin.ReadFile:      `{"path": "a.txt", "offset": 2}`,
		builtin.WriteFile:     `{"path": "out/c.txt", "content": "c"}`,
		builtin.EditFile:      `{"path": "b.txt", "edits": [{"old_string": "x", "new_string": "y"}]}`,
		builtin.ApplyPatch:    `{"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n"}`,
		builtin.ListDirectory: `{"depth": 1}`,
		builtin.GrepSearch:    `{"pattern": "beta", "glob": "*.txt"}`,
		builtin.FileSearch:    `{"pattern": "**/*.txt"}`,
		builtin.ExecShell:     `{"command": "echo hi", "timeout_seconds": 5}`,
		builtin.WebFetch:      mustJSON(t, map[string]string{"url": server.URL}),
	}
	for _, name := range builtin.ToolNames() {
		t.Run(name, func(t *testing.T) {
			looptest.TestTool(t, src.Tool(name), json.RawMessage(args[name]))
		})
	}
}

func TestWorkspaceOptions(t *testing.T) {
	dir := t.TempDir()
	src, err := builtin.Workspace(dir, &builtin.Options{Name: "ro", Tools: builtin.ReadOnlyToolNames()})
	require.NoError(t, err)
	tools, err := src.Tools(context.Background())
	require.NoError(t, err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
		assert.True(t, tl.Spec().Annotations.ReadOnly)
	}
	assert.Equal(t, builtin.ReadOnlyToolNames(), names)
	assert.Equal(t, "ro", src.Name())
	assert.Nil(t, src.Tool(builtin.WriteFile))
	require.NoError(t, src.Close())
	require.NoError(t, src.Close(), "Close is idempotent")

	_, err = builtin.Workspace(dir, &builtin.Options{Tools: []string{"rm_rf"}})
	assert.Error(t, err)
	_, err = builtin.Workspace(dir, &builtin.Options{Tools: []string{"read_file", "read_file"}})
	assert.Error(t, err)
	_, err = builtin.Workspace(filepath.Join(dir, "missing"), nil)
	assert.Error(t, err)
}
