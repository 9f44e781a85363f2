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

// reportFormat is the output format of the structured answer tests;
// strict mode can take its schema as it is.
var reportFormat = toolloop.OutputFormat{
	Name:        "weather_report",
	Description: "The weather in a city, for a report.",
	Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"},"summary":{"type":"string"}},` +
		`"required":["city","temp_c","summary"],"additionalProperties":false}`),
}

// looseFormat has an optional property and allows others: strict mode
// cannot take it, and it has no name.
var looseFormat = toolloop.OutputFormat{
	Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"properties":{"city":{"type":"string"},"note":{"type":"string","maxLength":80}},"required":["city"]}`),
}

// structuredAnswer is the text of the structured answer responses.
const structuredAnswer = `{"city":"Paris","temp_c":18,"summary":"Light rain, 18 °C."}`

// outputCases are the output format goldens, with tools and without.
var outputCases = []struct {
	golden string
	format toolloop.OutputFormat
	tools  bool
}{
	{"output_format", reportFormat, false},
	{"output_format_tools", reportFormat, true},
	{"output_format_loose", looseFormat, false},
}

// outputRequest is the weather request asking for format, with the
// weather tool or none.
func outputRequest(format toolloop.OutputFormat, tools bool) *toolloop.Request {
	req := weatherRequest()
	if !tools {
		req.Tools = nil
	}
	req.Output = &format
	return req
}

func TestOutputFormat(t *testing.T) {
	for _, tt := range outputCases {
		t.Run(tt.golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: tt.golden, Response: "structured_answer.json"})
			resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), outputRequest(tt.format, tt.tools))
			require.NoError(t, err)
			assert.JSONEq(t, structuredAnswer, resp.Message.Text())
			assert.Equal(t, toolloop.StopEnd, resp.StopReason)
		})
	}
}

func TestResponsesOutputFormat(t *testing.T) {
	for _, tt := range outputCases {
		t.Run(tt.golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: "responses_" + tt.golden, Response: rapi("structured_answer.json")})
			resp, err := responsesFor(t, srv, Config{}).Generate(context.Background(), outputRequest(tt.format, tt.tools))
			require.NoError(t, err)
			assert.JSONEq(t, structuredAnswer, resp.Message.Text())
			assert.Equal(t, toolloop.StopEnd, resp.StopReason)
		})
	}
}

// TestOutputFormatStream checks that a structured answer streamed in
// pieces that split its JSON (and a character) comes back whole.
func TestOutputFormatStream(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "output_format_stream", Response: "stream_structured.sse", Chunk: 5})
	resp, deltas, err := collect(modelFor(t, srv, Config{}), outputRequest(reportFormat, true))
	require.NoError(t, err)
	require.NotNil(t, resp)
	assert.Greater(t, len(deltas), 1)
	assert.JSONEq(t, structuredAnswer, resp.Message.Text())
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
}

// TestOutputFormatRefusal checks that a refusal, which Structured
// Outputs sends instead of JSON, is a refusal, not an answer.
func TestOutputFormatRefusal(t *testing.T) {
	srv := serve(t,
		replay.Step{Response: "refusal.json"},
		replay.Step{Response: rapi("refusal.json")},
	)
	resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), outputRequest(reportFormat, false))
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopRefusal, resp.StopReason)
	resp, err = responsesFor(t, srv, Config{}).Generate(context.Background(), outputRequest(reportFormat, false))
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopRefusal, resp.StopReason)
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

// TestBadOutputFailsBeforeSending checks both APIs, both ways of
// calling: an error, ErrConfig when the model cannot take the format,
// and no request (the server has no steps, so any request fails the
// test).
func TestBadOutputFailsBeforeSending(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		format toolloop.OutputFormat
		config bool
	}{
		{"model without structured outputs", Config{Model: "gpt-3.5-turbo"}, reportFormat, true},
		{"native output off", Config{NoNativeOutput: true}, reportFormat, true},
		{"name with a space", Config{}, toolloop.OutputFormat{Name: "weather report", Schema: reportFormat.Schema}, false},
		{"name too long", Config{}, toolloop.OutputFormat{Name: string(make([]byte, 65)), Schema: reportFormat.Schema}, false},
		{"no schema", Config{}, toolloop.OutputFormat{Name: "report"}, false},
		{"null schema", Config{}, toolloop.OutputFormat{Schema: json.RawMessage(`null`)}, false},
		{"schema not an object", Config{}, toolloop.OutputFormat{Schema: json.RawMessage(`["a"]`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t)
			req := outputRequest(tt.format, true)
			chat, responses := modelFor(t, srv, tt.cfg), responsesFor(t, srv, tt.cfg)
			check := func(err error, what string) {
				t.Helper()
				require.Error(t, err, what)
				assert.Equal(t, tt.config, errors.Is(err, ErrConfig), "%s: %v", what, err)
			}
			_, err := chat.Generate(context.Background(), req)
			check(err, "chat Generate")
			_, _, err = collect(chat, req)
			check(err, "chat Stream")
			_, err = responses.Generate(context.Background(), req)
			check(err, "responses Generate")
			_, _, err = collectResponses(responses, req)
			check(err, "responses Stream")
			assert.Empty(t, srv.Requests())
		})
	}
}

// TestNoOutputFormatSendsNone checks that a request without Output
// leaves the format to the server.
func TestNoOutputFormatSendsNone(t *testing.T) {
	p, err := mustNew(t, Config{APIKey: "unused"}).params(weatherRequest())
	require.NoError(t, err)
	assert.NotContains(t, replay.Body(t, p), "response_format")
	rp, err := mustNewResponses(t, Config{APIKey: "unused"}).params(weatherRequest())
	require.NoError(t, err)
	assert.NotContains(t, replay.Body(t, rp), "text")
}
