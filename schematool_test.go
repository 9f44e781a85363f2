package toolloop_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func noop(context.Context, *toolloop.Call) (any, error) { return nil, nil }

func TestNewSchemaToolErrors(t *testing.T) {
	tests := []struct {
		name, tool, schema string
		fn                 func(context.Context, *toolloop.Call) (any, error)
	}{
		{"nil function", "t", `{"type":"object"}`, nil},
		{"invalid name", "has space", `{"type":"object"}`, noop},
		{"not JSON", "t", `{"type":`, noop},
		{"not an object schema", "t", `{"type":"array"}`, noop},
		{"no type", "t", `{"properties":{}}`, noop},
		{"does not compile", "t", `{"type":"object","properties":{"a":{"type":"nope"}}}`, noop},
		{"remote ref", "t", `{"type":"object","properties":{"a":{"$ref":"https://example.invalid/s.json"}}}`, noop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := toolloop.NewSchemaTool(tt.tool, "A tool.", json.RawMessage(tt.schema), tt.fn)
			require.Error(t, err)
			assert.Nil(t, tool)
		})
	}
}

// A schema tool is validated like any tool: its function never sees
// arguments its schema refuses; the model gets the reasons instead.
func TestSchemaToolInARun(t *testing.T) {
	var calls atomic.Int32
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","minLength":1}},"required":["city"],"additionalProperties":false}`)
	weather, err := toolloop.NewSchemaTool("weather", "Weather for a city.", schema, func(_ context.Context, c *toolloop.Call) (any, error) {
		calls.Add(1)
		var in struct {
			City string `json:"city"`
		}
		if err := c.Bind(&in); err != nil {
			return nil, err
		}
		return map[string]any{"city": in.City, "celsius": 18}, nil
	})
	require.NoError(t, err)
	weather.Annotations.ReadOnly = true
	spec := weather.Spec()
	assert.JSONEq(t, string(schema), string(spec.InputSchema))
	assert.True(t, spec.Annotations.ReadOnly)

	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: registry(t, weather)},
		looptest.Call("c1", "weather", `{"city":"Paris"}`),
		looptest.Call("c2", "weather", `{"town":"Paris"}`),
		looptest.Call("c3", "weather", `{"city":""}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"city":"Paris","celsius":18}`, resultOf(t, res, "c1").Text())
	for _, id := range []string{"c2", "c3"} {
		r := resultOf(t, res, id)
		require.True(t, r.IsError())
		assert.Equal(t, toolloop.KindInvalidArgs, r.Error.Kind)
	}
	assert.EqualValues(t, 1, calls.Load())
}

func TestSchemaToolOutputs(t *testing.T) {
	tests := []struct {
		name string
		out  any
		want *toolloop.ToolResult
	}{
		{"nil", nil, &toolloop.ToolResult{Status: toolloop.StatusOK}},
		{"typed nil result", (*toolloop.ToolResult)(nil), &toolloop.ToolResult{Status: toolloop.StatusOK}},
		{"text", "hi", toolloop.TextResult("hi")},
		{"result", &toolloop.ToolResult{Status: toolloop.StatusError, Content: []toolloop.Content{toolloop.TextContent("no")}},
			&toolloop.ToolResult{Status: toolloop.StatusError, Content: []toolloop.Content{toolloop.TextContent("no")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := toolloop.NewSchemaTool("t", "T.", nil, func(context.Context, *toolloop.Call) (any, error) { return tt.out, nil })
			require.NoError(t, err)
			got, err := tool.Run(context.Background(), &toolloop.Call{Name: "t", Arguments: json.RawMessage(`{}`)})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	// A nil schema is an object with no constraints.
	tool, err := toolloop.NewSchemaTool("t", "T.", nil, noop)
	require.NoError(t, err)
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.Register(tool))
	looptest.TestTool(t, tool, json.RawMessage(`{}`))
}
