package taskbench

import (
	"encoding/json"
	"fmt"
	"net/http"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/anthropic"
	"github.com/toolloop/toolloop/providers/gemini"
	"github.com/toolloop/toolloop/providers/openai"
)

// A Provider is one provider's request builder, the wire format of its
// answers and the way its prompt cache works.
type Provider struct {
	// Name names the provider in benchmark names.
	Name string
	// Model is the model the requests name and whose prices (from
	// toolloop.LookupModel) the cost uses: each provider's DefaultModel.
	Model string
	// newModel makes the provider's Model, talking to url through client.
	newModel func(url string, client *http.Client) (toolloop.Model, error)
	// order is the order of the request's fields in the provider's prompt.
	order []string
	cache cachePolicy
	// encode writes the answer resp, the n-th of the server, with usage u.
	encode func(resp *toolloop.Response, u toolloop.Usage, model string, n int) ([]byte, error)
}

// Price returns the model's prices from the core's model table.
func (p *Provider) Price() toolloop.Price {
	info, ok := toolloop.LookupModel(p.Model)
	if !ok || info.Price == nil {
		panic("taskbench: no price for " + p.Model)
	}
	return *info.Price
}

// implicit is OpenAI's and Gemini's cache: see implicitCache.
var implicit = implicitCache{min: 1024, block: 128}

// Providers are the request builders the benchmark runs through.
var Providers = []*Provider{
	{
		Name:  "openai-chat",
		Model: openai.DefaultModel,
		newModel: func(url string, client *http.Client) (toolloop.Model, error) {
			return openai.New(openai.Config{Model: openai.DefaultModel, APIKey: "test-key", BaseURL: url, HTTPClient: client, MaxRetries: -1})
		},
		order:  []string{"tools", "messages"},
		cache:  implicit,
		encode: encodeChat,
	},
	{
		Name:  "openai-responses",
		Model: openai.DefaultModel,
		newModel: func(url string, client *http.Client) (toolloop.Model, error) {
			return openai.NewResponses(openai.Config{Model: openai.DefaultModel, APIKey: "test-key", BaseURL: url, HTTPClient: client, MaxRetries: -1})
		},
		order:  []string{"tools", "instructions", "input"},
		cache:  implicit,
		encode: encodeResponses,
	},
	{
		Name:  "anthropic",
		Model: anthropic.DefaultModel,
		newModel: func(url string, client *http.Client) (toolloop.Model, error) {
			// The zero PromptCache: breakpoints on the tools, the
			// system prompt and the last two turns.
			return anthropic.New(anthropic.Config{Model: anthropic.DefaultModel, APIKey: "test-key", BaseURL: url, HTTPClient: client, MaxRetries: -1})
		},
		order:  []string{"tools", "system", "messages"},
		cache:  breakpointCache{min: 1024},
		encode: encodeAnthropic,
	},
	{
		Name:  "gemini",
		Model: gemini.DefaultModel,
		newModel: func(url string, client *http.Client) (toolloop.Model, error) {
			return gemini.New(gemini.Config{Model: gemini.DefaultModel, APIKey: "test-key", BaseURL: url, Backend: genai.BackendGeminiAPI, HTTPClient: client, MaxRetries: -1})
		},
		order:  []string{"systemInstruction", "tools", "contents"},
		cache:  implicit,
		encode: encodeGemini,
	},
}

// outputTokens estimates the output tokens of resp: its message's JSON.
func outputTokens(resp *toolloop.Response) int64 {
	b, _ := json.Marshal(resp.Message)
	return max(1, estTokens(len(b)))
}

// callArgs returns a call's arguments as JSON to embed, {} if empty.
func callArgs(c toolloop.ToolCall) json.RawMessage {
	if len(c.Arguments) == 0 {
		return json.RawMessage(`{}`)
	}
	return c.Arguments
}

func encodeChat(resp *toolloop.Response, u toolloop.Usage, model string, n int) ([]byte, error) {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if text := resp.Message.Text(); text != "" {
		msg["content"] = text
	}
	finish := "stop"
	if len(resp.Message.ToolCalls) > 0 {
		finish = "tool_calls"
		var calls []any
		for _, c := range resp.Message.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(callArgs(c))}})
		}
		msg["tool_calls"] = calls
	}
	return json.Marshal(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1764000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheReadTokens},
		},
	})
}

func encodeResponses(resp *toolloop.Response, u toolloop.Usage, model string, n int) ([]byte, error) {
	var output []any
	if text := resp.Message.Text(); text != "" {
		output = append(output, map[string]any{"id": fmt.Sprintf("msg_%d", n), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	for k, c := range resp.Message.ToolCalls {
		output = append(output, map[string]any{"id": fmt.Sprintf("fc_%d_%d", n, k), "type": "function_call", "status": "completed",
			"call_id": c.ID, "name": c.Name, "arguments": string(callArgs(c))})
	}
	return json.Marshal(map[string]any{
		"id": fmt.Sprintf("resp_%d", n), "object": "response", "created_at": 1764000000, "status": "completed", "model": model,
		"output": output,
		"usage": map[string]any{
			"input_tokens": u.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": u.CacheReadTokens},
			"output_tokens": u.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": u.InputTokens + u.OutputTokens,
		},
	})
}

func encodeAnthropic(resp *toolloop.Response, u toolloop.Usage, model string, n int) ([]byte, error) {
	var content []any
	if text := resp.Message.Text(); text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	stop := "end_turn"
	for _, c := range resp.Message.ToolCalls {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": callArgs(c)})
	}
	return json.Marshal(map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{
			// Anthropic's input_tokens leaves out the cache's reads and
			// writes.
			"input_tokens":                u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens,
			"cache_creation_input_tokens": u.CacheWriteTokens,
			"cache_read_input_tokens":     u.CacheReadTokens,
			"output_tokens":               u.OutputTokens,
		},
	})
}

func encodeGemini(resp *toolloop.Response, u toolloop.Usage, model string, n int) ([]byte, error) {
	var parts []any
	if text := resp.Message.Text(); text != "" {
		parts = append(parts, map[string]any{"text": text})
	}
	for _, c := range resp.Message.ToolCalls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": callArgs(c)}})
	}
	return json.Marshal(map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{
			"promptTokenCount": u.InputTokens, "cachedContentTokenCount": u.CacheReadTokens,
			"candidatesTokenCount": u.OutputTokens, "totalTokenCount": u.InputTokens + u.OutputTokens,
		},
		"modelVersion": model, "responseId": fmt.Sprintf("resp-%d", n),
	})
}
