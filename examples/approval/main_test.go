package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestPauseAndResume runs the example twice, as two invocations would:
// the first pauses and saves its state, the second resumes from the file.
func TestPauseAndResume(t *testing.T) {
	tests := []struct {
		flag      string
		wantNotes []string
		wantText  string
	}{
		{flag: "-approve", wantNotes: []string{"todo.txt"}, wantText: "  ✓ delete_note name=old.txt (approved) → deleted old.txt\nDeleted old.txt; todo.txt is still there.\n"},
		{flag: "-deny", wantNotes: []string{"old.txt", "todo.txt"}, wantText: "  ✗ delete_note name=old.txt → denied by the approver: the user said no\nYou declined, so I left old.txt alone.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			require.NoError(t, run(context.Background(), []string{"-dir", dir}, &out))
			assert.Contains(t, out.String(), "  ✓ list_notes → old.txt, todo.txt\n")
			assert.Contains(t, out.String(), "  ? delete_note name=old.txt → needs approval: it deletes a file [confirm-destructive]\n")
			assert.Contains(t, out.String(), "  ? paused: 1 call await approval (delete_note)\n")
			assert.NotContains(t, out.String(), "deleted old.txt", "nothing deleted before approval")
			assert.FileExists(t, filepath.Join(dir, stateFile))
			assert.FileExists(t, filepath.Join(dir, "notes", "old.txt"), "nothing deleted before approval")

			out.Reset()
			require.NoError(t, run(context.Background(), []string{"-dir", dir, tt.flag}, &out))
			assert.Contains(t, out.String(), tt.wantText)
			var names []string
			entries, err := os.ReadDir(filepath.Join(dir, "notes"))
			require.NoError(t, err)
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.Equal(t, tt.wantNotes, names)
			assert.NoFileExists(t, filepath.Join(dir, stateFile), "the state is consumed")

			err = run(context.Background(), []string{"-dir", dir, tt.flag}, &out)
			assert.Error(t, err, "nothing left to resume")
		})
	}
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	assert.Error(t, run(context.Background(), []string{"-dir", t.TempDir(), "-approve", "-deny"}, &out))
	assert.Error(t, run(context.Background(), []string{"-nope"}, &out))
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
