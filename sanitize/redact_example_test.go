package sanitize_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
)

// An event on its way to a log: its arguments stay valid JSON, and a
// value under a key that names a secret is replaced whole.
func ExampleRedactor_RedactEvent() {
	var r sanitize.Redactor
	e := toolloop.Event{
		Type:      toolloop.EventStart,
		Tool:      "http_get",
		Arguments: json.RawMessage(`{"url":"https://api.example.com/v1/me","headers":{"X-Api-Key":"k9Qm2vX7pL4sT8wZ3nB6"}}`),
	}
	// In a loop: loop.OnEvent = func(e toolloop.Event) { w.Record(r.RedactEvent(e)) }
	fmt.Println(string(r.RedactEvent(e).Arguments))
	// Output:
	// {"url":"https://api.example.com/v1/me","headers":{"X-Api-Key":"[REDACTED:credential]"}}
}

// A logger whose records are redacted before they are written.
func ExampleRedactor_LogHandler() {
	var r sanitize.Redactor
	plain := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // for a stable output
			}
			return a
		},
	})
	logger := slog.New(r.LogHandler(plain))
	logger.Warn("push failed", "remote", "https://deploy:hunter2hunter2@git.example.com/app.git")
	// Output:
	// level=WARN msg="push failed" remote=https://deploy:[REDACTED:url_password]@git.example.com/app.git
}
