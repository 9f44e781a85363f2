package sanitize

import (
	"context"
	"fmt"
	"log/slog"
)

// LogHandler returns a [slog.Handler] that redacts each record's message
// and attributes, groups and attributes added by With included, before
// passing it to next. Values of kinds other than strings (errors, byte
// slices, structs) are redacted as the text and the JSON they log as, and
// replaced by the redacted text when they held a secret.
//
//	logger := slog.New(redactor.LogHandler(slog.NewJSONHandler(os.Stderr, nil)))
//
// Give such a logger to the loop, the tool registry, providers and your
// own tools: the panics, errors and arguments they log may hold secrets.
func (r *Redactor) LogHandler(next slog.Handler) slog.Handler {
	return &logHandler{r: r, next: next}
}

type logHandler struct {
	r    *Redactor
	next slog.Handler
}

func (h *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *logHandler) Handle(ctx context.Context, rec slog.Record) error {
	var discard map[string]int
	out := slog.NewRecord(rec.Time, rec.Level, h.r.redact(rec.Message, &discard), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = h.attr(a)
	}
	return &logHandler{r: h.r, next: h.next.WithAttrs(out)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{r: h.r, next: h.next.WithGroup(name)}
}

func (h *logHandler) attr(a slog.Attr) slog.Attr {
	var discard map[string]int
	w := walker{r: h.r, counts: &discard}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if w.str(&s) {
			v = slog.StringValue(s)
		}
	case slog.KindGroup:
		group := v.Group()
		out := make([]slog.Attr, len(group))
		for i, g := range group {
			out[i] = h.attr(g)
		}
		v = slog.GroupValue(out...)
	case slog.KindAny:
		x := v.Any()
		// A text handler logs the value as fmt does, a JSON handler as
		// its JSON: redact both.
		text := fmt.Sprintf("%+v", x)
		switch {
		case w.str(&text):
			v = slog.StringValue(text)
		case w.any(&x):
			v = slog.AnyValue(x)
		}
	}
	a.Value = v
	return a
}
