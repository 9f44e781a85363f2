package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLongRun runs the example's default session: results are cleared,
// older turns compacted, and the tool-call budget ends the run through a
// wrap-up turn whose answer is printed.
func TestLongRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), nil, &out))
	s := out.String()
	assert.Regexp(t, regexp.MustCompile(`(?m)^  ~ context: clear_tool_results \(threshold\), ~\d+ → ~\d+ tokens, \d+ results cleared$`), s)
	assert.Regexp(t, regexp.MustCompile(`(?m)^  ~ context: compact \(threshold\), ~\d+ → ~\d+ tokens`), s)
	assert.Contains(t, s, "limit: toolloop: the run reached its tool-call limit: 150 calls of 150")
	assert.Contains(t, s, "  ~ context: wrap_up (tool-call limit: 150 calls of 150)")
	assert.NotContains(t, s, "read_file", "the calls' lines are left out")
	assert.Contains(t, s, "turns 151, tool calls 150,")
	assert.Contains(t, s, "assistant: I reviewed 150 of 200 files")
	assert.Contains(t, s, "ended on its budget: tool_calls")
}

// TestLongRunNoBudget: with no budget the session reads every file and
// ends with the model's own answer.
func TestLongRunNoBudget(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-files", "400", "-max-calls", "0", "-max-cost", "0"}, &out))
	s := out.String()
	assert.Contains(t, s, "assistant: I reviewed 400 of 400 files")
	assert.NotContains(t, s, "limit:")
	assert.GreaterOrEqual(t, strings.Count(s, "context: compact "), 2, "a summary is summarized again")
}
