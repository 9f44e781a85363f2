package gemini

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// looseFormat has keywords the API does not take (sent without them)
// and a const (sent as a one-value enum). (The conformance kit sends a
// format the API takes as it is.)
var looseFormat = toolloop.OutputFormat{
	Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"properties":{"city":{"type":"string","minLength":1},"unit":{"const":"celsius"},"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}},` +
		`"required":["city"],"patternProperties":{"^x-":{}}}`),
}

// TestOutputFormat checks, in golden request bodies, what the
// conformance kit's model (Gemini 2.5, which takes no format beside
// tools) does not send: a schema less what the API does not take, and a
// format beside a tool, on Gemini 3.
func TestOutputFormat(t *testing.T) {
	for _, tt := range []struct {
		golden string
		model  string
		tools  bool
	}{
		{"output_format_loose", "gemini-2.5-flash", false},
		{"output_format_tools", "gemini-3-pro-preview", true},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: tt.golden, Response: "structured_answer.json"})
			resp, err := modelFor(t, srv, Config{Model: tt.model}).Generate(context.Background(), replay.OutputRequest(looseFormat, tt.tools))
			require.NoError(t, err)
			assert.Equal(t, toolloop.StopEnd, resp.StopReason)
		})
	}
}

// TestOutputFormatEditRequest checks that EditRequest sees the format,
// and may change it.
func TestOutputFormatEditRequest(t *testing.T) {
	var seen string
	m := mustNew(t, Config{APIKey: "unused", EditRequest: func(cfg *genai.GenerateContentConfig) {
		seen = cfg.ResponseMIMEType
	}})
	_, _, err := m.params(replay.OutputRequest(looseFormat, false))
	require.NoError(t, err)
	assert.Equal(t, "application/json", seen)
}

// TestModelWithoutStructuredOutput checks that a model without it
// refuses Request.Output with ErrConfig, both ways of calling, before
// anything is sent (the server has no steps).
func TestModelWithoutStructuredOutput(t *testing.T) {
	m := modelFor(t, serve(t), Config{Model: "gemini-2.0-flash"})
	req := replay.OutputRequest(looseFormat, false)
	_, err := m.Generate(context.Background(), req)
	assert.ErrorIs(t, err, ErrConfig, "Generate")
	assert.ErrorIs(t, replay.Collect(m, req).Err, ErrConfig, "Stream")
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
