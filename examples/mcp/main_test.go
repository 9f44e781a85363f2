package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain serves the notes MCP server when the example starts this test
// binary with "serve", as main does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		if err := serve(); err != nil {
			os.Exit(1)
		}
		return
	}
	goleak.VerifyTestMain(m)
}

// TestRun runs the example: tools from the workspace and from the MCP
// server side by side, the server's progress and isError result on the
// printer, and each call's provenance and the server's stderr in the log.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Release notes\n\nWe ship on Fridays.\n"), 0o644))
	var out, log bytes.Buffer
	require.NoError(t, run(t.Context(), dir, &out, &log))
	got := out.String()
	for _, want := range []string{
		"tools the model sees:\n  list_directory\n  notes__count_words\n  notes__search_notes\n  read_file\n",
		"  ✗ notes__search_notes query=\"deploy freeze\" → execution_failed: no note mentions \"deploy freeze\"",
		"  ✓ read_file path=README.md → # Release notes",
		"→ {\"words\":13}\n",
		"We ship on Fridays.",
	} {
		assert.Contains(t, got, want)
	}
	// Progress comes as it is reported (at most one event per 100ms);
	// the server's last notification may come after its result.
	assert.Regexp(t, regexp.MustCompile(`(?m)^  … notes__count_words → [1-4]/4 line [1-4] of 4$`), got)
	assert.NotContains(t, got, "notes server: ready", "the server's stderr goes to the log")
	for _, want := range []string{
		`msg="mcp server stderr" mcp_server=notes line="notes server: ready"`,
		"call_id=c5 tool=notes__count_words source=mcp source_name=notes status=ok",
		"call_id=c3 tool=read_file source=builtin source_name=workspace status=ok",
	} {
		assert.Contains(t, log.String(), want)
	}
}
