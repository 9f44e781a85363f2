package toolloop_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func TestToolResultText(t *testing.T) {
	png := toolloop.ImageContent("image/png", make([]byte, 5120))
	tests := []struct {
		name    string
		content []toolloop.Content
		err     *toolloop.ToolError
		want    string
	}{
		{"empty", nil, nil, ""},
		{"one text block", []toolloop.Content{toolloop.TextContent("hello")}, nil, "hello"},
		{"text blocks join as they are", []toolloop.Content{toolloop.TextContent("a"), toolloop.TextContent("b")}, nil, "ab"},
		{"json", []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"sum":2}`))}, nil, `{"sum":2}`},
		{"json after text starts a line", []toolloop.Content{toolloop.TextContent("sum:"), toolloop.JSONContent(json.RawMessage(`2`))}, nil, "sum:\n2"},
		{"embedded resource", []toolloop.Content{{Type: toolloop.ContentResource, URI: "file:///a.txt", Text: "contents"}}, nil, "contents"},
		{"resource not embedded", []toolloop.Content{{Type: toolloop.ContentResource, URI: "file:///a.pdf", MIMEType: "application/pdf"}}, nil,
			"[resource file:///a.pdf (application/pdf, 0 bytes)]"},
		{"image", []toolloop.Content{toolloop.TextContent("chart:"), png}, nil, "chart:\n[image (image/png, 5120 bytes)]"},
		{"image by URL", []toolloop.Content{{Type: toolloop.ContentImage, URI: "https://example.invalid/a.png"}}, nil, "[image https://example.invalid/a.png]"},
		{"audio", []toolloop.Content{{Type: toolloop.ContentAudio, Data: []byte("xx")}}, nil, "[audio (unknown type, 2 bytes)]"},
		{"reasoning is left out", []toolloop.Content{toolloop.ReasoningContent("hmm", toolloop.Reasoning{Provider: "p"}), toolloop.TextContent("ok")}, nil, "ok"},
		{"error without content gives its message", nil, &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "boom"}, "boom"},
		{"error content wins over the message", []toolloop.Content{toolloop.TextContent("details")}, &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "boom"}, "details"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &toolloop.ToolResult{Content: tt.content, Error: tt.err}
			assert.Equal(t, tt.want, r.Text())
		})
	}
}

// A typed tool that returns a struct has a JSON result; its text is the
// JSON the model sees, in events and in the run's executions too.
func TestJSONResultText(t *testing.T) {
	add := toolloop.NewTool("add", "Add.", func(_ context.Context, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (any, error) {
		return struct {
			Sum int `json:"sum"`
		}{in.A + in.B}, nil
	})
	rec := &looptest.Recorder{}
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: registry(t, add), OnEvent: rec.Record}, looptest.Call("c1", "add", `{"a":1,"b":2}`))
	require.NoError(t, err)
	assert.Equal(t, `{"sum":3}`, resultOf(t, res, "c1").Text())
	assert.Equal(t, `{"sum":3}`, res.Executions[0].Output)
	done := rec.Of(toolloop.EventComplete)
	require.Len(t, done, 1)
	assert.Equal(t, `{"sum":3}`, done[0].Result.Text())
}
