package mcp

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop"
)

func TestToResult(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G'}
	tests := []struct {
		name string
		in   *sdk.CallToolResult
		want *toolloop.ToolResult
	}{
		{
			name: "text",
			in:   &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("a"), toolloop.TextContent("b")}},
		},
		{
			name: "empty",
			in:   &sdk.CallToolResult{},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{}},
		},
		{
			name: "image alone sets the MIME type",
			in:   &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: png}}},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.ImageContent("image/png", png)},
				Meta: toolloop.ResultMeta{MIMEType: "image/png"}},
		},
		{
			name: "structured content replaces its text twin",
			in: &sdk.CallToolResult{
				Content:           []sdk.Content{&sdk.TextContent{Text: "{\"b\": 2, \"a\": [1]}"}},
				StructuredContent: map[string]any{"a": []any{1.0}, "b": 2.0},
			},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"a":[1],"b":2}`))},
				Meta: toolloop.ResultMeta{MIMEType: "application/json"}},
		},
		{
			name: "structured content without a twin is added",
			in: &sdk.CallToolResult{
				Content:           []sdk.Content{&sdk.TextContent{Text: "the weather is fine"}},
				StructuredContent: map[string]any{"temp": 20.0},
			},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{
				toolloop.TextContent("the weather is fine"), toolloop.JSONContent(json.RawMessage(`{"temp":20}`))}},
		},
		{
			name: "is error",
			in:   &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "disk full"}}},
			want: &toolloop.ToolResult{Status: toolloop.StatusError, Content: []toolloop.Content{toolloop.TextContent("disk full")},
				Error: &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "disk full"}},
		},
		{
			name: "is error without text",
			in:   &sdk.CallToolResult{IsError: true},
			want: &toolloop.ToolResult{Status: toolloop.StatusError, Content: []toolloop.Content{},
				Error: &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "the MCP tool reported an error without a message"}},
		},
		{
			name: "resources",
			in: &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.ResourceLink{URI: "file:///a", Name: "a", MIMEType: "text/plain"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b", Blob: []byte{1}}},
				&sdk.EmbeddedResource{},
			}},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{
				{Type: toolloop.ContentResource, URI: "file:///a", MIMEType: "text/plain"},
				{Type: toolloop.ContentResource, URI: "mem://b", Data: []byte{1}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, toResult(tt.in))
		})
	}
}

func TestAnnotations(t *testing.T) {
	no, yes := false, true
	tests := []struct {
		name string
		in   *sdk.Tool
		want toolloop.Annotations
	}{
		{"protocol defaults", &sdk.Tool{}, toolloop.Annotations{Destructive: true, OpenWorld: true}},
		{"read-only is not destructive", &sdk.Tool{Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
			toolloop.Annotations{ReadOnly: true, OpenWorld: true}},
		{"explicit hints", &sdk.Tool{Title: "T", Annotations: &sdk.ToolAnnotations{Title: "U", DestructiveHint: &no, OpenWorldHint: &no, IdempotentHint: true}},
			toolloop.Annotations{Title: "T", Idempotent: true}},
		{"annotation title", &sdk.Tool{Annotations: &sdk.ToolAnnotations{Title: "U", DestructiveHint: &yes}},
			toolloop.Annotations{Title: "U", Destructive: true, OpenWorld: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, annotations(tt.in))
		})
	}
}
