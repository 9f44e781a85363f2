// Package providers holds what the provider packages share: the errors a
// provider call can end with.
//
// The providers themselves live in subpackages, each a [toolloop.Model]
// and [toolloop.Streamer] built on the provider's official SDK:
//
//   - providers/openai: OpenAI Chat Completions, and any server that speaks
//     it (set Config.BaseURL); and OpenAI's Responses API (NewResponses).
//   - providers/anthropic: the Anthropic Messages API.
//   - providers/gemini: the Gemini API (and Vertex AI), on google.golang.org/genai.
//
// Each is a module of its own, so a program pays only for the SDK it uses.
// Each runs providers/providertest, the conformance kit, which a provider
// of your own can run too.
//
// Reasoning models must get their reasoning back on the next turn:
// Anthropic's signed thinking blocks, DeepSeek's reasoning_content,
// Gemini's thought signatures, the Responses API's encrypted reasoning
// items. Every provider keeps them in the transcript as reasoning blocks
// ([toolloop.ContentReasoning]) and sends them back in their place, to
// the provider (and, for OpenAI-compatible servers, the server) that
// wrote them; a transcript moved to another provider loses them, and
// nothing else. Usage counts reasoning tokens inside OutputTokens, and
// reports them apart in ReasoningTokens.
//
// Pointing an agent at a real model takes a few lines:
//
//	model, err := openai.New(openai.Config{}) // DefaultModel, key from OPENAI_API_KEY
//	if err != nil {
//		return err // errors.Is(err, providers.ErrConfig): no key, say
//	}
//	loop := &toolloop.AgentLoop{Model: model, Tools: reg}
//	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("hi")})
//
// Each constructor (openai.New, openai.NewResponses, anthropic.New,
// gemini.New) checks its config before any request: a missing API key
// where the vendor's own API needs one, or a setting the API would refuse
// on every request, is its error at once, matching [ErrConfig] (and
// [ErrAuth] for the key), never a network error on the first call.
//
// The SDKs do the transport: they retry rate limits, overloads and server
// errors with backoff, honouring Retry-After. What reaches the caller after
// the retries is a *[Error], which matches one of the sentinels below with
// errors.Is when its cause is known, and unwraps to the SDK's own error
// (*openai.Error, *anthropic.Error) for errors.As. The loop wraps model
// errors with %w, so the same checks work on the error of AgentLoop.Run:
//
//	if errors.Is(err, providers.ErrContextLength) {
//		// compact the transcript and try again
//	}
//
// An error response names the request it answered, in its message and in
// Error.Method and Error.URL (the URL without user info, query or
// fragment; no credential the request carried appears anywhere in the
// error), with an excerpt of a body the provider's message could not be
// read from, and a hint in Error.Hint when the URL looks wrong:
//
//	openai: POST "http://localhost:11434/chat/completions": 404 Not Found: 404 page not found; did you mean BaseURL "http://localhost:11434/v1"?
package providers
