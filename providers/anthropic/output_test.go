package anthropic

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

// reportFormat is the output format of the structured answer tests: a
// schema structured outputs take as it is.
var reportFormat = toolloop.OutputFormat{
	Name:        "weather_report",
	Description: "The weather in a city, for a report.",
	Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"},"summary":{"type":"string"}},` +
		`"required":["city","temp_c","summary"],"additionalProperties":false}`),
}

// looseFormat has what structured outputs refuse: keywords it does not
// take, a type list, an object that allows other properties.
var looseFormat = toolloop.OutputFormat{
	Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","description":"A report.",` +
		`"properties":{"city":{"type":"string","minLength":1},"temp_c":{"type":["number","null"],"minimum":-90,"maximum":60}},"required":["city"]}`),
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
		format toolloop.OutputFormat
		tools  bool
	}{
		{"output_format", reportFormat, false},
		{"output_format_tools", reportFormat, true},
		{"output_format_loose", looseFormat, false},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: tt.golden, Response: "structured_answer.json"})
			resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), outputRequest(tt.format, tt.tools))
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

// TestOutputFormatRefusal checks that a refusal, which comes instead of
// JSON, is a refusal, not an answer.
func TestOutputFormatRefusal(t *testing.T) {
	srv := serve(t, replay.Step{Response: "refusal.json"})
	resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), outputRequest(reportFormat, false))
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopRefusal, resp.StopReason)
}

// TestOutputFormatWithEffort checks that the format and the effort share
// output_config.
func TestOutputFormatWithEffort(t *testing.T) {
	p, err := mustNew(t, Config{APIKey: "unused", Effort: "low", Thinking: Thinking{Adaptive: true}}).params(outputRequest(reportFormat, true))
	require.NoError(t, err)
	oc, _ := replay.Body(t, p)["output_config"].(map[string]any)
	assert.Equal(t, "low", oc["effort"])
	format, _ := oc["format"].(map[string]any)
	assert.Equal(t, "json_schema", format["type"])
	assert.Contains(t, format, "schema")
}

func TestNativeOutput(t *testing.T) {
	tests := []struct {
		model string
		want  bool
	}{
		{"claude-sonnet-4-5", true},
		{"claude-sonnet-4-5-20250929", true},
		{"claude-haiku-4-5-20251001", true},
		{"claude-opus-4-5-20251101", true},
		{"claude-opus-4-6", true},
		{"claude-sonnet-4-6", true},
		{"claude-opus-4-7", true},
		{"claude-fable-5", true},
		{"claude-sonnet-4-5@20250929", true},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", true},
		{"claude-opus-4-1-20250805", false},
		{"claude-opus-4-1", false},
		{"claude-sonnet-4-20250514", false},
		{"claude-3-7-sonnet-latest", false},
		{"claude-3-5-haiku-20241022", false},
		{"claude-3-opus-20240229", false},
		{"my-proxy-alias", false},
		{"claude-instant-v1", false},
	}
	for _, tt := range tests {
		for _, withTools := range []bool{false, true} {
			assert.Equal(t, tt.want, mustNew(t, Config{Model: tt.model, APIKey: "unused"}).NativeOutput(withTools), "%s, tools %v", tt.model, withTools)
		}
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
		config bool
	}{
		{"model without structured outputs", "claude-sonnet-4-20250514", reportFormat, true},
		{"no schema", "", toolloop.OutputFormat{Name: "report"}, false},
		{"null schema", "", toolloop.OutputFormat{Schema: json.RawMessage(`null`)}, false},
		{"schema not an object", "", toolloop.OutputFormat{Schema: json.RawMessage(`["a"]`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t)
			m := modelFor(t, srv, Config{Model: tt.model})
			req := outputRequest(tt.format, true)
			_, err := m.Generate(context.Background(), req)
			require.Error(t, err, "Generate")
			assert.Equal(t, tt.config, errors.Is(err, ErrConfig), "Generate: %v", err)
			_, _, err = collect(m, req)
			require.Error(t, err, "Stream")
			assert.Equal(t, tt.config, errors.Is(err, ErrConfig), "Stream: %v", err)
			assert.Empty(t, srv.Requests())
		})
	}
}

func TestFitSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{{
		name: "already fits",
		in:   `{"type":"object","properties":{"a":{"type":"string","format":"date"}},"required":["a"],"additionalProperties":false}`,
		want: `{"type":"object","properties":{"a":{"type":"string","format":"date"}},"required":["a"],"additionalProperties":false}`,
	}, {
		name: "constraints move into the description",
		in:   `{"type":"object","properties":{"n":{"type":"integer","description":"A count.","minimum":1,"maximum":9},"s":{"type":"string","maxLength":3}}}`,
		want: `{"type":"object","additionalProperties":false,"properties":{` +
			`"n":{"type":"integer","description":"A count.\n\n{maximum: 9, minimum: 1}"},"s":{"type":"string","description":"{maxLength: 3}"}}}`,
	}, {
		name: "type lists are kept",
		in:   `{"type":"object","properties":{"a":{"type":["string","null"],"format":"color"}}}`,
		want: `{"type":"object","additionalProperties":false,"properties":{"a":{"type":["string","null"],"description":"{format: color}"}}}`,
	}, {
		name: "oneOf becomes anyOf, and its variants fit",
		in:   `{"type":"object","properties":{"a":{"oneOf":[{"type":"object","properties":{"x":{"type":"integer"}}},{"type":"string","minLength":2}]}}}`,
		want: `{"type":"object","additionalProperties":false,"properties":{"a":{"anyOf":[` +
			`{"type":"object","properties":{"x":{"type":"integer"}},"additionalProperties":false},{"type":"string","description":"{minLength: 2}"}]}}}`,
	}, {
		name: "$ref stands alone; definitions fit",
		in:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/p","description":"x"}},"$defs":{"p":{"type":"array","items":{"type":"number","multipleOf":2},"minItems":2}}}`,
		want: `{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/p"}},` +
			`"$defs":{"p":{"type":"array","items":{"type":"number","description":"{multipleOf: 2}"},"description":"{minItems: 2}"}}}`,
	}, {
		name: "a map keeps its value schema",
		in:   `{"type":"object","additionalProperties":{"type":"integer","exclusiveMinimum":0}}`,
		want: `{"type":"object","additionalProperties":{"type":"integer","description":"{exclusiveMinimum: 0}"}}`,
	}, {
		name: "an object without properties is the empty object",
		in:   `{"type":"object","properties":{"meta":{"type":"object"}}}`,
		want: `{"type":"object","additionalProperties":false,"properties":{"meta":{"type":"object","properties":{},"additionalProperties":false}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s map[string]any
			require.NoError(t, json.Unmarshal([]byte(tt.in), &s))
			notes := fitSchema(s, "#")
			got, err := json.Marshal(s)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			assert.Equal(t, tt.in != tt.want, len(notes) > 0, "notes: %q", notes)
		})
	}
}
