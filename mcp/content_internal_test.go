package mcp

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
			name: "structured content is sent once: its JSON text twin stays",
			in: &sdk.CallToolResult{
				Content:           []sdk.Content{&sdk.TextContent{Text: "{\"b\": 2, \"a\": [1]}"}},
				StructuredContent: map[string]any{"a": []any{1.0}, "b": 2.0},
			},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent("{\"b\": 2, \"a\": [1]}")}},
		},
		{
			name: "structured content that differs from its summary is added",
			in: &sdk.CallToolResult{
				Content:           []sdk.Content{&sdk.TextContent{Text: "the weather is fine"}},
				StructuredContent: map[string]any{"temp": 20.0},
			},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{
				toolloop.TextContent("the weather is fine"), toolloop.JSONContent(json.RawMessage(`{"temp":20}`))}},
		},
		{
			name: "structured content alone is sent as JSON",
			in:   &sdk.CallToolResult{StructuredContent: map[string]any{"temp": 20.0}},
			want: &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"temp":20}`))},
				Meta: toolloop.ResultMeta{MIMEType: "application/json"}},
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

// TestMergeStructured covers the shapes the reference servers send (see
// carries): each is the text alone, or text and JSON when they differ.
func TestMergeStructured(t *testing.T) {
	file := strings.Repeat("a line of a file\n", 100)
	cutCopy := func(s string, head, tail int) string {
		return s[:head] + "\n[... " + strconv.Itoa(len(s)-head-tail) + " of " + strconv.Itoa(len(s)) +
			" bytes cut from the middle of this output ...]\n" + s[len(s)-tail:]
	}
	png := []byte{0x89, 'P', 'N', 'G'}
	tests := []struct {
		name       string
		text       []string
		blocks     []sdk.Content
		structured string
		both       bool
	}{
		{name: "filesystem: content member", text: []string{file}, structured: `{"content":` + quote(file) + `}`},
		{name: "filesystem: cut copy of the text", text: []string{file}, structured: `{"content":` + quote(cutCopy(file, 40, 30)) + `}`},
		{name: "filesystem: media blocks repeated", blocks: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: png}},
			structured: `{"content":[{"type":"image","mimeType":"image/png","data":"iVBORw=="}]}`},
		{name: "memory: one member is the text's JSON", text: []string{"[\n  {\"name\": \"a\"}\n]"}, structured: `{"entities":[{"name":"a"}]}`},
		{name: "memory: string and booleans", text: []string{"Entities deleted successfully"},
			structured: `{"success":true,"message":"Entities deleted successfully"}`},
		{name: "everything: JSON text", text: []string{`{"temperature": 22.5, "conditions": "Sunny"}`},
			structured: `{"conditions":"Sunny","temperature":22.5}`},
		{name: "two string members joined by a newline", text: []string{"head\nbody"}, structured: `{"b":"body","a":"head"}`},
		{name: "two text blocks together", text: []string{"one", "two"}, structured: `{"text":"one\ntwo"}`},
		{name: "emptied by the budget", text: []string{file}, structured: `{"_truncated":"1 of 1 items cut to fit the output budget"}`},
		{name: "summary differs", text: []string{"3 entities"}, structured: `{"count":3}`, both: true},
		{name: "number beside the string", text: []string{"ok"}, structured: `{"message":"ok","count":3}`, both: true},
		{name: "a different cut copy", text: []string{file}, structured: `{"content":` + quote(cutCopy(strings.ToUpper(file), 40, 30)) + `}`, both: true},
		{name: "media blocks differ", blocks: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: png}},
			structured: `{"content":[{"type":"image","mimeType":"image/gif","data":"iVBORw=="}]}`, both: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var structured any
			require.NoError(t, json.Unmarshal([]byte(tt.structured), &structured))
			blocks := tt.blocks
			for _, s := range tt.text {
				blocks = append(blocks, &sdk.TextContent{Text: s})
			}
			r := toResult(&sdk.CallToolResult{Content: blocks, StructuredContent: structured})
			require.Len(t, r.Content, len(blocks)+map[bool]int{true: 1}[tt.both])
			last := r.Content[len(r.Content)-1]
			if tt.both {
				assert.Equal(t, toolloop.ContentJSON, last.Type)
				assert.JSONEq(t, tt.structured, string(last.JSON))
			} else {
				assert.NotEqual(t, toolloop.ContentJSON, last.Type)
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
