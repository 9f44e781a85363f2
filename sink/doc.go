// Package sink holds ready-made consumers of a run's events and
// transcript: a printer for terminals, a log/slog adapter, and a
// transcript formatter.
//
// [NewPrinter] and [NewSlog] return a func(toolloop.Event): set one as
// AgentLoop.OnEvent, combine several with toolloop.MultiSink, or call one
// with each event of a run's stream (AgentLoop.RunStream). Both are safe for concurrent use,
// keep almost no state, and bound what they write per event.
//
//	loop := &toolloop.AgentLoop{
//		Model: model,
//		Tools: tools,
//		OnEvent: toolloop.MultiSink(
//			sink.NewPrinter(os.Stdout, nil),
//			sink.NewSlog(logger, nil),
//		),
//	}
//
// The printer shows the model's text as it streams and one line per tool
// call with its status and the first line of its result; it colours its
// output only on a terminal and never when NO_COLOR is set. The slog sink
// writes one record per event with indexable attributes (run_id, tool,
// status, error_kind, duration_ms, tokens...) and levels by severity, and
// logs no arguments, tool output or model text unless its options say so;
// give it a sanitize.Redactor's RedactEvent when they do:
//
//	var redactor sanitize.Redactor
//	logSink := sink.NewSlog(logger, &sink.SlogOptions{Arguments: true, Redact: redactor.RedactEvent})
//
// [FormatTranscript] writes a transcript (RunResult.Messages, a replayed
// event log, a golden file) for a person to read.
//
// Everything these sinks print is cleaned of terminal control sequences:
// tool output and model text are untrusted.
package sink
