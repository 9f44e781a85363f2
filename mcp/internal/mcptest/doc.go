// Package mcptest is a small MCP server, written with the official Go SDK,
// that toolloop's MCP tests and benchmarks run over stdio, streamable HTTP,
// SSE and the SDK's in-memory transport.
//
// Its tools cover what a client must handle:
//
//   - echo: a normal tool; returns its text.
//   - dotted.name: a tool whose name needs sanitizing to be a model-safe name.
//   - add: structured output (and its JSON text fallback).
//   - slow: reports progress for each step and notices cancellation; with
//     a progress token, it pings the client before it answers, so the
//     client has handled every progress report by then.
//   - fail: returns a result with isError set.
//   - image: returns a tiny PNG.
//   - rich: returns one block of every content type.
//   - crash: makes the server process exit in the middle of the call.
//   - add_tool: adds a tool at run time, so the server announces a
//     tools/list_changed notification.
//   - large (only with Options.Large): returns as much text as asked for,
//     and an image as large as asked for.
//
// Tool lists are served two to a page, so every listing paginates.
package mcptest
