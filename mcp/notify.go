//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the protocol of 2026-07-28 but work for at least a year, and servers use them; the issue asks for them.

package mcp

import (
	"context"
	"encoding/json"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// MaxLogBytes bounds a server log message's data as reported; longer data
// is cut in the middle.
const MaxLogBytes = 8 << 10

var levels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "notice": slog.LevelInfo,
	"warning": slog.LevelWarn, "error": slog.LevelError, "critical": slog.LevelError,
	"alert": slog.LevelError, "emergency": slog.LevelError,
}

func validLevel(l string) bool { _, ok := levels[l]; return ok }

// onLog reports a server's log message, bounded and redacted, to
// Options.Logger and Options.OnEvent.
func (s *Source) onLog(_ context.Context, req *sdk.LoggingMessageRequest) {
	p := req.Params
	if p == nil {
		return
	}
	data, err := json.Marshal(p.Data)
	if err != nil {
		return
	}
	text := string(data)
	var str string
	isString := json.Unmarshal(data, &str) == nil
	if isString {
		text = str // as most are: logged without quotes
	}
	text, _ = s.cl.redact.Redact(toolloop.TruncateText(text, MaxLogBytes))
	logger := toolloop.TruncateText(p.Logger, 256)
	lvl, ok := levels[string(p.Level)]
	if !ok {
		lvl = slog.LevelInfo
	}
	s.logger.Log(context.Background(), lvl, "mcp server log", "level", string(p.Level), "logger", logger, "data", text)
	if s.opts.OnEvent == nil {
		return
	}
	// Data other than a string stays JSON, unless it was cut or redacted.
	rawData := json.RawMessage(data)
	if isString || text != string(data) {
		rawData, _ = json.Marshal(text)
	}
	b, _ := json.Marshal(struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger,omitempty"`
		Data   json.RawMessage `json:"data"`
	}{toolloop.TruncateText(string(p.Level), 32), logger, rawData})
	s.emit(toolloop.Event{Type: EventLog, Text: string(b)})
}

// onResourceUpdated reports an update of a subscribed resource.
func (s *Source) onResourceUpdated(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	if req.Params == nil || req.Params.URI == "" || len(req.Params.URI) > maxURI {
		return
	}
	s.emit(toolloop.Event{Type: EventResourceUpdated, Text: req.Params.URI})
}
