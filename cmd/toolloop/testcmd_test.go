package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// recordRun runs script1 with -yes and returns the workspace and the log.
func recordRun(t *testing.T) (ws, log string) {
	t.Helper()
	te := newTestEnv(t, "")
	writeFile(t, te.dir, "a.txt", "hello\n")
	script := writeFile(t, t.TempDir(), "s.json", script1)
	log = filepath.Join(t.TempDir(), "run.jsonl")
	require.Equal(t, exitOK, te.run(t, "run", "-yes", "-script", script, "-log", log, "go"), te.errOut.String())
	return te.dir, log
}

func TestTestCommand(t *testing.T) {
	_, log := recordRun(t)
	out := filepath.Join(t.TempDir(), "testdata", "run.json")
	te := newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "test", log, "-o", out, "-stub", "read_file"), te.errOut.String())

	// The transcript is what looptest.Load reads, complete and valid.
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var msgs []toolloop.Message
	require.NoError(t, json.Unmarshal(b, &msgs))
	require.NoError(t, looptest.Validate(msgs))
	assert.Equal(t, "All done here.", msgs[len(msgs)-1].Text())
	assert.NotContains(t, string(b), "duration_ns", "durations vary from run to run")

	// The stubs hold the recorded result of each stubbed call.
	var stubs map[string]map[string]*toolloop.ToolResult
	b, err = os.ReadFile(strings.TrimSuffix(out, ".json") + ".stubs.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &stubs))
	assert.Equal(t, "hello\n", stubs["read_file"]["c1"].Text())
	assert.NotContains(t, stubs, "write_file")

	snippet := te.out.String()
	assert.Contains(t, snippet, "func TestReplayRun(t *testing.T)")
	assert.Contains(t, snippet, "replayStubs(t, ")
}

func TestTestCommandBadInput(t *testing.T) {
	_, log := recordRun(t)
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(raw), "\n")
	dir := t.TempDir()
	// Cut after the first model response: its calls have no results.
	var cut strings.Builder
	for _, l := range lines {
		cut.WriteString(l)
		if strings.Contains(l, `"type":"model.response"`) {
			break
		}
	}
	for _, tc := range []struct {
		name, content string
		args          []string
		want          string
	}{
		{"missing", "", nil, "no such log"},
		{"empty", "\n", nil, "holds no events"},
		{"corrupt line", "not json\n" + string(raw), nil, "corrupt: line 1"},
		{"unfinished", cut.String(), nil, "does not hold a whole run"},
		{"unknown stub", string(raw), []string{"-stub", "nope"}, "the run has no call to nope"},
		{"bad -o", string(raw), []string{"-o", "x.txt"}, "must end in .json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".jsonl")
			if tc.content != "" {
				require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o600))
			}
			te := newTestEnv(t, "")
			args := append([]string{"test", p, "-o", filepath.Join(t.TempDir(), "x.json")}, tc.args...)
			assert.Equal(t, exitUsage, te.run(t, args...))
			assert.Contains(t, te.errOut.String(), tc.want)
		})
	}

	// A torn last line is reported and skipped.
	torn := filepath.Join(dir, "torn.jsonl")
	require.NoError(t, os.WriteFile(torn, append(raw, `{"type":"tool.exec`...), 0o600))
	te := newTestEnv(t, "")
	assert.Equal(t, exitOK, te.run(t, "test", torn, "-o", filepath.Join(t.TempDir(), "x.json")), te.errOut.String())
	assert.Contains(t, te.errOut.String(), "ends in a torn line")
}

// TestQuickstartReplay records the quickstart's run with its -log flag,
// turns the log into a transcript with toolloop test, and runs the test
// toolloop test printed, in a module of its own, against a copy of the
// quickstart's tools: it passes, and when a tool's behaviour changes it
// fails with a diff.
func TestQuickstartReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests two programs")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	tmp := t.TempDir()
	log := filepath.Join(tmp, "quickstart.jsonl")
	run := exec.Command("go", "run", ".", "-log", log)
	run.Dir = filepath.Join(root, "examples", "quickstart")
	out, err := run.CombinedOutput()
	require.NoError(t, err, "%s", out)

	mod := filepath.Join(tmp, "replaycheck")
	te := newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "test", log, "-o", filepath.Join(mod, "testdata", "quickstart.json")), te.errOut.String())
	snippet := strings.ReplaceAll(te.out.String(), filepath.Join(mod, "testdata"), "testdata")

	tools, err := os.ReadFile("testdata/quickstart_tools.go.txt")
	require.NoError(t, err)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	writeFile(t, mod, "go.mod", "module replaycheck\n\ngo 1.26.0\n\nrequire github.com/toolloop/toolloop v0.0.0-00010101000000-000000000000\n\n"+
		"replace github.com/toolloop/toolloop => "+root+"\n")
	writeFile(t, mod, "go.sum", string(sum))
	writeFile(t, mod, "tools.go", string(tools))
	writeFile(t, mod, "replay_test.go", "package replaycheck\n\nimport (\n\t\"testing\"\n\n\t\"github.com/toolloop/toolloop\"\n\t\"github.com/toolloop/toolloop/looptest\"\n)\n\n"+snippet)

	gotest := func(changed string) (string, error) {
		return goTest(mod, changed)
	}
	out2, err := gotest("0")
	require.NoError(t, err, "the replay of the quickstart's own run fails:\n%s", out2)

	out2, err = gotest("1")
	require.Error(t, err, "a changed tool must fail the replay:\n%s", out2)
	assert.Contains(t, out2, "-want +got", "the failure is a diff")
	assert.Contains(t, out2, "OLLBACK: `KUBECTL ROLLOUT UNDO", "the diff shows the changed output")

	// With read_note stubbed, its recorded results answer: the change in
	// its behaviour no longer matters.
	stubbed := filepath.Join(tmp, "stubbed")
	te = newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "test", log, "-o", filepath.Join(stubbed, "testdata", "quickstart.json"), "-stub", "read_note"), te.errOut.String())
	snippet = strings.ReplaceAll(te.out.String(), filepath.Join(stubbed, "testdata"), "testdata")
	for _, name := range []string{"go.mod", "go.sum", "tools.go"} {
		b, err := os.ReadFile(filepath.Join(mod, name))
		require.NoError(t, err)
		writeFile(t, stubbed, name, string(b))
	}
	writeFile(t, stubbed, "replay_test.go", "package replaycheck\n\nimport (\n\t\"context\"\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n\n"+
		"\t\"github.com/toolloop/toolloop\"\n\t\"github.com/toolloop/toolloop/looptest\"\n)\n\n"+snippet)
	out2, err = goTest(stubbed, "1")
	require.NoError(t, err, "the stubbed replay fails:\n%s", out2)
}

// goTest runs go test in a module of its own, offline.
func goTest(dir, changed string) (string, error) {
	cmd := exec.Command("go", "test", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "QUICKSTART_CHANGED="+changed)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
