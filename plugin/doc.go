// Package plugin runs capability tools in their own processes, on
// HashiCorp's go-plugin (the plugin system behind Terraform and Vault): a
// crash, a leak or a hang in a plugin cannot take the agent down.
//
// A plugin is an ordinary Go program that hands its tools to [Serve]:
//
//	func main() {
//		plugin.Serve(
//			toolloop.NewTool("word_count", "Count the words of a text.", countWords),
//		)
//	}
//
// The host runs it as a [Source] of kind plugin, which it adds to its
// registry like any other source:
//
//	src := plugin.New(plugin.Config{Name: "text", Command: "./text-tools"})
//	defer src.Close()
//	if err := reg.AddSource(ctx, src); err != nil { // starts the process
//		return err // a failed handshake wraps plugin.ErrHandshake
//	}
//
// Tools resolve builtin first, then plugin, then MCP, and plugin tools go
// through the loop's whole pipeline (validation against the schema the
// plugin declares, guard, hooks, truncation). Progress and partial output
// a plugin's tool reports become the same events as a built-in tool's,
// with the plugin's name as their SourceName.
//
// # Faults
//
//   - A tool that panics is recovered in the plugin; its call fails with
//     kind panic and the plugin goes on serving. A *toolloop.ToolError a
//     tool returns keeps its kind.
//   - A plugin that dies mid-call (a crash, os.Exit) fails the call at once,
//     with kind execution_failed, and is started again on the next call.
//   - When a call times out or its run is cancelled, the host returns at
//     once and the plugin's context for the call is cancelled. A plugin
//     still running the call Config.HangTimeout later is stopped.
//   - Close stops the process and waits for it to exit. A plugin whose host
//     dies without closing it notices, and exits.
//
// # Transport
//
// go-plugin's net/rpc protocol: gob over a multiplexed unix socket, with
// no generated code. Each call is one RPC. Reports travel the other way,
// over a second RPC connection on a go-plugin broker stream that the host
// serves and the plugin dials once at start; each report is a synchronous
// call, so every report arrives before the call's result. Cancellation is
// a separate RPC naming the call, plus the call's deadline sent along as
// a backstop.
package plugin
