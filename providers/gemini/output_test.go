package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// reportFormat is the output format of the structured answer tests.
var reportFormat = toolloop.OutputFormat{
	Name:        "weather_report",
	Description: "The weather in a city, for a report.",
	Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"},"summary":{"type":"string"}},` +
		`"required":["city","temp_c","summary"],"additionalProperties":false}`),
}

// looseFormat has keywords the API does not take (sent without them)
// and a const (sent as a one-value enum).
var looseFormat = toolloop.OutputFormat{
	Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"properties":{"city":{"type":"string","minLength":1},"unit":{"const":"celsius"},"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}},` +
		`"required":["city"],"patternProperties":{"^x-":{}}}`),
}

// structuredAnswer is the text of the structured answer responses.
const structuredAnswer = `{"city":"Paris","temp_c":18,"summary":"Light rain, 18 °C."}`

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
	for _, tt := range []struct {
		golden string
		model  string
		format toolloop.OutputFormat
		tools  bool
	}{
		{"output_format", "gemini-2.5-flash", reportFormat, false},
		{"output_format_tools", "gemini-3-pro-preview", reportFormat, true},
		{"output_format_loose", "gemini-2.5-flash", looseFormat, false},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: tt.golden, Response: "structured_answer.json"})
			resp, err := modelFor(t, srv, Config{Model: tt.model}).Generate(context.Background(), outputRequest(tt.format, tt.tools))
			require.NoError(t, err)
			assert.JSONEq(t, structuredAnswer, resp.Message.Text())
			assert.Equal(t, toolloop.StopEnd, resp.StopReason)
			var sigs int
			for _, c := range resp.Message.Content {
				if c.Type == toolloop.ContentReasoning {
					sigs++
					assert.NotEmpty(t, c.Reasoning.Signature)
				}
			}
			assert.Equal(t, 1, sigs, "the text's thought signature is kept, out of the text")
		})
	}
}

// TestOutputFormatStream checks that a structured answer streamed in
// pieces that split its JSON (and a character) comes back whole.
func TestOutputFormatStream(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "output_format_stream", Response: "stream_structured.sse", Chunk: 5})
	resp, texts, _, err := collect(modelFor(t, srv, Config{Model: "gemini-3-pro-preview"}), outputRequest(reportFormat, true))
	require.NoError(t, err)
	require.NotNil(t, resp)
	assert.Len(t, texts, 3)
	assert.Equal(t, structuredAnswer, strings.Join(texts, ""))
	assert.JSONEq(t, structuredAnswer, resp.Message.Text())
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
}

// TestOutputFormatRefusal checks that a blocked answer, which comes
// instead of JSON, is a refusal, not an answer.
func TestOutputFormatRefusal(t *testing.T) {
	srv := serve(t, replay.Step{Response: "safety.json"})
	resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), outputRequest(reportFormat, false))
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopRefusal, resp.StopReason)
}

// TestOutputFormatEditRequest checks that EditRequest sees the format,
// and may change it.
func TestOutputFormatEditRequest(t *testing.T) {
	var seen string
	m := mustNew(t, Config{APIKey: "unused", EditRequest: func(cfg *genai.GenerateContentConfig) {
		seen = cfg.ResponseMIMEType
	}})
	_, _, err := m.params(outputRequest(reportFormat, false))
	require.NoError(t, err)
	assert.Equal(t, "application/json", seen)
}

func TestNativeOutput(t *testing.T) {
	tests := []struct {
		model            string
		alone, withTools bool
	}{
		{"gemini-2.5-flash", true, false},
		{"gemini-2.5-pro", true, false},
		{"gemini-2.5-flash-lite", true, false},
		{"models/gemini-2.5-flash", true, false},
		{"gemini-3-pro-preview", true, true},
		{"gemini-3-flash-preview", true, true},
		{"gemini-3.1-pro-preview", true, true},
		{"publishers/google/models/gemini-3-pro-preview", true, true},
		{"gemini-2.0-flash", false, false},
		{"gemini-1.5-pro", false, false},
		{"gemini-flash-latest", false, false},
		{"gemma-3-27b-it", false, false},
		{"tunedModels/my-model-123", false, false},
	}
	for _, tt := range tests {
		m := mustNew(t, Config{Model: tt.model, APIKey: "unused"})
		assert.Equal(t, tt.alone, m.NativeOutput(false), "%s without tools", tt.model)
		assert.Equal(t, tt.withTools, m.NativeOutput(true), "%s with tools", tt.model)
	}
	var _ toolloop.NativeOutput = (*Model)(nil)
}

// TestBadOutputFailsBeforeSending checks both ways of calling: an
// error, ErrConfig when the model cannot take the format, and no request
// (the server has no steps, so any request fails the test).
func TestBadOutputFailsBeforeSending(t *testing.T) {
	tests := []struct {
		name   string
		model  string
		format toolloop.OutputFormat
		tools  bool
		config bool
	}{
		{"Gemini 2.5 beside tools", "gemini-2.5-flash", reportFormat, true, true},
		{"model without structured output", "gemini-2.0-flash", reportFormat, false, true},
		{"no schema", "gemini-3-pro-preview", toolloop.OutputFormat{Name: "report"}, true, false},
		{"null schema", "gemini-3-pro-preview", toolloop.OutputFormat{Schema: json.RawMessage(`null`)}, true, false},
		{"schema not an object", "gemini-3-pro-preview", toolloop.OutputFormat{Schema: json.RawMessage(`["a"]`)}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t)
			m := modelFor(t, srv, Config{Model: tt.model})
			req := outputRequest(tt.format, tt.tools)
			_, err := m.Generate(context.Background(), req)
			require.Error(t, err, "Generate")
			assert.Equal(t, tt.config, errors.Is(err, ErrConfig), "Generate: %v", err)
			_, _, _, err = collect(m, req)
			require.Error(t, err, "Stream")
			assert.Equal(t, tt.config, errors.Is(err, ErrConfig), "Stream: %v", err)
			assert.Empty(t, srv.Requests())
		})
	}
}
