package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/plugin"
)

// serveEnv makes the test binary serve the "add" tool instead of running
// the benchmarks: as a plugin when it is "plugin", as an MCP stdio server
// when it is "mcp".
const serveEnv = "TOOLLOOP_COMPARE_SERVE"

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func add(_ context.Context, in addIn) (any, error) { return strconv.Itoa(in.A + in.B), nil }

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "plugin":
		plugin.Serve(toolloop.NewTool("add", "Add two integers.", add))
		return
	case "mcp":
		s := sdk.NewServer(&sdk.Implementation{Name: "compare", Version: "1.0.0"}, nil)
		sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Add two integers."},
			func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.Itoa(in.A + in.B)}}}, nil, nil
			})
		if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	goleak.VerifyTestMain(m)
}

// self is this test binary started again to serve the "add" tool as mode.
func self(tb testing.TB, mode string) *exec.Cmd {
	tb.Helper()
	exe, err := os.Executable()
	require.NoError(tb, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveEnv+"="+mode)
	return cmd
}

// mcpAdd is the "add" tool of the MCP server, called over the official
// SDK's client directly (not through toolloop's mcp package, so that the
// benchmark measures the transport alone).
type mcpAdd struct {
	session *sdk.ClientSession
	spec    toolloop.ToolSpec
}

func (t *mcpAdd) Spec() toolloop.ToolSpec { return t.spec }

func (t *mcpAdd) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	res, err := t.session.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: call.Arguments})
	if err != nil {
		return nil, err
	}
	if res.IsError || len(res.Content) != 1 {
		return nil, fmt.Errorf("unexpected result %+v", res)
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		return nil, fmt.Errorf("unexpected content %T", res.Content[0])
	}
	return toolloop.TextResult(text.Text), nil
}

func startMCP(tb testing.TB) toolloop.Tool {
	tb.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	session, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: self(tb, "mcp")}, nil)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = session.Close() })
	schema, err := toolloop.SchemaFor[addIn]()
	require.NoError(tb, err)
	return &mcpAdd{session: session, spec: toolloop.ToolSpec{Name: "add", Description: "Add two integers.", InputSchema: schema}}
}

func startPlugin(tb testing.TB) toolloop.Tool {
	tb.Helper()
	cmd := self(tb, "plugin")
	src := plugin.New(plugin.Config{Name: "compare", Command: cmd.Path, Env: []string{serveEnv + "=plugin"}})
	tb.Cleanup(func() { _ = src.Close() })
	tools, err := src.Tools(context.Background())
	require.NoError(tb, err)
	require.Len(tb, tools, 1)
	return tools[0]
}

// sources are the same "add" tool three ways.
func sources(tb testing.TB) []struct {
	name string
	kind toolloop.SourceKind
	tool toolloop.Tool
} {
	return []struct {
		name string
		kind toolloop.SourceKind
		tool toolloop.Tool
	}{
		{"in_process", toolloop.SourceBuiltin, toolloop.NewTool("add", "Add two integers.", add)},
		{"plugin", toolloop.SourcePlugin, startPlugin(tb)},
		{"mcp_stdio", toolloop.SourceMCP, startMCP(tb)},
	}
}

// TestSources checks that the three ways give the same answer, so that
// the benchmark compares like with like (and its set-up stays working when
// no one runs benchmarks).
func TestSources(t *testing.T) {
	for _, s := range sources(t) {
		t.Run(s.name, func(t *testing.T) {
			res, err := s.tool.Run(context.Background(), &toolloop.Call{ID: "c1", Name: "add", Arguments: json.RawMessage(`{"a":40,"b":2}`)})
			require.NoError(t, err)
			require.Equal(t, "42", res.Text())
		})
	}
}

// BenchmarkCall measures one call of the same "add" tool in process,
// through a plugin process and through an MCP stdio server, first calling
// the tool directly and then through a whole AgentLoop run (one turn with
// the call, one closing turn, with the pipeline's every stage). allocs/op
// count the host's allocations only.
func BenchmarkCall(b *testing.B) {
	srcs := sources(b)
	args := json.RawMessage(`{"a":1,"b":2}`)
	for _, s := range srcs {
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
	for _, s := range srcs {
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
