package sanitize_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/sanitize"
)

type secretValuer struct{}

func (secretValuer) LogValue() slog.Value { return slog.StringValue("token=" + fakeGitHub) }

type config struct {
	Host     string
	password string
}

func TestLogHandler(t *testing.T) {
	var r sanitize.Redactor
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var h slog.Handler = slog.NewTextHandler(&buf, nil)
			if format == "json" {
				h = slog.NewJSONHandler(&buf, nil)
			}
			log := slog.New(r.LogHandler(h)).With("header", "Authorization: Bearer "+fakeBearer).WithGroup("call")
			log.Error("tool failed with "+fakeOpenAI,
				"err", errors.New("git push: "+fakeGitHub+" rejected"),
				"args", []byte(`{"token":"`+fakeGitHub+`"}`),
				"valuer", secretValuer{},
				"config", config{Host: "db", password: "DB_PASSWORD=hunter22x"},
				slog.Group("env", "AWS", fakeAWS),
				"count", 3)
			out := buf.String()
			for _, secret := range []string{fakeOpenAI, fakeGitHub, fakeBearer, fakeAWS, "hunter22x"} {
				assert.NotContains(t, out, secret)
			}
			assert.Contains(t, out, "[REDACTED:api_key]")
			assert.Contains(t, out, "count")
		})
	}
}

// TestLogHandlerConformance runs the standard library's tests for a
// Handler on a LogHandler: redacting keeps every other behaviour.
func TestLogHandlerConformance(t *testing.T) {
	var r sanitize.Redactor
	var buf bytes.Buffer
	h := r.LogHandler(slog.NewJSONHandler(&buf, nil))
	results := func() []map[string]any {
		var ms []map[string]any
		for _, line := range bytes.Split(buf.Bytes(), []byte{'\n'}) {
			if len(line) == 0 {
				continue
			}
			m, err := decodeJSON(line)
			require.NoError(t, err)
			ms = append(ms, m)
		}
		return ms
	}
	require.NoError(t, slogtest.TestHandler(h, results))
}

func TestLogHandlerEnabled(t *testing.T) {
	var r sanitize.Redactor
	h := r.LogHandler(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	assert.False(t, h.Enabled(context.Background(), slog.LevelInfo))
	assert.True(t, h.Enabled(context.Background(), slog.LevelError))
}
