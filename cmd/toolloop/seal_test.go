package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/eventlog"
)

// TestResumeRefusesEditedLog: a paused run's log is sealed as it is
// written; a log edited after the pause (the waiting write's argument
// pointed elsewhere, as a shell command of the agent could) is refused by
// resume with a clear message, and nothing runs. The untouched log
// resumes, and the seal is used up once the resumption is logged.
func TestResumeRefusesEditedLog(t *testing.T) {
	ws, log, script := pausedRun(t)
	seal, err := os.ReadFile(sealPath(log))
	require.NoError(t, err, "the paused run is sealed beside its log")
	assert.True(t, strings.HasPrefix(string(seal), "v1:"))
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(filepath.Join(configHome, "seal.key"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the key is the user's alone")
	}

	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	edited := strings.ReplaceAll(string(raw), `"path":"b.txt"`, `"path":"evil.txt"`)
	require.NotEqual(t, string(raw), edited)
	require.NoError(t, os.WriteFile(log, []byte(edited), 0o600))
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	require.NotNil(t, rp.Paused, "the edited log still replays as paused")

	te := newTestEnv(t, "")
	te.dir = ws
	assert.Equal(t, exitFailed, te.run(t, "resume", "-yes", "-script", script, log))
	assert.Contains(t, te.errOut.String(), "refusing to resume the run paused in "+log+": the log was changed after the run paused")
	assert.NoFileExists(t, filepath.Join(ws, "evil.txt"))
	assert.NoFileExists(t, filepath.Join(ws, "b.txt"))
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, edited, string(after), "nothing was logged")

	// Put back, the log resumes; the seal goes once the log says so.
	require.NoError(t, os.WriteFile(log, raw, 0o600))
	te = newTestEnv(t, "")
	te.dir = ws
	require.Equal(t, exitOK, te.run(t, "resume", "-yes", "-script", script, log), te.errOut.String())
	assert.FileExists(t, filepath.Join(ws, "b.txt"))
	assert.NoFileExists(t, sealPath(log), "the seal is used up")
}

// TestResumeRefusesUnsealedLog: a paused run with no seal beside its log
// (removed, or paused by a toolloop before sealing) is refused, saying
// so, and so is one sealed with another user's key.
func TestResumeRefusesUnsealedLog(t *testing.T) {
	ws, log, script := pausedRun(t)
	require.NoError(t, os.Remove(sealPath(log)))
	te := newTestEnv(t, "")
	te.dir = ws
	assert.Equal(t, exitFailed, te.run(t, "resume", "-yes", "-script", script, log))
	assert.Contains(t, te.errOut.String(), "it has no seal ("+sealPath(log)+" is missing")
	assert.NoFileExists(t, filepath.Join(ws, "b.txt"))

	ws, log, script = pausedRun(t)
	te = newTestEnv(t, "")
	te.dir = ws
	te.vars["TOOLLOOP_CONFIG_DIR"] = t.TempDir() // another user: another key
	assert.Equal(t, exitFailed, te.run(t, "resume", "-yes", "-script", script, log))
	assert.Contains(t, te.errOut.String(), "or another user's toolloop paused it")
	assert.NoFileExists(t, filepath.Join(ws, "b.txt"))
}

// TestSealKey: the key is made once, 32 bytes only the user may read, and
// a key others may read is refused.
func TestSealKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cfg")
	getenv := func(k string) string { return map[string]string{"TOOLLOOP_CONFIG_DIR": dir}[k] }
	k1, err := sealKey(getenv)
	require.NoError(t, err)
	assert.Len(t, k1, sealKeySize)
	k2, err := sealKey(getenv)
	require.NoError(t, err)
	assert.Equal(t, k1, k2, "made once")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left")
	if runtime.GOOS == "windows" {
		return
	}
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoError(t, os.Chmod(filepath.Join(dir, "seal.key"), 0o644))
	_, err = sealKey(getenv)
	require.ErrorContains(t, err, "may be read by others")
}
