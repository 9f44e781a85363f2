//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the protocol of 2026-07-28 but work for at least a year, and servers use them; the issue asks for them.

package mcp_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// A server that asks the client's model for a haiku (sampling). The
// program lets it, after an approval that sees each request, and answers
// with its own model (scripted here).
func ExampleSampling() {
	ctx := context.Background()
	server := sdk.NewServer(&sdk.Implementation{Name: "poet", Version: "1.0.0"}, nil)
	server.AddTool(&sdk.Tool{Name: "haiku", Description: "Writes a haiku.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			// The server asks for the completion in its result; the client
			// calls again with the answer.
			answer, ok := req.Params.InputResponses["haiku"].(*sdk.CreateMessageWithToolsResult)
			if !ok {
				ask := &sdk.CreateMessageParams{MaxTokens: 50, Messages: []*sdk.SamplingMessage{
					{Role: "user", Content: &sdk.TextContent{Text: "A haiku about Go, please."}},
				}}
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"haiku": ask}}, nil
			}
			return &sdk.CallToolResult{Content: answer.Content}, nil
		})

	model := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		return &toolloop.Response{Model: "scripted", Message: toolloop.Message{Role: toolloop.RoleAssistant,
			Content: []toolloop.Content{toolloop.TextContent("gophers in a line / channels hum")}}}, nil
	})
	opts := &mcp.Options{
		Sampling: &mcp.Sampling{
			Model: model,
			Approve: func(_ context.Context, server string, req *mcp.SamplingRequest) (toolloop.Approval, error) {
				fmt.Printf("%s asks for up to %d tokens: %q\n", server, req.MaxTokens, req.Request.Messages[0].Text())
				return toolloop.Approval{Approved: true}, nil
			},
		},
		OnEvent: func(e toolloop.Event) {
			if e.Type == mcp.EventSampling {
				fmt.Println("event:", e.Type, "approved:", e.Approval.Approved)
			}
		},
	}
	src, err := mcp.New("poet", mcp.ServerConfig{
		Sampling: true, // this server may ask
		Transport: func(ctx context.Context) (sdk.Transport, error) {
			client, srv := sdk.NewInMemoryTransports()
			if _, err := server.Connect(ctx, srv, nil); err != nil {
				return nil, err
			}
			return client, nil
		},
	}, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()

	tools, err := src.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	res, err := tools[0].Run(ctx, &toolloop.Call{ID: "1", Name: "poet__haiku", Arguments: []byte(`{}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// poet asks for up to 50 tokens: "A haiku about Go, please."
	// event: mcp.sampling approved: true
	// gophers in a line / channels hum
}
