package openai

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/providertest"
)

// kitConfig is the config of a model the conformance kit talks to.
func kitConfig(s providertest.Setup) Config {
	retries := s.Retries
	if retries == 0 {
		retries = -1
	}
	return Config{BaseURL: s.URL, HTTPClient: s.Client, APIKey: "test-key", Model: "gpt-4.1", MaxRetries: retries}
}

// errorReply is a recorded error response with its status.
func errorReply(status int, path ...string) providertest.Reply {
	return providertest.Reply{Status: status, File: filepath.Join(path...)}
}

// retryAfter1ms is reply asking for a retry after a millisecond.
func retryAfter1ms(reply providertest.Reply) providertest.Reply {
	reply.Header = map[string]string{"Retry-After-Ms": "1"}
	return reply
}

// TestConformance runs the conformance kit on Chat Completions, with
// the recorded responses of OpenAI and of the servers that speak its API
// (DeepSeek, Gemini's endpoint, xAI, vLLM, Ollama).
func TestConformance(t *testing.T) {
	dir := filepath.Join("testdata", "responses")
	providertest.Run(t, providertest.Harness{
		Provider: "openai",
		New:      func(t *testing.T, s providertest.Setup) toolloop.Model { return mustNew(t, kitConfig(s)) },
		Replies: providertest.Recorded(dir, map[string][]string{
			"text":                {"plain.json", "cached_usage.json"},
			"tool_call":           {"tool_call.json"},
			"parallel_tool_calls": {"parallel_tool_calls.json"},
			"length":              {"max_tokens.json"},
			"refusal":             {"refusal.json", "content_filter.json"},
			"reasoning":           {"deepseek_tool_call.json", "gemini_tool_call.json", "xai_reasoning.json", "vllm_reasoning.json"},
			"output":              {"structured_answer.json"},
			"stream_text":         {"stream_text.sse", "stream_done_text.sse"},
			"stream_tool_calls":   {"stream_tool_args.sse", "stream_done_tool.sse"},
			"stream_reasoning":    {"deepseek_turn1.sse"},
			"stream_length":       {"stream_length.sse"},
			"stream_refusal":      {"stream_refusal.sse"},
			"stream_output":       {"stream_structured.sse"},
		}),
		Errors: []providertest.ErrorCase{
			{Name: "context length", Reply: errorReply(400, dir, "error_context_length.json"), Kind: providers.ErrContextLength, Type: "context_length_exceeded"},
			{Name: "context length from vLLM", Reply: errorReply(400, dir, "error_context_length_vllm.json"), Kind: providers.ErrContextLength, Type: "BadRequestError"},
			{Name: "context length in vLLM's older envelope", Reply: errorReply(400, dir, "error_context_length_vllm_legacy.json"), Kind: providers.ErrContextLength, Type: "BadRequestError"},
			{Name: "request over the rate limit", Reply: errorReply(429, dir, "error_429_too_large.json"), Kind: providers.ErrContextLength, Type: "rate_limit_exceeded"},
			{Name: "rate limit", Reply: retryAfter1ms(errorReply(429, dir, "error_429.json")), Kind: providers.ErrRateLimit, Type: "rate_limit_exceeded", Retried: true, Wait: time.Millisecond},
			{Name: "overloaded", Reply: retryAfter1ms(errorReply(503, dir, "error_503.json")), Kind: providers.ErrOverloaded, Retried: true, Wait: time.Millisecond},
			{Name: "bad key", Reply: errorReply(401, dir, "error_auth.json"), Kind: providers.ErrAuth, Type: "invalid_api_key"},
			{Name: "Ollama's envelope", Reply: errorReply(http.StatusNotFound, dir, "error_ollama.json"), Message: `model "llama3.9" not found, try pulling it first`},
			{Name: "error event", Reply: providertest.Reply{File: filepath.Join(dir, "stream_error.sse")}, Type: "server_error"},
		},
		Answers: filepath.Join("testdata", "answers"),
		Golden:  filepath.Join("testdata", "requests") + "/",
		Update:  *update,
	})
}

// TestResponsesConformance runs the conformance kit on the Responses API.
func TestResponsesConformance(t *testing.T) {
	dir := filepath.Join("testdata", "responses_api")
	providertest.Run(t, providertest.Harness{
		Provider: "openai",
		New:      func(t *testing.T, s providertest.Setup) toolloop.Model { return mustNewResponses(t, kitConfig(s)) },
		Replies: providertest.Recorded(dir, map[string][]string{
			"text":                {"text.json", "cached_usage.json"},
			"tool_call":           {"tool_call.json"},
			"parallel_tool_calls": {"parallel_tool_calls.json"},
			"length":              {"incomplete_max_tokens.json"},
			"refusal":             {"refusal.json", "incomplete_content_filter.json"},
			"reasoning":           {"reasoning_tool_call.json"},
			"output":              {"structured_answer.json"},
			"stream_text":         {"stream_text.sse"},
			"stream_tool_calls":   {"stream_compat.sse"},
			"stream_reasoning":    {"stream_reasoning_tool.sse"},
			"stream_length":       {"stream_incomplete.sse"},
			"stream_refusal":      {"stream_refusal.sse"},
			"stream_output":       {"stream_structured.sse"},
		}),
		Errors: []providertest.ErrorCase{
			{Name: "context length", Reply: errorReply(400, dir, "error_context_length.json"), Kind: providers.ErrContextLength, Type: "context_length_exceeded"},
			{Name: "request over the rate limit", Reply: errorReply(429, "testdata", "responses", "error_429_too_large.json"), Kind: providers.ErrContextLength, Type: "rate_limit_exceeded"},
			{Name: "rate limit", Reply: retryAfter1ms(errorReply(429, dir, "error_429.json")), Kind: providers.ErrRateLimit, Type: "rate_limit_exceeded", Retried: true, Wait: time.Millisecond},
			{Name: "overloaded", Reply: retryAfter1ms(errorReply(503, "testdata", "responses", "error_503.json")), Kind: providers.ErrOverloaded, Retried: true, Wait: time.Millisecond},
			{Name: "bad key", Reply: errorReply(401, dir, "error_auth.json"), Kind: providers.ErrAuth, Type: "invalid_api_key"},
			{Name: "failed response", Reply: providertest.Reply{File: filepath.Join(dir, "failed.json")}, Type: "server_error"},
			{Name: "error event", Reply: providertest.Reply{File: filepath.Join(dir, "stream_error.sse")}, Type: "server_error"},
			{Name: "nested error event", Reply: providertest.Reply{File: filepath.Join(dir, "stream_error_nested.sse")}, Kind: providers.ErrContextLength, Type: "context_length_exceeded"},
			{Name: "failed event", Reply: providertest.Reply{File: filepath.Join(dir, "stream_failed.sse")}, Kind: providers.ErrRateLimit, Type: "rate_limit_exceeded"},
		},
		Answers: filepath.Join(dir, "answers"),
		Golden:  filepath.Join("testdata", "requests", "responses_"),
		Update:  *update,
	})
}
