// Package mcp offers the tools of MCP (Model Context Protocol) servers to a
// toolloop agent, over stdio or streamable HTTP, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// Each server is a [Source] of kind mcp: add it to a [toolloop.ToolRegistry]
// and its tools reach the model as "server__tool", pass through the same
// validation, guards, hooks, truncation and events as every other tool, and
// carry the server's name as their provenance in results and events.
//
// Servers are configured in the "mcpServers" JSON shape that desktop and
// editor agents use ([LoadConfig]), or in Go ([ServerConfig]):
//
//	cfg, err := mcp.LoadConfig("mcp.json")
//	...
//	servers, err := mcp.NewServers(cfg, &mcp.Options{Logger: logger})
//	...
//	defer servers.Close()
//	if err := servers.Register(ctx, reg); err != nil {
//		logger.Warn("some MCP servers are unavailable", "err", err)
//	}
//
// A server's content (text, images, audio, resource links, embedded
// resources, structured content) becomes [toolloop.Content]; a result with
// isError becomes an error result of kind execution_failed, as do protocol
// errors and a server that stops mid-call; the server's progress
// notifications become tool.execution_progress events of the call; and a
// call that is cancelled or times out sends the server the protocol's
// cancellation notice. See [Source] for connecting lazily, restarts and
// tool-list changes.
//
// What a stdio, HTTP or SSE server sends is cut to the call's output
// budget ([toolloop.Call.MaxOutputBytes], or [Options.MaxOutputBytes])
// while it is read, before it is decoded, so a server that returns
// gigabytes costs the client no more memory than the budget: long text is
// cut in the middle around a marker saying how much was cut, content that
// does not fit is left out with a note saying so, and a message that
// cannot be cut fails its call with an execution_failed error naming its
// size and the limit (see [Options.MaxOutputBytes]).
//
// For tests, and for servers living in the same process, set
// [ServerConfig].Transport to return one end of the SDK's
// NewInMemoryTransports (see the example).
package mcp
