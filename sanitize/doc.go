// Package sanitize makes tool output safer to show a model: it marks
// output as untrusted data, and it redacts secrets.
//
// Both are [toolloop.PostToolUseHook]s, as methods of plain structs whose
// zero values are ready to use:
//
//	var redact sanitize.Redactor
//	var envelope sanitize.Envelope
//	loop.Hooks.PostToolUse = append(loop.Hooks.PostToolUse, redact.PostToolUse, envelope.PostToolUse)
//
// [Envelope] wraps each result in delimiters that say the content is data
// from a tool, not instructions, so that a web page or a file that says
// "ignore previous instructions" is read as what it is. The delimiters
// carry a random suffix the output cannot guess, and anything inside the
// output that a model could read as a delimiter, however it is disguised
// (escapes, look-alike letters and brackets from the Unicode confusables,
// NFKD and the Unicode names, invisible characters, Unicode spaces and
// dashes), is neutralized first, so the output cannot end the
// envelope early. Resource URIs and MIME types are neutralized too.
//
// [Redactor] replaces secrets with [REDACTED:<kind>]: the token formats of
// some sixty services, private keys, JWTs, passwords in URLs, credentials
// in headers, and values assigned to names that say they are secret, in
// .env files, YAML, JSON, commands and code (see [DefaultRules]). As a
// post-tool-use hook it records how many of each kind it replaced in the
// result's Meta.Extra under [ExtraKey]; run it before the envelope, and
// before any hook that logs the output. A secret can reach a log by more
// ways than a tool's output, so the same Redactor also covers the others:
//
//   - [Redactor.RedactEvent] redacts every field of an event that can
//     hold text (the prompt, the model's response and its tool calls,
//     arguments, results, progress, errors) on its way to an event log or
//     telemetry (an eventlog.Writer that redacts with it holds back the
//     tail of each stream of deltas, so that a secret the stream cuts in
//     two is redacted whole);
//   - [Redactor.LogHandler] redacts the records of a log/slog logger.
//
// Redaction is one pass over the text to find the rules' keywords, and
// bounded work at each keyword: about 180 MB/s on ordinary text, and
// linear on any text (see BenchmarkRedact10MB and BenchmarkRedactHostile).
package sanitize
