package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// looseFormat has what structured outputs refuse: keywords it does not
// take, a type list, an object that allows other properties. (The
// conformance kit sends a format structured outputs take as it is.)
var looseFormat = toolloop.OutputFormat{
	Schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","description":"A report.",` +
		`"properties":{"city":{"type":"string","minLength":1},"temp_c":{"type":["number","null"],"minimum":-90,"maximum":60}},"required":["city"]}`),
}

// TestLooseOutputFormat checks, in its golden request body, how a schema
// structured outputs refuse is sent.
func TestLooseOutputFormat(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "output_format_loose", Response: "structured_answer.json"})
	resp, err := modelFor(t, srv, Config{}).Generate(context.Background(), replay.OutputRequest(looseFormat, false))
	require.NoError(t, err)
	assert.Equal(t, toolloop.StopEnd, resp.StopReason)
}

// TestOutputFormatWithEffort checks that the format and the effort share
// output_config.
func TestOutputFormatWithEffort(t *testing.T) {
	p, err := mustNew(t, Config{APIKey: "unused", Effort: "low", Thinking: Thinking{Adaptive: true}}).params(replay.OutputRequest(looseFormat, true))
	require.NoError(t, err)
	oc, _ := replay.Body(t, p)["output_config"].(map[string]any)
	assert.Equal(t, "low", oc["effort"])
	format, _ := oc["format"].(map[string]any)
	assert.Equal(t, "json_schema", format["type"])
	assert.Contains(t, format, "schema")
}

// TestModelWithoutStructuredOutputs checks that a model without them
// refuses Request.Output with ErrConfig, both ways of calling, before
// anything is sent (the server has no steps).
func TestModelWithoutStructuredOutputs(t *testing.T) {
	m := modelFor(t, serve(t), Config{Model: "claude-sonnet-4-20250514"})
	req := replay.OutputRequest(looseFormat, true)
	_, err := m.Generate(context.Background(), req)
	assert.ErrorIs(t, err, ErrConfig, "Generate")
	assert.ErrorIs(t, replay.Collect(m, req).Err, ErrConfig, "Stream")
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
