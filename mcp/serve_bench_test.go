package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

type benchAddIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type benchAddOut struct {
	Sum int `json:"sum"`
}

func benchAdd(in benchAddIn) benchAddOut { return benchAddOut{Sum: in.A + in.B} }

// BenchmarkServeCall measures a tools/call from the SDK's client over
// in-memory transports, to the same Go function served two ways: by
// mcp.Server, through the loop's whole pipeline (resolution, validation,
// guard, hooks, truncation), and by a bare SDK server (sdk.AddTool, which
// validates its input too), both replying with the sum as JSON text and
// structured content. The difference is mcp.Serve's overhead per
// call.
func BenchmarkServeCall(b *testing.B) {
	b.Run("server=toolloop", func(b *testing.B) {
		reg := &toolloop.ToolRegistry{}
		reg.MustRegister(toolloop.NewTool("add", "Adds two integers.", func(_ context.Context, in benchAddIn) (any, error) {
			return benchAdd(in), nil
		}))
		srv, err := mcp.NewServer(&toolloop.AgentLoop{Tools: reg}, &mcp.ServeOptions{ListPollInterval: -1})
		require.NoError(b, err)
		defer srv.Close()
		ct, st := sdk.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- srv.Run(ctx, st) }()
		defer func() {
			cancel()
			<-ran
		}()
		benchCalls(b, ct)
	})
	b.Run("server=sdk", func(b *testing.B) {
		server := sdk.NewServer(&sdk.Implementation{Name: "bare"}, nil)
		// The same reply as mcp.Server's: the JSON as text and as
		// structured content, with no output schema.
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
		ct, st := sdk.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- server.Run(ctx, st) }()
		defer func() {
			cancel()
			<-ran
		}()
		benchCalls(b, ct)
	})
	b.Run("server=sdk-raw", func(b *testing.B) {
		// The least a server can do: a raw handler that decodes the
		// arguments and validates nothing.
		server := sdk.NewServer(&sdk.Implementation{Name: "raw"}, nil)
		server.AddTool(&sdk.Tool{Name: "add", Description: "Adds two integers.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var in benchAddIn
				if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
					return nil, err
				}
				out, err := json.Marshal(benchAdd(in))
				if err != nil {
					return nil, err
				}
				return &sdk.CallToolResult{
					Content:           []sdk.Content{&sdk.TextContent{Text: string(out)}},
					StructuredContent: json.RawMessage(out),
				}, nil
			})
		ct, st := sdk.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- server.Run(ctx, st) }()
		defer func() {
			cancel()
			<-ran
		}()
		benchCalls(b, ct)
	})
}

func benchCalls(b *testing.B, ct sdk.Transport) {
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
	require.NoError(b, err)
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
	}
}
