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
// (escapes, look-alike letters and brackets, invisible characters, Unicode
// spaces and dashes), is neutralized first, so the output cannot end the
// envelope early. Resource URIs and MIME types are neutralized too.
//
// [Redactor] replaces common secret shapes (private keys, provider API
// keys, cloud and chat tokens, JWTs, bearer tokens, passwords in URLs and
// credential assignments) with [REDACTED:<kind>], and records how many of
// each kind it replaced in the result's Meta.Extra under [ExtraKey]. Run it
// before the envelope, and before any hook that logs the output. It can
// also redact events on their way to a log, with RedactEvent.
package sanitize
