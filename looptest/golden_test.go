package looptest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/looptest"
)

// Fatalf records the failure; unlike testing.T's, it returns.
func (f *fakeTB) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

func TestAssertGoldenCreatesItsDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "nested", "run.json")
	want := transcript()
	require.True(t, looptest.AssertGolden(t, path, want, true))
	_, err := os.Stat(path)
	require.NoError(t, err, "the file and its directories were created")
	assert.True(t, looptest.AssertGolden(t, path, want, false), "the file holds what was written")
	assert.Empty(t, looptest.DiffTranscripts(want, looptest.Load(t, path)))

	ft := &fakeTB{}
	changed := transcript()
	changed[3].Content[0].Text = "bye"
	assert.False(t, looptest.AssertGolden(ft, path, changed, false))
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "-want +got")
}

func TestAssertGoldenMissingFileSaysToUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "run.json")
	ft := &fakeTB{}
	assert.False(t, looptest.AssertGolden(ft, path, transcript(), false))
	require.Len(t, ft.errors, 1)
	// This test binary has an -update flag (weather_test.go), so the
	// message names it.
	assert.Contains(t, ft.errors[0], path)
	assert.Contains(t, ft.errors[0], "go test -update")
	_, err := os.Stat(filepath.Dir(path))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing is written without update")
}

func TestAssertGoldenUnwritable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "testdata")
	require.NoError(t, os.WriteFile(blocker, []byte("a file, not a directory"), 0o644))
	ft := &fakeTB{}
	assert.False(t, looptest.AssertGolden(ft, filepath.Join(blocker, "run.json"), transcript(), true))
	require.Len(t, ft.errors, 1, "a file that cannot be written fails the test")
}

// TestLoadCompactsArguments checks that a transcript written by
// AssertGolden (indented) plays back with the arguments the run had.
func TestLoadCompactsArguments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	msgs := transcript()
	msgs[1].ToolCalls = append(msgs[1].ToolCalls, looptest.Call("c2", "echo", `{"text":`))
	require.True(t, looptest.AssertGolden(t, path, msgs, true))
	got := looptest.Load(t, path)
	assert.Equal(t, `{"text":"hi"}`, string(got[1].ToolCalls[0].Arguments))
	assert.Equal(t, `{"text":`, string(got[1].ToolCalls[1].Arguments), "invalid JSON comes back as it was")
}
