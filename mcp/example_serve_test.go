package mcp_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// A Go tool offered to MCP clients, with the loop's guard applied to every
// call. A program serving on stdio needs one line, mcp.Serve(ctx, loop,
// nil); over HTTP, mount srv.Handler(). Here the client, written with the
// SDK, is in the same process, on in-memory transports.
func ExampleNewServer() {
	ctx := context.Background()

	type forecastIn struct {
		City string `json:"city"`
	}
	forecast := toolloop.NewTool("forecast", "Tomorrow's weather for a city.", func(_ context.Context, in forecastIn) (any, error) {
		return "Sunny in " + in.City, nil
	})
	forecast.Annotations = toolloop.Annotations{ReadOnly: true}
	reg := &toolloop.ToolRegistry{}
	reg.MustRegister(forecast)
	loop := &toolloop.AgentLoop{
		Tools: reg,
		Guard: toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if string(c.Arguments) == `{"city":"Atlantis"}` {
				return toolloop.Verdict{Decision: toolloop.Deny, Reason: "no such city"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		}),
	}

	srv, err := mcp.NewServer(loop, &mcp.ServeOptions{Implementation: &sdk.Implementation{Name: "weather", Version: "1.0.0"}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx, serverEnd) }()

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools.Tools {
		fmt.Printf("tool: %s (read-only: %v)\n", t.Name, t.Annotations.ReadOnlyHint)
	}
	for _, city := range []string{"Lisbon", "Atlantis"} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": city}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %q, isError %v\n", city, res.Content[0].(*sdk.TextContent).Text, res.IsError)
	}
	cs.Close()
	<-served
	// Output:
	// tool: forecast (read-only: true)
	// Lisbon: "Sunny in Lisbon", isError false
	// Atlantis: "denied by policy: no such city", isError true
}
