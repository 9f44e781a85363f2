package mcp_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// An agent using the tools of an MCP server. The server runs in this
// process on the SDK's in-memory transport; a real one would be configured
// with a Command or a URL instead of Transport.
func Example() {
	ctx := context.Background()

	// The server, written with the SDK.
	server := sdk.NewServer(&sdk.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	type forecastIn struct {
		City string `json:"city"`
	}
	sdk.AddTool(server, &sdk.Tool{Name: "forecast", Description: "Tomorrow's weather for a city."},
		func(_ context.Context, _ *sdk.CallToolRequest, in forecastIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Sunny in " + in.City}}}, nil, nil
		})

	// The source: one per server.
	src, err := mcp.New("weather", mcp.ServerConfig{
		Transport: func(ctx context.Context) (sdk.Transport, error) {
			client, srv := sdk.NewInMemoryTransports()
			if _, err := server.Connect(ctx, srv, nil); err != nil {
				return nil, err
			}
			return client, nil
		},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()

	var reg toolloop.ToolRegistry
	if err := reg.AddSource(ctx, src); err != nil {
		log.Fatal(err)
	}
	for _, spec := range reg.Specs(ctx) {
		fmt.Println("tool:", spec.Name)
	}

	// A scripted model: it calls the tool once, then answers.
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == toolloop.RoleTool {
			return &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{
				toolloop.TextContent("Pack sunglasses: " + last.Result.Text() + "."),
			}}}, nil
		}
		return &toolloop.Response{Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{
			{ID: "call_1", Name: "weather__forecast", Arguments: []byte(`{"city":"Lisbon"}`)},
		}}}, nil
	})
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("What should I pack for Lisbon?")})
	if err != nil {
		log.Fatal(err)
	}
	r := res.Messages[2].Result
	fmt.Printf("result: %q from %s server %q\n", r.Text(), r.Meta.Source, r.Meta.SourceName)
	fmt.Println("answer:", res.FinalText)
	// Output:
	// tool: weather__forecast
	// result: "Sunny in Lisbon" from mcp server "weather"
	// answer: Pack sunglasses: Sunny in Lisbon.
}

func ExampleParseConfig() {
	cfg, err := mcp.ParseConfig([]byte(`{
		"mcpServers": {
			"files": {"command": "npx", "args": ["-y", "some-files-server", "/srv/data"], "denyTools": ["delete_*"]},
			"search": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${EXAMPLE_SEARCH_TOKEN:-none}"}, "lazy": true}
		}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Servers["files"].Command, cfg.Servers["files"].DenyTools)
	fmt.Println(cfg.Servers["search"].URL, cfg.Servers["search"].Headers["Authorization"], cfg.Servers["search"].Lazy)
	// Output:
	// npx [delete_*]
	// https://mcp.example.com/mcp Bearer none true
}

func ExampleToolName() {
	fmt.Println(mcp.ToolName("github", "create_issue"))
	fmt.Println(mcp.ToolName("my files", "files.read"))
	// Output:
	// github__create_issue
	// my_files__files_read
}
