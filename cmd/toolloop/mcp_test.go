package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

// TestToolsMCP lists the tools of a real MCP server over stdio (the
// example's server, examples/mcp serve) with the workspace's, and calls one.
func TestToolsMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example MCP server")
	}
	server := filepath.Join(t.TempDir(), "mcp-example")
	build := exec.Command("go", "build", "-o", server, "./mcp")
	build.Dir = "../../examples"
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	cfgJSON, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"command": server, "args": []string{"serve"}}}})
	require.NoError(t, err)
	cfg := writeFile(t, t.TempDir(), "mcp.json", string(cfgJSON))

	te := newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "tools", "-mcp", cfg, "-json"), te.errOut.String())
	var got struct {
		Tools []toolJSON `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(te.out.Bytes(), &got))
	sources := map[string]string{}
	for _, ti := range got.Tools {
		sources[ti.Name] = string(ti.Source) + "/" + ti.SourceName
	}
	assert.Equal(t, "builtin/workspace", sources["read_file"])
	var mcpTools []string
	for name, src := range sources {
		if src == string(toolloop.SourceMCP)+"/notes" {
			mcpTools = append(mcpTools, name)
		}
	}
	assert.NotEmpty(t, mcpTools, "the server's tools are listed with their source: %v", sources)

	// One call through the pipeline to the server.
	te = newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "call", "-mcp", cfg, "-yes", "notes__count_words", `{"text":"one two three"}`), te.errOut.String())
	assert.Contains(t, te.out.String(), `"words":3`)

	te = newTestEnv(t, "")
	assert.Equal(t, exitUsage, te.run(t, "call", "-mcp", cfg, "notes__nope", "{}"))
	assert.Contains(t, te.errOut.String(), "unknown tool")
}
