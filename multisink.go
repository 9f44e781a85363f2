package toolloop

import (
	"fmt"
	"log/slog"
)

// MultiSink returns an OnEvent function that passes each event to every
// sink, in order: an event log, telemetry and a terminal printer, say.
// A sink that panics misses only that event: the sinks after it still
// get it, and then the returned function panics with a message naming
// the sink and its panic, which [AgentLoop] recovers and reports to its
// Logger. Nil sinks are skipped.
func MultiSink(sinks ...func(Event)) func(Event) {
	return func(e Event) {
		var first any
		failed := -1
		for i, s := range sinks {
			if s == nil {
				continue
			}
			if p := deliver(s, e); p != nil && failed < 0 {
				first, failed = p, i
			}
		}
		if failed >= 0 {
			panic(fmt.Sprintf("toolloop: event sink %d of %d panicked (the other sinks got the event): %v", failed+1, len(sinks), first))
		}
	}
}

// deliver passes e to s, returning what s panicked with.
func deliver(s func(Event), e Event) (p any) {
	defer func() { p = recover() }()
	s(e)
	return nil
}

// Tee returns an OnEvent function that passes each event to every sink in
// order. Its logger does not log events: it receives only the panics of
// sinks (a sink that panics is skipped for that event, and the sinks
// after it still get it); it may be nil.
//
// Deprecated: use [MultiSink], which reports a sink's panic to the loop's
// Logger instead of taking one of its own.
func Tee(logger *slog.Logger, sinks ...func(Event)) func(Event) {
	if logger == nil {
		logger = discardLogger
	}
	return func(e Event) {
		for i, s := range sinks {
			func() {
				defer func() {
					if p := recover(); p != nil {
						logger.Error("toolloop: an event sink panicked; event dropped for it", "sink", i, "event", e.Type, "panic", p)
					}
				}()
				s(e)
			}()
		}
	}
}
