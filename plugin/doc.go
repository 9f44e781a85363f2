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
// Tools resolve local (added with Register) first, then builtin, then
// plugin, then MCP; a plugin tool whose name is taken is an error unless
// the registry's AllowShadowing is set. Plugin tools go
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
//   - A call whose context is done before it is sent is not sent, and
//     starts no process: it returns the context's error (the loop's
//     timeout or canceled). A call the plugin receives cancelled, or past
//     its deadline, does not start either.
//
// # Memory
//
// The host holds no more of a tool's output than the call's output
// budget (toolloop.Call.MaxOutputBytes, which the loop sets; see
// toolloop.Limits.MaxOutputBytes), whatever the tool returns: the
// budget goes to the plugin with the call, and [Serve] cuts the result's
// text to it before sending it, keeping a head and a tail around a marker
// that says how much was cut, as [toolloop.TruncateText] does. A plugin
// returning 1 GiB of text costs the host a few MiB.
//
// A plugin that ignores the budget (built against an earlier version of
// this package, or hostile) is held to Config.MaxMessageBytes: the host
// reads the size of each message before the message, and skips one over
// the limit unread. Its call fails with kind execution_failed, which
// names both sizes, and the plugin goes on serving. A result under the
// limit is cut to the budget as soon as it is decoded.
//
// Progress and partial output go to the host from a goroutine of their
// own, so a tool never waits for the host. While a report is on its way,
// the next ones are coalesced: partial output into one text of at most
// 64 KiB, beyond which it is dropped and a marker in the text says how
// many bytes were; progress into its latest report. The loop then limits
// the rate of what it records.
//
// # Transport
//
// go-plugin's net/rpc protocol: gob over a multiplexed unix socket, with
// no generated code. Each call is one RPC. Reports travel the other way,
// over a second RPC connection on a go-plugin broker stream that the host
// serves and the plugin dials once at start; a call's result is sent once
// its reports have been, so every report arrives before it. Cancellation
// is a separate RPC naming the call, plus the call's deadline sent along
// as a backstop.
//
// The protocol version has not changed since the budget and the limit
// were added to the call's message: gob skips fields its receiver does
// not know, and their zero values mean what an older host meant. Plugins
// built against the previous version run under this host, held to its
// limit; plugins built with this one run under an older host, which sends
// no budget, so they cut nothing.
package plugin
