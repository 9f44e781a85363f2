package plugin

import (
	"context"
	"io"
	"log"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// hclogFor adapts l to the hclog.Logger that go-plugin logs to: its own
// messages, and the lines the plugin process logs (a tool's panic and
// stack among them). A nil l gives a logger that discards everything, so
// the library never prints on its own.
func hclogFor(l *slog.Logger) hclog.Logger {
	if l == nil {
		return hclog.NewNullLogger()
	}
	return &slogAdapter{l: l}
}

// slogAdapter is an hclog.Logger writing to a *slog.Logger. Levels map
// one to one, trace going below debug.
type slogAdapter struct {
	l    *slog.Logger
	name string
	args []any
}

const levelTrace = slog.LevelDebug - 4

func slogLevel(lv hclog.Level) slog.Level {
	switch lv {
	case hclog.Trace:
		return levelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (a *slogAdapter) Log(lv hclog.Level, msg string, args ...any) {
	if lv == hclog.Off || lv == hclog.NoLevel {
		return
	}
	if a.name != "" {
		args = append([]any{"logger", a.name}, args...)
	}
	a.l.Log(context.Background(), slogLevel(lv), msg, args...)
}

func (a *slogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *slogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *slogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *slogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *slogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *slogAdapter) enabled(lv hclog.Level) bool {
	return a.l.Enabled(context.Background(), slogLevel(lv))
}

func (a *slogAdapter) IsTrace() bool { return a.enabled(hclog.Trace) }
func (a *slogAdapter) IsDebug() bool { return a.enabled(hclog.Debug) }
func (a *slogAdapter) IsInfo() bool  { return a.enabled(hclog.Info) }
func (a *slogAdapter) IsWarn() bool  { return a.enabled(hclog.Warn) }
func (a *slogAdapter) IsError() bool { return a.enabled(hclog.Error) }

func (a *slogAdapter) ImpliedArgs() []any { return a.args }

func (a *slogAdapter) With(args ...any) hclog.Logger {
	return &slogAdapter{l: a.l.With(args...), name: a.name, args: append(append([]any(nil), a.args...), args...)}
}

func (a *slogAdapter) Name() string { return a.name }

func (a *slogAdapter) Named(name string) hclog.Logger {
	if a.name != "" {
		name = a.name + "." + name
	}
	return a.ResetNamed(name)
}

func (a *slogAdapter) ResetNamed(name string) hclog.Logger {
	return &slogAdapter{l: a.l, name: name, args: a.args}
}

// SetLevel does nothing: the slog handler decides what it records.
func (a *slogAdapter) SetLevel(hclog.Level) {}

// GetLevel reports the lowest level the handler records, so that go-plugin
// does not drop a plugin's log lines the handler wants.
func (a *slogAdapter) GetLevel() hclog.Level {
	for _, lv := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if a.enabled(lv) {
			return lv
		}
	}
	return hclog.Off
}

func (a *slogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

func (a *slogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return slogWriter{a}
}

type slogWriter struct{ a *slogAdapter }

func (w slogWriter) Write(p []byte) (int, error) {
	w.a.Info(string(p))
	return len(p), nil
}
