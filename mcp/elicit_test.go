package mcp_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// TestElicitationEverything runs server-everything's elicitation tool:
// the server asks the user, through the client's handler.
func TestElicitationEverything(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer mcp.ElicitResult
		err    error
		want   string
		failed bool
	}{
		{name: "accept", answer: mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada", "check": true}},
			want: "- Name: Ada"},
		{name: "accept fills in defaults", answer: mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada"}},
			want: "- Favorite Integer: 42"},
		{name: "decline", answer: mcp.ElicitResult{Action: mcp.ElicitDecline, Content: map[string]any{"name": "dropped"}},
			want: "User declined"},
		{name: "cancel", answer: mcp.ElicitResult{Action: mcp.ElicitCancel}, want: "User cancelled"},
		{name: "answer that violates the schema", answer: mcp.ElicitResult{Action: mcp.ElicitAccept,
			Content: map[string]any{"name": "Ada", "integer": 500}}, failed: true},
		{name: "answer without a required field", answer: mcp.ElicitResult{Action: mcp.ElicitAccept,
			Content: map[string]any{"check": true}}, failed: true},
		{name: "unknown action", answer: mcp.ElicitResult{Action: "maybe"}, failed: true},
		{name: "handler error", err: errTest, failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var asked []*mcp.ElicitRequest
			cfg := everythingConfig(t)
			cfg.Elicitation = true
			src := newSource(t, "everything", cfg, mcp.Options{
				Elicit: func(_ context.Context, server string, req *mcp.ElicitRequest) (mcp.ElicitResult, error) {
					assert.Equal(t, "everything", server)
					mu.Lock()
					asked = append(asked, req)
					mu.Unlock()
					return tt.answer, tt.err
				},
			}, nil)
			ctx := testContext(t)
			res := callTool(ctx, t, src, "everything__trigger-elicitation-request", `{}`)
			assert.Equal(t, tt.failed, res.IsError(), res.Text())
			if tt.failed {
				assert.Equal(t, toolloop.KindExecutionFailed, res.Error.Kind)
			}
			assert.Contains(t, res.Text(), tt.want)
			if tt.answer.Action == mcp.ElicitDecline {
				assert.NotContains(t, res.Text(), "dropped", "a declined answer carried content")
			}
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, asked, 1)
			assert.Equal(t, "Please provide inputs for the following fields:", asked[0].Message)
			var schema struct {
				Type       string         `json:"type"`
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			}
			require.NoError(t, json.Unmarshal(asked[0].Schema, &schema))
			assert.Equal(t, "object", schema.Type)
			assert.Contains(t, schema.Properties, "email")
			assert.Equal(t, []string{"name"}, schema.Required)
		})
	}
}

// TestElicitationRefusedGo: requests the client does not take are refused
// before the handler sees them.
func TestElicitationRefusedGo(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct {
				URL     bool `json:"url"`
				Message int  `json:"message"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if ans, ok := req.Params.InputResponses["q"].(*sdk.ElicitResult); ok {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: ans.Action}}}, nil
			}
			p := &sdk.ElicitParams{Message: strings.Repeat("?", max(args.Message, 1)),
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}
			if args.URL {
				p = &sdk.ElicitParams{Mode: "url", Message: "open this", URL: "https://example.com/login", ElicitationID: "e1"}
			}
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"q": p}}, nil
		})
	asked := 0
	cfg := inMemory(srv)
	cfg.Elicitation = true
	src := newSource(t, "asker", cfg, mcp.Options{
		Elicit: func(context.Context, string, *mcp.ElicitRequest) (mcp.ElicitResult, error) {
			asked++
			return mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"ok": true}}, nil
		},
	}, nil)
	ctx := testContext(t)
	res := callTool(ctx, t, src, "asker__ask", `{}`)
	require.False(t, res.IsError(), res.Text())
	assert.Equal(t, "accept", res.Text())
	assert.Equal(t, 1, asked)
	for _, args := range []string{`{"url":true}`, `{"message":` + strconv.Itoa(mcp.MaxElicitMessageBytes+1) + `}`} {
		res := callTool(ctx, t, src, "asker__ask", args)
		assert.True(t, res.IsError(), "%s: %s", args, res.Text())
	}
	assert.Equal(t, 1, asked, "a refused request reached the handler")
}
