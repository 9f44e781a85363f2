package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// mcpAdd is the "add" tool of the mcpbench MCP stdio server, called over
// the official SDK's client directly (not through the mcp package, so
// that this benchmark measures the transport alone).
type mcpAdd struct {
	session *mcp.ClientSession
	spec    toolloop.ToolSpec
}

func (t *mcpAdd) Spec() toolloop.ToolSpec { return t.spec }

func (t *mcpAdd) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	res, err := t.session.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: call.Arguments})
	if err != nil {
		return nil, err
	}
	if res.IsError || len(res.Content) != 1 {
		return nil, fmt.Errorf("unexpected result %+v", res)
	}
	return toolloop.TextResult(res.Content[0].(*mcp.TextContent).Text), nil
}

func startMCP(b *testing.B) toolloop.Tool {
	b.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	session, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(build(b, "./internal/mcpbench"))}, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = session.Close() })
	schema, err := toolloop.SchemaFor[addIn]()
	require.NoError(b, err)
	return &mcpAdd{session: session, spec: toolloop.ToolSpec{Name: "add", Description: "Add two integers.", InputSchema: schema}}
}

// BenchmarkCall measures one call of the same "add" tool in process,
// through a plugin process and through an MCP stdio server, first calling
// the tool directly and then through a whole AgentLoop run (one turn with
// the call, one closing turn, with the pipeline's every stage). allocs/op
// count the host's allocations only.
func BenchmarkCall(b *testing.B) {
	local := toolloop.NewTool("add", "Add two integers.", func(_ context.Context, in addIn) (any, error) {
		return strconv.Itoa(in.A + in.B), nil
	})
	src := newSample(b, Config{})
	tools, err := src.Tools(context.Background())
	require.NoError(b, err)
	sources := []struct {
		name string
		kind toolloop.SourceKind
		tool toolloop.Tool
	}{
		{"in_process", toolloop.SourceBuiltin, local},
		{"plugin", toolloop.SourcePlugin, find(b, tools, "add")},
		{"mcp_stdio", toolloop.SourceMCP, startMCP(b)},
	}
	args := json.RawMessage(`{"a":1,"b":2}`)
	for _, s := range sources {
		b.Run("tool/"+s.name, func(b *testing.B) {
			ctx := context.Background()
			call := &toolloop.Call{ID: "c1", Name: "add", Arguments: args}
			b.ReportAllocs()
			for b.Loop() {
				res, err := s.tool.Run(ctx, call)
				if err != nil || res.Text() != "3" {
					b.Fatalf("got %+v, %v", res, err)
				}
			}
		})
	}
	for _, s := range sources {
		b.Run("loop/"+s.name, func(b *testing.B) {
			var reg toolloop.ToolRegistry
			require.NoError(b, reg.AddSource(context.Background(), toolloop.NewSource("bench", s.kind, s.tool)))
			loop := &toolloop.AgentLoop{Tools: &reg, Model: toolloop.ModelFunc(
				func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
					if req.Messages[len(req.Messages)-1].Role == toolloop.RoleUser {
						return looptest.Calls(looptest.Call("c1", "add", string(args))), nil
					}
					return looptest.Text("done"), nil
				})}
			msgs := []toolloop.Message{toolloop.UserMessage("add")}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				out, err := loop.Run(ctx, msgs)
				if err != nil || looptest.Results(out.Messages)["c1"].Text() != "3" {
					b.Fatalf("got %+v, %v", out, err)
				}
			}
		})
	}
}
