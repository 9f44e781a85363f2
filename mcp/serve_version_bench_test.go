package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// BenchmarkServeHTTPVersion measures a tools/call over streamable HTTP on
// loopback, from the SDK's client on each protocol version it speaks, to
// [mcp.Server.Handler] (the default handler, which serves every version),
// and, for the newest session protocol and the stateless one, to a bare
// SDK server behind the SDK's own handler (stateful, or Stateless for
// 2026-07-28), serving the same Go function. The difference is what
// mcp.Serve costs per call over HTTP, its handler included.
func BenchmarkServeHTTPVersion(b *testing.B) {
	for _, version := range sdk.SupportedProtocolVersions() {
		b.Run("server=toolloop/version="+version, func(b *testing.B) {
			reg := &toolloop.ToolRegistry{}
			reg.MustRegister(toolloop.NewTool("add", "Adds two integers.", func(_ context.Context, in benchAddIn) (any, error) {
				return benchAdd(in), nil
			}))
			srv, err := mcp.NewServer(&toolloop.AgentLoop{Tools: reg}, &mcp.ServeOptions{ListPollInterval: -1})
			require.NoError(b, err)
			defer srv.Close()
			benchHTTPCalls(b, srv.Handler(), version)
		})
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		b.Run("server=sdk/version="+version, func(b *testing.B) {
			server := sdk.NewServer(&sdk.Implementation{Name: "bare"}, nil)
			sdk.AddTool(server, &sdk.Tool{Name: "add", Description: "Adds two integers."},
				func(_ context.Context, _ *sdk.CallToolRequest, in benchAddIn) (*sdk.CallToolResult, any, error) {
					out, err := json.Marshal(benchAdd(in))
					if err != nil {
						return nil, nil, err
					}
					return &sdk.CallToolResult{
						Content:           []sdk.Content{&sdk.TextContent{Text: string(out)}},
						StructuredContent: json.RawMessage(out),
					}, nil, nil
				})
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server },
				&sdk.StreamableHTTPOptions{Stateless: version >= "2026-07-28"})
			benchHTTPCalls(b, h, version)
		})
	}
}

func benchHTTPCalls(b *testing.B, h http.Handler, version string) {
	hs := httptest.NewServer(h)
	defer hs.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: hs.URL}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(b, err)
	defer cs.Close()
	require.Equal(b, version, cs.InitializeResult().ProtocolVersion)
	params := &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
	}
}
