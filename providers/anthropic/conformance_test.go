package anthropic

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/providertest"
)

// TestConformance runs the conformance kit on the Messages API, with
// recorded responses.
func TestConformance(t *testing.T) {
	dir := filepath.Join("testdata", "responses")
	reply := func(status int, name string) providertest.Reply {
		return providertest.Reply{Status: status, File: filepath.Join(dir, name)}
	}
	retried := func(r providertest.Reply) providertest.Reply {
		r.Header = map[string]string{"Retry-After-Ms": "1"}
		return r
	}
	providertest.Run(t, providertest.Harness{
		Provider: "anthropic",
		New: func(t *testing.T, s providertest.Setup) toolloop.Model {
			retries := s.Retries
			if retries == 0 {
				retries = -1
			}
			return mustNew(t, Config{BaseURL: s.URL, HTTPClient: s.Client, APIKey: "test-key", Model: "claude-sonnet-4-5", MaxRetries: retries})
		},
		Replies: providertest.Recorded(dir, map[string][]string{
			"text":                {"plain.json", "cached_usage.json"},
			"tool_call":           {"tool_call.json"},
			"parallel_tool_calls": {"parallel_tool_calls.json"},
			"length":              {"max_tokens.json"},
			"refusal":             {"refusal.json"},
			"reasoning":           {"thinking_tool_use.json", "redacted_thinking.json", "interleaved_tool_calls.json"},
			"output":              {"structured_answer.json"},
			"stream_text":         {"stream_text.sse"},
			"stream_tool_calls":   {"stream_tool_args.sse"},
			"stream_reasoning":    {"stream_thinking.sse"},
			"stream_length":       {"stream_length.sse", "stream_cut_tool.sse"},
			"stream_refusal":      {"stream_refusal.sse"},
			"stream_output":       {"stream_structured.sse"},
		}),
		Errors: []providertest.ErrorCase{
			{Name: "prompt too long", Reply: reply(400, "error_context_length.json"), Kind: providers.ErrContextLength, Type: "invalid_request_error"},
			{Name: "context limit with max_tokens", Reply: reply(400, "error_context_limit.json"), Kind: providers.ErrContextLength, Type: "invalid_request_error"},
			{Name: "request too large", Reply: reply(413, "error_413.json"), Kind: providers.ErrContextLength, Type: "request_too_large"},
			{Name: "rate limit", Reply: retried(reply(429, "error_429.json")), Kind: providers.ErrRateLimit, Type: "rate_limit_error", Retried: true, Wait: time.Millisecond},
			{Name: "overloaded", Reply: retried(reply(529, "error_529.json")), Kind: providers.ErrOverloaded, Type: "overloaded_error", Retried: true, Wait: time.Millisecond},
			{Name: "bad key", Reply: reply(401, "error_auth.json"), Kind: providers.ErrAuth, Type: "authentication_error"},
			{Name: "other bad request", Reply: reply(400, "error_bad_request.json"), Type: "invalid_request_error"},
			{Name: "overloaded in a stream", Reply: reply(0, "stream_error.sse"), Kind: providers.ErrOverloaded, Type: "overloaded_error"},
		},
		Answers: filepath.Join("testdata", "answers"),
		Golden:  filepath.Join("testdata", "requests") + "/",
		Update:  *update,
	})
}
