// Package toolloop runs the agent tool-call loop for Go programs.
//
// A model emits tool calls; toolloop resolves each one across its tool
// sources, validates its arguments against the tool's JSON Schema, asks the
// guard, runs the pre-hooks, executes the tool, runs the post-hooks,
// truncates the output, and feeds back exactly one [ToolResult] per call
// ID, in call order, turn after turn, until the model stops:
//
//	normalize → resolve → validate → guard → pre-hook → execute → post-hook → truncate
//
// Every stage's failure is a result the model sees (status error, with an
// [ErrorKind]), never a panic and never a dropped call. A misbehaving model,
// a panicking or hanging tool, or a cancelled context leaves a transcript
// that is valid to send to a model again.
//
// The pieces:
//
//   - [Message], [ToolCall] and [ToolResult] form a provider-neutral
//     transcript that round-trips through JSON.
//   - [Model] is the only thing the loop knows about a provider; see the
//     providers/ packages, and looptest for a scripted model.
//   - [Tool] and [Source] supply tools; [NewTool] builds one from a Go
//     function and infers its schema. A [ToolRegistry] resolves names
//     across sources: builtin, then plugin, then mcp.
//   - [Guard], [RuleGuard] and [Approver] decide whether a call may run.
//   - [Hooks] change calls and results around execution.
//   - [AgentLoop] runs it all and reports [Event]s.
//
// The root package depends only on the standard library, a JSON Schema
// validator, a schema inference library and golang.org/x/sync. Provider,
// MCP and plugin SDKs live in subpackages.
package toolloop
