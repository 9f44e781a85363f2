package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

func TestSDKTool(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    string // the input schema offered; "" when the tool is left out
		ann     toolloop.Annotations
		wantAnn *sdk.ToolAnnotations
	}{
		{name: "no schema", want: `{"type":"object"}`},
		{name: "object", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`, want: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "no type", schema: `{"properties":{"a":{"type":"string"}}}`, want: `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{name: "not an object", schema: `{"type":"array"}`},
		{name: "title only", ann: toolloop.Annotations{Title: "T"}, want: `{"type":"object"}`, wantAnn: &sdk.ToolAnnotations{Title: "T"}},
		{name: "judgment only says nothing", ann: toolloop.Annotations{JudgmentRequired: true}, want: `{"type":"object"}`},
		{name: "read-only is not destructive", ann: toolloop.Annotations{ReadOnly: true, Destructive: true}, want: `{"type":"object"}`,
			wantAnn: &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl, err := sdkTool(&toolloop.ToolSpec{Name: "x", InputSchema: json.RawMessage(tt.schema), Annotations: tt.ann})
			if tt.want == "" {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(tl.InputSchema.(json.RawMessage)))
			assert.Equal(t, tt.wantAnn, tl.Annotations)
		})
	}
}

func TestToCallResult(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G'}
	tests := []struct {
		name       string
		res        *toolloop.ToolResult
		want       []sdk.Content
		structured any
		isError    bool
		kind       string
	}{
		{name: "text", res: toolloop.TextResult("hi"), want: []sdk.Content{&sdk.TextContent{Text: "hi"}}},
		{name: "json object", res: &toolloop.ToolResult{Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"a":1}`))}},
			want: []sdk.Content{&sdk.TextContent{Text: `{"a":1}`}}, structured: json.RawMessage(`{"a":1}`)},
		{name: "json array is not structured", res: &toolloop.ToolResult{Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`[1]`))}},
			want: []sdk.Content{&sdk.TextContent{Text: `[1]`}}},
		{name: "two json objects are not structured", res: &toolloop.ToolResult{Content: []toolloop.Content{
			toolloop.JSONContent(json.RawMessage(`{"a":1}`)), toolloop.JSONContent(json.RawMessage(`{"b":2}`))}},
			want: []sdk.Content{&sdk.TextContent{Text: `{"a":1}`}, &sdk.TextContent{Text: `{"b":2}`}}},
		{name: "text marked json", res: &toolloop.ToolResult{Content: []toolloop.Content{toolloop.TextContent(`{"a":1}`)}, Meta: toolloop.ResultMeta{MIMEType: "application/json"}},
			want: []sdk.Content{&sdk.TextContent{Text: `{"a":1}`}}, structured: json.RawMessage(`{"a":1}`)},
		{name: "media and resources", res: &toolloop.ToolResult{Content: []toolloop.Content{
			toolloop.ImageContent("image/png", png),
			{Type: toolloop.ContentAudio, MIMEType: "audio/wav", Data: png},
			{Type: toolloop.ContentResource, URI: "file:///a.txt", MIMEType: "text/plain", Text: "A"},
			{Type: toolloop.ContentResource, URI: "file:///b.pdf", MIMEType: "application/pdf"},
			toolloop.ReasoningContent("thinking", toolloop.Reasoning{}),
		}}, want: []sdk.Content{
			&sdk.ImageContent{Data: png, MIMEType: "image/png"},
			&sdk.AudioContent{Data: png, MIMEType: "audio/wav"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "A"}},
			&sdk.ResourceLink{URI: "file:///b.pdf", Name: "file:///b.pdf", MIMEType: "application/pdf"},
		}},
		{name: "error without content", res: &toolloop.ToolResult{Status: toolloop.StatusError,
			Error: &toolloop.ToolError{Kind: toolloop.KindTimeout, Message: "too slow"}},
			want: []sdk.Content{&sdk.TextContent{Text: "too slow"}}, isError: true, kind: "timeout"},
		{name: "error drops structured content", res: &toolloop.ToolResult{Status: toolloop.StatusError,
			Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"a":1}`))},
			Error:   &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "x"}},
			want: []sdk.Content{&sdk.TextContent{Text: `{"a":1}`}}, isError: true, kind: "execution_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toCallResult(tt.res)
			assert.Equal(t, tt.want, got.Content)
			assert.Equal(t, tt.structured, got.StructuredContent)
			assert.Equal(t, tt.isError, got.IsError)
			if tt.kind != "" {
				assert.Equal(t, tt.kind, got.Meta[metaKind])
			} else {
				assert.Nil(t, got.Meta)
			}
		})
	}
}

func TestApprovalStoreBoundsAndExpiry(t *testing.T) {
	st := approvalStore{max: 2}
	a, ok := st.put(&heldApproval{expires: farFuture})
	require.True(t, ok)
	_, ok = st.put(&heldApproval{expires: farFuture})
	require.True(t, ok)
	_, ok = st.put(&heldApproval{expires: farFuture})
	assert.False(t, ok, "the store holds at most max")
	require.NotNil(t, st.take(a))
	assert.Nil(t, st.take(a), "a token is good once")
	_, ok = st.put(&heldApproval{expires: farFuture})
	assert.True(t, ok, "taking one frees its place")

	st = approvalStore{max: 1}
	old, ok := st.put(&heldApproval{})
	require.True(t, ok)
	assert.Nil(t, st.take(old), "an expired approval is gone")
	_, ok = st.put(&heldApproval{})
	require.True(t, ok)
	_, ok = st.put(&heldApproval{})
	assert.True(t, ok, "expired approvals are swept to make room")
}

var farFuture = time.Now().Add(time.Hour)

// BenchmarkServeHandler measures what mcp.Server adds on the server's side
// of a call, without the SDK's transport and JSON-RPC: its tools/call
// handler (the loop's pipeline with RunCall, and the conversion of the
// result) against a raw SDK handler that decodes the arguments and
// encodes the same reply.
func BenchmarkServeHandler(b *testing.B) {
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	type addOut struct {
		Sum int `json:"sum"`
	}
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "add", Arguments: json.RawMessage(`{"a":2,"b":40}`)}}
	b.Run("handler=toolloop", func(b *testing.B) {
		reg := &toolloop.ToolRegistry{}
		reg.MustRegister(toolloop.NewTool("add", "Adds two integers.", func(_ context.Context, in addIn) (any, error) {
			return addOut{Sum: in.A + in.B}, nil
		}))
		srv, err := NewServer(&toolloop.AgentLoop{Tools: reg}, &ServeOptions{ListPollInterval: -1})
		require.NoError(b, err)
		defer srv.Close()
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if res, err := srv.callTool(ctx, req); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("handler=sdk-raw", func(b *testing.B) {
		h := func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in addIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			out, err := json.Marshal(addOut{Sum: in.A + in.B})
			if err != nil {
				return nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(out)}}, StructuredContent: json.RawMessage(out)}, nil
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if res, err := h(ctx, req); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
