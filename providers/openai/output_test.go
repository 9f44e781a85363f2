package openai

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// looseFormat has an optional property and allows others: strict mode
// cannot take it, and it has no name. (The conformance kit sends a format
// strict mode takes as it is.)
var looseFormat = toolloop.OutputFormat{
	Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"properties":{"city":{"type":"string"},"note":{"type":"string","maxLength":80}},"required":["city"]}`),
}

// TestLooseOutputFormat checks, in the golden request bodies of both
// APIs, how a schema strict mode cannot take is sent.
func TestLooseOutputFormat(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "output_format_loose", Response: "structured_answer.json"},
		replay.Step{Golden: "responses_output_format_loose", Response: rapi("structured_answer.json")},
	)
	for _, m := range []toolloop.Model{modelFor(t, srv, Config{}), responsesFor(t, srv, Config{})} {
		resp, err := m.Generate(context.Background(), replay.OutputRequest(looseFormat, false))
		require.NoError(t, err)
		assert.Equal(t, toolloop.StopEnd, resp.StopReason)
	}
}

func TestNativeOutput(t *testing.T) {
	tests := []struct {
		model, baseURL string
		off            bool
		want           bool
	}{
		{"gpt-4.1", "", false, true},
		{"gpt-5", "", false, true},
		{"o3", "", false, true},
		{"gpt-4o", "", false, true},
		{"gpt-4o-mini", "", false, true},
		{"openai/gpt-4o", "https://openrouter.ai/api/v1", false, true},
		{"qwen3", "http://localhost:11434/v1", false, true},
		{"gpt-4.1", "", true, false},
		{"gpt-4o-2024-05-13", "", false, false},
		{"gpt-4", "", false, false},
		{"gpt-4-turbo", "", false, false},
		{"gpt-3.5-turbo", "", false, false},
		{"o1-mini", "", false, false},
		{"deepseek-chat", "https://api.deepseek.com", false, false},
		{"deepseek-chat", "https://api.deepseek.com/v1", false, false},
	}
	for _, tt := range tests {
		cfg := Config{Model: tt.model, BaseURL: tt.baseURL, NoNativeOutput: tt.off, APIKey: "unused"}
		for _, withTools := range []bool{false, true} {
			assert.Equal(t, tt.want, mustNew(t, cfg).NativeOutput(withTools), "chat %s at %q, off %v, tools %v", tt.model, tt.baseURL, tt.off, withTools)
			assert.Equal(t, tt.want, mustNewResponses(t, cfg).NativeOutput(withTools), "responses %s at %q, off %v, tools %v", tt.model, tt.baseURL, tt.off, withTools)
		}
	}
	var _ toolloop.NativeOutput = (*Model)(nil)
	var _ toolloop.NativeOutput = (*ResponsesModel)(nil)
}

// TestOutputFailsBeforeSending checks both APIs, both ways of calling,
// for what the conformance kit cannot set up: a model or a config without
// structured outputs (ErrConfig), and names the APIs refuse. The server
// has no steps, so any request fails the test.
func TestOutputFailsBeforeSending(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		format toolloop.OutputFormat
		config bool
	}{
		{"model without structured outputs", Config{Model: "gpt-3.5-turbo"}, looseFormat, true},
		{"native output off", Config{NoNativeOutput: true}, looseFormat, true},
		{"name with a space", Config{}, toolloop.OutputFormat{Name: "weather report", Schema: looseFormat.Schema}, false},
		{"name too long", Config{}, toolloop.OutputFormat{Name: string(make([]byte, 65)), Schema: looseFormat.Schema}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t)
			req := replay.OutputRequest(tt.format, false)
			chat, responses := modelFor(t, srv, tt.cfg), responsesFor(t, srv, tt.cfg)
			for what, err := range map[string]error{
				"chat Generate":      second(chat.Generate(context.Background(), req)),
				"chat Stream":        replay.Collect(chat, req).Err,
				"responses Generate": second(responses.Generate(context.Background(), req)),
				"responses Stream":   replay.Collect(responses, req).Err,
			} {
				require.Error(t, err, what)
				assert.Equal(t, tt.config, errors.Is(err, ErrConfig), "%s: %v", what, err)
			}
		})
	}
}

// second returns the second of two values.
func second[A, B any](_ A, b B) B { return b }

// TestNoOutputFormatSendsNone checks that a request without Output
// leaves the format to the server.
func TestNoOutputFormatSendsNone(t *testing.T) {
	p, err := mustNew(t, Config{APIKey: "unused"}).params(replay.WeatherRequest())
	require.NoError(t, err)
	assert.NotContains(t, replay.Body(t, p), "response_format")
	rp, err := mustNewResponses(t, Config{APIKey: "unused"}).params(replay.WeatherRequest())
	require.NoError(t, err)
	assert.NotContains(t, replay.Body(t, rp), "text")
}
