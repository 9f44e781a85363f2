// Package telemetry turns toolloop events into OpenTelemetry spans and
// metrics that follow the OpenTelemetry semantic conventions for
// generative AI (semconv v1.41.0, the latest in go.opentelemetry.io/otel
// with gen_ai attributes).
//
// An [Observer] is an AgentLoop OnEvent sink:
//
//	obs, err := telemetry.New(tp, mp, telemetry.Options{AgentName: "coder", Provider: "anthropic"})
//	if err != nil { ... }
//	loop := &toolloop.AgentLoop{Model: m, Tools: reg, OnEvent: obs.Record}
//	loop.Hooks.Middleware = append(loop.Hooks.Middleware, obs.Middleware)
//
// Each run (and each resumption of a paused run) is an "invoke_agent" span.
// Its children are a "chat <model>" span per model turn and an
// "execute_tool <tool>" span per call, with gen_ai.operation.name,
// gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type and, when the call
// fails, error.type set to the result's error kind. The calls of one turn
// overlap in time, so their spans are siblings under the run span, not a
// chain. Guard verdicts, approvals, hook effects and progress are events on
// the tool span. Span times are the events' times.
//
// Metrics: gen_ai.client.operation.duration for model turns and runs,
// gen_ai.client.token.usage, and toolloop.tool.duration and
// toolloop.tool.calls for tool calls, each with the tool's name and error
// type.
//
// Spans carry no free text unless Options.RecordContent is set: no tool
// arguments or output, no progress message, no error message (a failed
// span's status description is its error type). With RecordContent, what
// is recorded first goes through Options.Redact, by default
// [sanitize.Redactor.RedactEvent], so that secrets in arguments, output
// and errors are replaced with [REDACTED:<kind>].
//
// Record has no context, so run spans are roots unless you pass a parent
// with Within. Middleware puts a call's span in the context its tool runs
// with, so spans the tool starts (an HTTP request, a database query) are
// children of it. The root toolloop package does not import OpenTelemetry.
package telemetry
