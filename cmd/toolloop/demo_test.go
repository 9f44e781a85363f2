package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// TestDemoScript runs the command on the demo script it ships, as the
// help says to: the model lists the demo folder, reads its task list and
// answers, every call succeeds, and the folder gets no log of its own.
func TestDemoScript(t *testing.T) {
	demo, err := filepath.Abs("demo")
	require.NoError(t, err)
	before := listDir(t, demo)
	log := filepath.Join(t.TempDir(), "demo.jsonl")
	te := newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "run", "-C", demo, "-script", filepath.Join(demo, "script.json"), "-log", log, "What is left to do?"),
		te.errOut.String())
	assert.Contains(t, te.out.String(), "✓ list_directory path=.")
	assert.Contains(t, te.out.String(), "✓ read_file path=tasks.md")
	assert.Contains(t, te.out.String(), "Three are left")

	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	assert.True(t, rp.Ended)
	msgs := rp.Transcript()
	require.NoError(t, looptest.Validate(msgs))
	res := looptest.Results(msgs)
	require.Len(t, res, 2)
	for id, r := range res {
		assert.Equal(t, toolloop.StatusOK, r.Status, "%s: %s", id, r.Text())
	}
	assert.Contains(t, res["call_1"].Text(), "tasks.md")
	assert.Contains(t, res["call_2"].Text(), "Cache forecasts for ten minutes")
	assert.Equal(t, before, listDir(t, demo), "the demo folder is left as it was")
}

// TestHelpNamesProviders: the command's help and run's and resume's -h
// list every provider, script and its demo included, and the demo they
// name is where they say.
func TestHelpNamesProviders(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"run", "-h"}, {"resume", "-h"}} {
		te := newTestEnv(t, "")
		require.Equal(t, exitOK, te.run(t, args...))
		help := te.out.String() + te.errOut.String()
		for _, p := range []string{"openai", "anthropic", "gemini", "openai-compatible", "script"} {
			assert.Regexp(t, `(?m)^  `+p+` +\S`, help, "%v: provider %s", args, p)
		}
		assert.Contains(t, help, "cmd/toolloop/demo", args)
		assert.Contains(t, help, `-script "$demo/script.json"`, args)
	}
	assert.FileExists(t, filepath.Join("demo", "script.json"))
	assert.FileExists(t, filepath.Join("demo", "tasks.md"))

	te := newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "resume", "-h"))
	for _, s := range []string{"-approve ID", "-deny ID=REASON", "asked about at a terminal"} {
		assert.Contains(t, te.errOut.String(), s)
	}
}

// listDir lists the names under dir, recursively.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	require.NoError(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			names = append(names, strings.TrimPrefix(p, dir))
		}
		return err
	}))
	return names
}
