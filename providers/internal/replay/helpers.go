package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// WeatherTool is the tool of WeatherRequest.
var WeatherTool = toolloop.ToolSpec{
	Name:        "get_weather",
	Description: "Get the current weather for a city.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"],"additionalProperties":false}`),
}

// WeatherRequest is the request of most provider tests, and of the
// conformance kit: a system prompt, one question and one tool.
func WeatherRequest() *toolloop.Request {
	return &toolloop.Request{
		Messages: []toolloop.Message{
			toolloop.SystemMessage("You are a weather assistant."),
			toolloop.UserMessage("What's the weather in Paris?"),
		},
		Tools: []toolloop.ToolSpec{WeatherTool},
	}
}

// OutputRequest is WeatherRequest asking for format, with its tool or
// none.
func OutputRequest(format toolloop.OutputFormat, tools bool) *toolloop.Request {
	req := WeatherRequest()
	if !tools {
		req.Tools = nil
	}
	req.Output = &format
	return req
}

// JSON returns v as JSON, failing the test if it cannot be encoded.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Streamed is what a stream yielded: its response, if it ended with one,
// its text and reasoning deltas, and its error.
type Streamed struct {
	Response        *toolloop.Response
	Text, Reasoning []string
	Err             error
}

// Collect drains a stream of m for req.
func Collect(m toolloop.Streamer, req *toolloop.Request) Streamed {
	var s Streamed
	for ch, err := range m.Stream(context.Background(), req) {
		if err != nil {
			s.Err = err
			return s
		}
		if ch.Text != "" {
			s.Text = append(s.Text, ch.Text)
		}
		if ch.Reasoning != "" {
			s.Reasoning = append(s.Reasoning, ch.Reasoning)
		}
		if ch.Response != nil {
			s.Response = ch.Response
		}
	}
	return s
}

// WeatherTools returns the tools of the agent loop tests: deterministic
// and offline. get_weather knows Paris and Tokyo; to_fahrenheit converts.
func WeatherTools() *toolloop.ToolRegistry {
	type city struct {
		City string `json:"city" jsonschema:"description=City name"`
	}
	type celsius struct {
		Celsius float64 `json:"celsius"`
	}
	var reg toolloop.ToolRegistry
	reg.MustRegister(
		toolloop.NewTool("get_weather", "Get the current weather for a city.",
			func(_ context.Context, in city) (any, error) {
				return map[string]map[string]any{
					"Paris": {"temp_c": 18, "sky": "light rain"},
					"Tokyo": {"temp_c": 24, "sky": "clear"},
				}[in.City], nil
			}),
		toolloop.NewTool("to_fahrenheit", "Convert a temperature from Celsius to Fahrenheit.",
			func(_ context.Context, in celsius) (any, error) {
				return fmt.Sprintf("%.1f°F", in.Celsius*9/5+32), nil
			}),
	)
	return &reg
}

// AssertGoldenTranscript compares msgs with the golden transcript at path
// (see looptest.AssertTranscript), or rewrites the file when update is
// set, without result durations.
func AssertGoldenTranscript(t *testing.T, path string, msgs []toolloop.Message, update bool) {
	t.Helper()
	if !update {
		looptest.AssertTranscript(t, looptest.Load(t, path), msgs)
		return
	}
	clean := make([]toolloop.Message, len(msgs))
	for i, m := range msgs {
		if m.Result != nil {
			r := *m.Result
			r.Meta.Duration = 0
			m.Result = &r
		}
		clean[i] = m
	}
	b, err := json.MarshalIndent(clean, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.WriteFile(path, append(b, '\n'), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// LogRecorder is a slog.Handler that keeps the records it is given.
type LogRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

// Enabled implements slog.Handler: every level is kept.
func (h *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (h *LogRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}

// WithAttrs implements slog.Handler; the attributes are dropped.
func (h *LogRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup implements slog.Handler; the group is dropped.
func (h *LogRecorder) WithGroup(string) slog.Handler { return h }

// Attrs returns the attributes of every record at level, one map per
// record.
func (h *LogRecorder) Attrs(level slog.Level) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.records {
		if r.Level != level {
			continue
		}
		m := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.String()
			return true
		})
		out = append(out, m)
	}
	return out
}
