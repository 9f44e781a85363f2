package eventlog_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/sanitize"
)

// TestRedactOption: with Options.Redact, no secret of any event reaches
// the log, durable or transient, and the caller's event is not changed.
func TestRedactOption(t *testing.T) {
	const secret = "ghp_a1B2c3a1B2c3a1B2c3a1B2c3a1B2c3a1B2c3"
	var r sanitize.Redactor
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
	start := toolloop.Event{Type: toolloop.EventRunStart, RunID: "r",
		Messages: []toolloop.Message{toolloop.UserMessage("use token " + secret)}}
	w.Record(start)
	w.Record(toolloop.Event{Type: toolloop.EventModelDelta, RunID: "r", Text: "the token is " + secret})
	w.Record(toolloop.Event{Type: toolloop.EventRunEnd, RunID: "r", Error: "auth failed for " + secret})
	require.NoError(t, w.Close())
	assert.NotContains(t, buf.String(), secret)
	assert.Contains(t, buf.String(), "[REDACTED:")
	assert.Contains(t, start.Messages[0].Text(), secret, "the caller's event is untouched")

	rp, err := eventlog.Read(&buf)
	require.NoError(t, err)
	require.Len(t, rp.Transcript(), 1)
	assert.NotContains(t, rp.Transcript()[0].Text(), secret)
}
