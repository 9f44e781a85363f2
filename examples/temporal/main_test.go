package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hasServer reports whether the example will find a server or a CLI.
func hasServer() bool {
	if os.Getenv("TEMPORAL_ADDRESS") != "" || os.Getenv("TOOLLOOP_TEMPORAL_CLI") != "" {
		return true
	}
	_, err := exec.LookPath("temporal")
	return err == nil
}

// TestRun runs the example: the whole release with a server, or the
// one-line explanation without one.
func TestRun(t *testing.T) {
	tests := []struct {
		flags []string
		want  []string
	}{
		{want: []string{
			"[you] approved\n",
			"  → read_changelog [call_1] {}\n  → run_tests [call_2] {}\n",
			"tool run_tests [call_2]: ok\n  5 packages passed\n",
			"tool tag_release [call_3]: ok\n  tagged v1.2.0\n",
			"== stop after 3 turns, 3 tool calls, 1190 input + 98 output tokens\n",
		}},
		{flags: []string{"-deny"}, want: []string{
			"[you] denied: not this week\n",
			"tool tag_release [call_3]: error (denied)\n  denied by the approver: not this week\n",
		}},
	}
	for _, tt := range tests {
		t.Run(fmtFlags(tt.flags), func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(context.Background(), tt.flags, &out))
			if !hasServer() {
				assert.Contains(t, out.String(), "no Temporal server")
				return
			}
			for _, w := range tt.want {
				assert.Contains(t, out.String(), w)
			}
		})
	}
}

func fmtFlags(flags []string) string {
	if len(flags) == 0 {
		return "approve"
	}
	return flags[0]
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	assert.Error(t, run(context.Background(), []string{"-nope"}, &out))
}
