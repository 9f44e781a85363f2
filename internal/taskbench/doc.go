// Package taskbench is the task benchmark of issue 38, "cost per task":
// whole coding-agent sessions of 50, 150 and 300 turns, run through each
// provider's real request builder (Chat Completions, Responses,
// Anthropic, Gemini) against in-process servers that record every
// request's bytes and answer in the provider's wire format, with the
// prompt cache simulated the way each provider's works. It reports per
// task, provider and context strategy the request bytes and estimated
// tokens, round trips, the stable prefix of the requests, the cache-hit
// share and the projected cost (BENCHMARKS.md at the repository's root
// has the tables, RESULTS.md how they are counted).
//
// Everything is seeded: a run is the same, byte for byte, every time.
//
// It is a module of its own, never published or imported, so that what
// the benchmark needs (every provider SDK at once) reaches no user's
// module graph and no other module's go.mod.
package taskbench
