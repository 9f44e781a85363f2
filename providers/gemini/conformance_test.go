package gemini

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/providertest"
)

// TestConformance runs the conformance kit on the Gemini API, with
// recorded responses. Gemini 2.5 takes no structured output beside
// tools, which the kit checks is refused.
func TestConformance(t *testing.T) {
	dir := filepath.Join("testdata", "responses")
	reply := func(status int, name string) providertest.Reply {
		return providertest.Reply{Status: status, File: filepath.Join(dir, name)}
	}
	providertest.Run(t, providertest.Harness{
		Provider: "gemini",
		New: func(t *testing.T, s providertest.Setup) toolloop.Model {
			retries := s.Retries
			if retries == 0 {
				retries = -1
			}
			return modelAt(t, s.URL, s.Client, Config{MaxRetries: retries})
		},
		Replies: providertest.Recorded(dir, map[string][]string{
			"text":                {"plain.json", "cached_usage.json"},
			"tool_call":           {"tool_call.json"},
			"parallel_tool_calls": {"parallel_tool_calls.json", "gemini3_call.json"},
			"length":              {"max_tokens.json"},
			"refusal":             {"safety.json", "prompt_blocked.json"},
			"reasoning":           {"thoughts.json", "tool_call.json", "gemini3_call.json"},
			"output":              {"structured_answer.json"},
			"stream_text":         {"stream_text.sse"},
			"stream_tool_calls":   {"stream_parallel.sse"},
			"stream_reasoning":    {"stream_thoughts.sse"},
			"stream_length":       {"stream_length.sse"},
			"stream_refusal":      {"stream_safety.sse"},
			"stream_output":       {"stream_structured.sse"},
		}),
		Errors: []providertest.ErrorCase{
			{Name: "input too long", Reply: reply(400, "error_context_length.json"), Kind: providers.ErrContextLength, Type: "INVALID_ARGUMENT"},
			{Name: "quota", Reply: reply(429, "error_429.json"), Kind: providers.ErrRateLimit, Type: "RESOURCE_EXHAUSTED", Retried: true, Wait: 37 * time.Second},
			{Name: "overloaded", Reply: reply(503, "error_503.json"), Kind: providers.ErrOverloaded, Type: "UNAVAILABLE", Retried: true},
			{Name: "overloaded as an internal error", Reply: reply(500, "error_500_overloaded.json"), Kind: providers.ErrOverloaded, Type: "INTERNAL", Retried: true},
			{Name: "other internal error", Reply: reply(500, "error_500.json"), Type: "INTERNAL", Retried: true},
			{Name: "bad key is a 400", Reply: reply(400, "error_api_key.json"), Kind: providers.ErrAuth, Type: "INVALID_ARGUMENT"},
			{Name: "no identity", Reply: reply(403, "error_403.json"), Kind: providers.ErrAuth, Type: "PERMISSION_DENIED"},
			{Name: "other bad request", Reply: reply(400, "error_bad_request.json"), Type: "INVALID_ARGUMENT"},
			{Name: "overloaded in a stream", Reply: reply(0, "stream_error.sse"), Kind: providers.ErrOverloaded, Type: "UNAVAILABLE", Status: 503},
		},
		Answers: filepath.Join("testdata", "answers"),
		Golden:  filepath.Join("testdata", "requests") + "/",
		Update:  *update,
	})
}
