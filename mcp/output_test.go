package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// TestOutputSchemaEverything: server-everything's structured tool carries
// its output schema into the spec, and its results match it.
func TestOutputSchemaEverything(t *testing.T) {
	t.Parallel()
	src := newSource(t, "everything", everythingConfig(t), mcp.Options{}, nil)
	ctx := testContext(t)
	tools, err := src.Tools(ctx)
	require.NoError(t, err)
	var spec toolloop.ToolSpec
	for _, tl := range tools {
		if tl.Spec().Name == "everything__get-structured-content" {
			spec = tl.Spec()
		}
		if tl.Spec().Name == "everything__echo" {
			assert.Nil(t, tl.Spec().OutputSchema)
		}
	}
	require.NotNil(t, spec.OutputSchema)
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(spec.OutputSchema, &schema))
	assert.Contains(t, schema.Properties, "temperature")

	res := callTool(ctx, t, src, "everything__get-structured-content", `{"location":"Chicago"}`)
	require.False(t, res.IsError(), res.Text())
	assert.Contains(t, res.Text(), "drizzle")
}

// TestOutputSchemaViolation: a Go server whose results break the schema
// it declares.
func TestOutputSchemaViolation(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "typed", Version: "1"}, nil)
	out := map[string]any{
		"type": "object", "required": []any{"n"},
		"properties": map[string]any{"n": map[string]any{"type": "integer"}},
	}
	srv.AddTool(&sdk.Tool{Name: "count", InputSchema: map[string]any{"type": "object"}, OutputSchema: out},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct {
				Mode string `json:"mode"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			switch args.Mode {
			case "bad":
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"n":"three"}`}},
					StructuredContent: map[string]any{"n": "three"}}, nil
			case "missing":
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "no structure"}}}, nil
			case "error":
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it broke"}}}, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"n":3}`}},
				StructuredContent: map[string]any{"n": 3}}, nil
		})
	src := newSource(t, "typed", inMemory(srv), mcp.Options{}, nil)
	ctx := testContext(t)
	tests := []struct {
		mode    string
		failed  bool
		message string
	}{
		{mode: "good"},
		{mode: "bad", failed: true, message: "does not match the tool's output schema"},
		{mode: "missing", failed: true, message: "returned no structured content"},
		{mode: "error", failed: true, message: "it broke"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			res := callTool(ctx, t, src, "typed__count", `{"mode":"`+tt.mode+`"}`)
			require.Equal(t, tt.failed, res.IsError(), res.Text())
			if !tt.failed {
				return
			}
			assert.Equal(t, toolloop.KindExecutionFailed, res.Error.Kind)
			assert.Contains(t, res.Error.Message, tt.message)
			if tt.mode == "bad" {
				assert.Contains(t, res.Error.Message, "/n", "the violation names where")
				assert.NotContains(t, res.Text(), "three", "the violating value is not passed on")
			}
		})
	}
}
