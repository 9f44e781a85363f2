package main

import (
	"bytes"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain serves the plugin when the host starts this test binary as
// one, as main does.
func TestMain(m *testing.M) {
	if os.Getenv(pluginEnv) == "1" {
		servePlugin()
		return
	}
	goleak.VerifyTestMain(m)
}

// TestHost runs the example: the plugin's tools run in its process and
// report as a built-in tool would, the guard denies one call, the crash
// fails its call alone, and the plugin comes back for the next one.
func TestHost(t *testing.T) {
	var out, log bytes.Buffer
	require.NoError(t, host(&out, &log))
	got := out.String()
	for _, want := range []string{
		"shadowed: pid from plugin:indexer, hidden by local:local\n",
		"  ✓ word_count text=\"plugins run in their own process\" → 6 words\n",
		"  ✓ reindex files=3 → reindexed 3 files\n",
		"  ✗ reindex files=50 → invalid_args: ",
		"  ✗ word_count text=\"rm -rf /\" → denied by policy: ",
		"  ✗ crash → execution_failed: plugin \"indexer\" stopped while crash ran",
		"  ✓ word_count text=\"back again\" → 2 words\n",
		"Done: the index is fresh.\n",
		"plugin closed\n",
	} {
		assert.Contains(t, got, want)
	}
	// Progress and partial output come as they are reported, at most one
	// event of each per 100ms.
	assert.Regexp(t, regexp.MustCompile(`(?m)^  … reindex → [1-3]/3 reindexing$`), got)
	assert.Regexp(t, regexp.MustCompile(`(?m)^  … reindex → │ indexed file[1-3]\.go$`), got)
	assert.Contains(t, log.String(), "msg=tool.execution_complete run_id=")
	assert.Contains(t, log.String(), "call_id=call_6 tool=word_count source=plugin source_name=indexer status=ok")
}
