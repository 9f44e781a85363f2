package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// BenchmarkStdioCall compares one call of the test server's echo tool over
// stdio, made three ways in the same run:
//
//   - sdk: directly with the SDK's client, the baseline;
//   - source: through the Source's Tool.Run, what toolloop adds to a call;
//   - loop: through a whole AgentLoop run of one tool call and a final
//     answer from a scripted model (resolve, validate, execute, truncate,
//     events off), the cost an agent pays per call.
func BenchmarkStdioCall(b *testing.B) {
	args := json.RawMessage(`{"text":"hello"}`)
	ctx := context.Background()

	b.Run("sdk", func(b *testing.B) {
		cfg := stdioConfig(b)
		cmd := exec.Command(cfg.Command)
		cmd.Env = append(os.Environ(), serveEnv+"=1")
		client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})

	src, err := mcp.New("bench", stdioConfig(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	reg := registry(b, src)
	tool, ok := reg.Lookup(ctx, "bench__echo")
	if !ok {
		b.Fatal("no echo tool")
	}

	b.Run("source", func(b *testing.B) {
		call := &toolloop.Call{ID: "1", Name: "bench__echo", Arguments: args}
		b.ReportAllocs()
		for b.Loop() {
			res, err := tool.Run(ctx, call)
			if err != nil || res.IsError() {
				b.Fatal(err, res)
			}
		}
	})

	b.Run("loop", func(b *testing.B) {
		callTurn := &toolloop.Response{Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{
			{ID: "call_1", Name: "bench__echo", Arguments: args}}}}
		endTurn := &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("done")}}}
		model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
			if req.Messages[len(req.Messages)-1].Role == toolloop.RoleTool {
				return endTurn, nil
			}
			return callTurn, nil
		})
		loop := &toolloop.AgentLoop{Model: model, Tools: reg}
		msgs := []toolloop.Message{toolloop.UserMessage("echo hello")}
		b.ReportAllocs()
		for b.Loop() {
			res, err := loop.Run(ctx, msgs)
			if err != nil || res.Messages[2].Result.IsError() {
				b.Fatal(err, res.Messages[2].Result)
			}
		}
	})
}
