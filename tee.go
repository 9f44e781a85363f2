package toolloop

import "log/slog"

// Tee returns an OnEvent function that passes each event to every sink in
// order: an event log, telemetry and a UI, say. A sink that panics is
// skipped for that event (and the panic logged to logger, which may be
// nil); the sinks after it still get the event.
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
