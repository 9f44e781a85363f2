// Package providers holds what the provider packages share: the errors a
// provider call can end with.
//
// The providers themselves live in subpackages, each a [toolloop.Model]
// and [toolloop.Streamer] built on the provider's official SDK:
//
//   - providers/openai: OpenAI Chat Completions, and any server that speaks
//     it (set Config.BaseURL).
//   - providers/anthropic: the Anthropic Messages API.
//
// Pointing an agent at a real model takes three lines:
//
//	model := openai.New(openai.Config{Model: "gpt-4.1"}) // key from OPENAI_API_KEY
//	loop := &toolloop.AgentLoop{Model: model, Tools: reg}
//	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("hi")})
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
package providers
