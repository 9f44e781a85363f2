//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the protocol of 2026-07-28 but work for at least a year, and servers use them; the issue asks for them.

package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// samplingServer is a Go server whose "ask" tool sends the sampling
// request its arguments describe, and returns the answer as JSON.
func samplingServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct {
				Messages int    `json:"messages"`
				Image    bool   `json:"image"`
				Audio    bool   `json:"audio"`
				Text     string `json:"text"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			p := &sdk.CreateMessageParams{MaxTokens: 100}
			for range max(args.Messages, 1) {
				var c sdk.Content = &sdk.TextContent{Text: args.Text}
				switch {
				case args.Image:
					c = &sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG")}
				case args.Audio:
					c = &sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")}
				}
				p.Messages = append(p.Messages, &sdk.SamplingMessage{Role: "user", Content: c})
			}
			// The protocol of 2026-07-28 asks for input in the result, and
			// the client calls again with the answers (SEP-2322).
			res, ok := req.Params.InputResponses["sample"]
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"sample": p}}, nil
			}
			b, _ := json.Marshal(res)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil
		})
	return srv
}

// TestSamplingGo sends sampling requests from a Go server: images reach
// the model, and requests beyond the bounds are refused before anyone
// sees them.
func TestSamplingGo(t *testing.T) {
	t.Parallel()
	var seen []*toolloop.Request
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		seen = append(seen, req)
		return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant,
			Content: []toolloop.Content{toolloop.TextContent("seen")}}}, nil
	})
	approvals := 0
	cfg := inMemory(samplingServer())
	cfg.Sampling = true
	src := newSource(t, "asker", cfg, mcp.Options{Sampling: &mcp.Sampling{Model: model,
		Approve: func(context.Context, string, *mcp.SamplingRequest) (toolloop.Approval, error) {
			approvals++
			return toolloop.Approval{Approved: true}, nil
		}}}, nil)
	ctx := testContext(t)

	res := callTool(ctx, t, src, "asker__ask", `{"image":true}`)
	require.False(t, res.IsError(), res.Text())
	assert.Contains(t, res.Text(), `"text":"seen"`)
	require.Len(t, seen, 1)
	require.Len(t, seen[0].Messages, 1)
	c := seen[0].Messages[0].Content[0]
	assert.Equal(t, toolloop.ContentImage, c.Type)
	assert.Equal(t, "image/png", c.MIMEType)

	tests := []struct{ name, args string }{
		{"too many messages", `{"messages":101,"text":"x"}`},
		{"too large", `{"messages":2,"text":"` + strings.Repeat("x", mcp.MaxSamplingBytes/2+1) + `"}`},
		{"audio", `{"audio":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(ctx, t, src, "asker__ask", tt.args)
			assert.True(t, res.IsError(), res.Text())
		})
	}
	assert.Len(t, seen, 1, "a refused request reached the model")
	assert.Equal(t, 1, approvals, "a refused request was put to the approver")
}
