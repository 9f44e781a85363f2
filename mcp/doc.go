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
// errors and a server that stops mid-call (a [ConnectionLostError]); the
// server's progress
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
// # Structured content
//
// A result's structuredContent reaches the model once. Servers send it
// beside a text block for clients that do not read it, and that text
// usually says the same thing: the reference servers send the JSON of
// the value (server-everything, server-sequential-thinking, server-memory's
// read_graph), the value wrapped in an object ({"content": text} for every
// text tool of server-filesystem; {"entities": [...]} beside the array's
// JSON, or {"success": true, "message": text}, in server-memory), or the
// content blocks themselves (server-filesystem's read_media_file). So:
//
//   - when the text carries the same information (the rules are on
//     mergeStructured and carries in content.go: the text is JSON for the
//     value; or the value is an object whose string members, beside
//     booleans only, joined make the text; or an object of one member
//     whose value the text is JSON for; or the value, or its one member,
//     is the content blocks), only the text is sent, as the server wrote
//     it, since that is what the server meant a model to read;
//   - when there is no content at all, the value is sent as a JSON block;
//   - otherwise the text is a summary that says something else (such as
//     "3 entities created" beside the entities), and both are sent, the
//     text first.
//
// A 40 KB file read from server-filesystem thus costs 40 KB, not 82 KB,
// and fits the loop's 64 KiB result budget whole.
//
// # Client capabilities
//
// Servers may ask things of the client. Each capability is off until it is
// configured, and a capability that is off is not declared to the server
// (see [Options] and the "Client capabilities" fields of [ServerConfig]):
//
//   - roots: the workspace directories a server may use ([Options.Roots]
//     or [ServerConfig].Roots), changed with [Source.SetRoots];
//   - sampling: a server's requests for a completion are answered by a
//     [toolloop.Model] of yours, each through [Sampling].Approve (none
//     means every request is refused, so a server cannot spend tokens
//     unseen), and each reported as an [EventSampling] event;
//   - elicitation: a server's questions for the user go to an
//     [ElicitFunc], as approvals go to a [toolloop.Approver];
//   - logging: a server's log messages become [EventLog] events through
//     [Options.OnEvent] (redacted, cut to [MaxLogBytes]) and log records,
//     at the level [ServerConfig].LogLevel asks for;
//   - resources and prompts: [Source.Resources], [Source.ReadResource],
//     [Source.Subscribe] (updates as [EventResourceUpdated] events),
//     [Source.Prompts], [Source.GetPrompt]; [ServerConfig].ResourceTools
//     also offers the model two read-only tools for them;
//   - output schemas: a tool's outputSchema is carried in
//     [toolloop.ToolSpec].OutputSchema, and a result whose structured
//     content breaks it fails with kind execution_failed;
//   - OAuth for HTTP servers ([ServerConfig].OAuth, [TokenAuth]), with
//     tokens kept out of logs and errors;
//   - and [Source.Session] for the rest of the protocol.
//
// # Serving tools
//
// [NewServer] and [Serve] expose a loop's [toolloop.ToolRegistry], whatever
// its sources, to MCP clients over stdio, streamable HTTP
// ([Server.Handler]) or any SDK transport ([Server.Run]). Every call runs
// through the loop's whole pipeline ([toolloop.AgentLoop.RunCall]): its
// guard, hooks, timeouts, truncation and events apply. Tool failures are
// isError results carrying their kind in _meta["toolloop/kind"]; a JSON
// object result is also sent as structuredContent; progress becomes
// notifications/progress; a client's cancellation cancels the call, with
// no reply over stdio (over HTTP the reply that closes the request's
// stream says the call was canceled, never what the tool returned). An
// approval the guard asks for is put to the client as an elicitation when
// it declared that capability, and is otherwise denied.
//
// A client that goes away does not take the server with it. Over stdio,
// [Serve] catches SIGPIPE while it runs (reference-counted across
// sessions; Go's default again once the last returns), so a client that
// closed its end of stdout makes the next write fail instead of killing
// the program. A failed write, or stdin's end while calls are in flight,
// cancels those calls (their tools see their context end), and Serve
// returns [ErrClientGone], so the program's deferred cleanup runs. A
// client that closes stdin between calls ends the session: Serve
// returns nil. Over HTTP ([Server.Handler]), a call whose client's
// connection closes before its result is written is cancelled the same
// way (the stateless protocol's calls end with their request; a session's
// with the POST that carried them), unless ServeOptions.HTTP has an
// EventStore, with which a client may resume the call's stream; the
// server and its other sessions go on.
//
// # Tasks
//
// MCP tasks let a long call run on its server while the client polls it.
// The package speaks the wire the TypeScript SDK (1.32.2) speaks: the
// experimental tasks of the 2025-11-25 protocol (a tools/call with a
// "task" param answered at once with the task; tasks/get, tasks/result,
// tasks/cancel, tasks/list; capabilities.tasks.requests.tools.call and a
// tool's execution.taskSupport). The Go SDK has none of it, so the
// package adds it on the SDK's custom methods and middleware, reading
// what the SDK's types drop from the raw messages.
//
// As a client: a tool whose server declares tasks for tools/call and
// whose taskSupport is "optional" or "required" gets
// [toolloop.ToolSpec].Background, so the model may run it as a
// background job. A call with [toolloop.Call].Job set (and every call of
// a "required" tool) runs as a task: tasks/get is polled at the server's
// pollInterval (kept within 100 ms and 5 s; 1 s if it gives none), each
// new statusMessage is reported as progress and as a line of the job's
// output, and tasks/result, once the task ends, is converted as any
// call's result is (output schema, budget). A task the server fails or
// cancels without a result is a [TaskError] (kind execution_failed).
// When the call's context ends, the server is sent tasks/cancel, for at
// most 5 s, and the call returns the context's error. A server without
// tasks, a tool without taskSupport, or a Transport of your own
// ([ServerConfig].Transport, whose messages the package cannot read) is
// called as before.
//
// As a server ([Serve], [Server]): a tool whose spec has Background is
// listed with taskSupport "optional", and the server declares
// capabilities.tasks (list, cancel, tools/call). A tools/call with a task
// param runs the call in the background through the same pipeline as
// any served call (guard, approval, hooks, events), answered at once
// with the task; its progress and partial output become the task's
// statusMessage. tasks/result waits for the end; tasks/cancel cancels the
// call's context and waits, at most 10 s, for the call to return before
// it answers. A task ID is unguessable and is the capability to the task
// (a client on the stateless protocol of 2026-07-28 has no session to
// tie it to); tasks/list lists the tasks of the caller's session. At most
// 64 tasks run per session and 1024 are kept per server; an ended task is
// kept for its ttl (10 minutes by default, at most an hour). A task whose
// approval would need the client to call again (multi round-trip
// clients) is denied. A session that ends over [Server.Run] or
// [Server.ServeStdio] cancels its tasks; Close cancels all.
//
// # Serving over HTTP
//
// [Server.Handler] serves clients of every protocol version the Go SDK
// speaks, on one URL, with no setting: a POST without an Mcp-Session-Id
// header that names protocol 2026-07-28 or later (its
// Mcp-Protocol-Version header, or the request's _meta), or that is a
// server/discover, goes to the SDK's stateless handler; everything else
// to its stateful one, where initialize starts a session. What a client
// gets:
//
//	version     start            session         list_changed               approvals            tasks
//	2024-11-05  initialize       Mcp-Session-Id  on the session's streams   elicitation/create   tasks/* (1)
//	2025-03-26  initialize       Mcp-Session-Id  on the session's streams   elicitation/create   tasks/* (1)
//	2025-06-18  initialize       Mcp-Session-Id  on the session's streams   elicitation/create   tasks/* (1)
//	2025-11-25  initialize       Mcp-Session-Id  on the session's streams   elicitation/create   tasks/* (1)
//	2026-07-28  server/discover  none            on subscriptions/listen    multi round trip (2) tasks/* by ID (3)
//
// Every version gets tools/list, tools/call, progress on the call's
// stream, and cancellation (on 2026-07-28, by closing the call's
// request, which ends the call's context). Elicitation goes only to a client that
// declared the capability; a call whose approval cannot be asked is
// denied, saying why. A 2026-07-28 client may skip server/discover.
//
//  1. The experimental tasks of 2025-11-25 (see "Tasks"), for a client
//     that sends a task param, whatever version it negotiated.
//  2. The server sends the client no requests (no elicitation, no
//     sampling, no roots: the SDK refuses them without a session); an
//     approval is asked for in the call's result, and the client calls
//     again with its answer (see [Server]).
//  3. tasks/get, tasks/result and tasks/cancel by the task's ID; tasks/list
//     lists nothing, since there is no session whose tasks it could list;
//     a task whose approval needs a round trip is denied.
//
// [ServeOptions].HTTP.Stateless serves every client as the stateless
// handler does: the older versions then get a session of one request
// each (no list_changed, no elicitation).
//
// Status codes, beyond the SDK's: a request from a browser page whose
// Origin is not allowed gets 403 Forbidden (the protocol's guard
// against DNS rebinding): allowed are the [ServeOptions].AllowedOrigins
// and, on a loopback listener, loopback origins (http or https, localhost,
// 127.0.0.1 or [::1], any port); a request without Origin (not from a
// browser) is served. A request that needs a session and sends no
// Mcp-Session-Id gets 400 Bad Request with a JSON-RPC error (-32600); a
// session ID the handler does not know (never made, ended by DELETE,
// timed out, or the server restarted) gets 404 Not Found, on which
// clients start a new session. The SDK's own checks stay: a loopback
// listener reached under another Host name is 403, and a body over
// MaxRequestBodyBytes 413.
//
// # Timeouts and bounds
//
// Every wait and every buffer of the package is bounded:
//
//   - Starting a server (its process, or the HTTP exchange) and the
//     protocol handshake: [Options.ConnectTimeout], 30 s by default. A
//     server that does not finish starting in time fails with a
//     [TimeoutError] (errors.Is [context.DeadlineExceeded]) naming it and
//     the limit. Listing its tools is bounded by the same limit.
//   - Stopping a stdio server: stdin closed, then SIGTERM after
//     [Options.ShutdownTimeout] (5 s by default), then SIGKILL after as
//     long again, then at most 10 s for it to be reaped. A process that
//     leaves its stderr open to a child is given up on one second after
//     it exits (exec.Cmd.WaitDelay). A server that failed to start has
//     its process group sent SIGTERM as its stdin is closed, and SIGKILL
//     one second later if any of it is still there.
//   - Register blocks, with the defaults, for at most about 31 s on a
//     server that never answers its start (ConnectTimeout, then at most
//     one second for its stopping, however it treats SIGTERM or its
//     children; see TestStartTimeoutBound), and about twice
//     ConnectTimeout on one that answers the handshake just in time and
//     then never lists its tools. The servers start in parallel, so this
//     is the bound for any number of them. A lazy server starts on first
//     use instead, within the same bounds.
//   - Restarting a server that keeps failing: the first restart is
//     immediate, then the wait doubles from [Options.MinBackoff] (250 ms)
//     to [Options.MaxBackoff] (30 s). A remote server that refuses
//     connections is tried again on each call, since a refused
//     connection costs nothing.
//   - What a call keeps of a server's answer: [Options.MaxOutputBytes]
//     or the call's own budget (the loop's default is 1 MiB) of text,
//     [Options.MaxBinaryBytes] (8 MiB of base64) of images, audio and
//     blobs, and 16 MiB of anything else in a message; an HTTP error's
//     body is read up to 64 KiB. The loop then cuts each result to its
//     result budget (64 KiB by default).
//   - A stdio server's stdout: lines that are not JSON-RPC messages (a
//     banner, a log line) are logged at Warn, with the server's name, and
//     skipped: up to 64 KiB of them before its first message (beyond, the
//     server fails to start), any number after it, since such a line can
//     be nothing but noise and the SDK would end the session on it. At
//     most 256 bytes of each skipped line are logged.
//   - A stdio server's stderr: logged line by line (a line longer than
//     8 KiB in pieces); its last 20 lines, at most 4 KiB, are kept
//     whether or not there is a Logger, and given in its start errors
//     with its exit status.
//   - A streamable HTTP server's lost connection: a request whose
//     connection is refused, or that the server answers with 404 (or
//     with 400 and the JSON-RPC code -32000) for the session it carried,
//     ends the session; a call whose own request met that was provably
//     not processed, and is sent once more, on a new session. An event
//     stream that breaks makes the source check the server's address at
//     once, for at most 500 ms (asking again every 20 ms while a dying
//     server still accepts connections and drops them): if it refuses
//     connections, the session ends and the calls in flight fail at once
//     with a [ConnectionLostError] (measured with server-everything,
//     killed with SIGKILL mid-call: 31 to 41 ms on average, 129 ms at
//     most, over 40 kills; BenchmarkHTTPServerDies). If the server is
//     still there, the SDK's own reconnection (its default of 5 attempts,
//     1 to 2 s apart at first, growing 1.5 times) resumes the stream, as
//     it was made to for streams that a proxy cuts or a server closes on
//     purpose. So is a server whose address does not answer at all within
//     the 500 ms (a host gone from the network): its calls fail when those
//     attempts run out, 15 to 25 s later.
//   - A call: the loop's per-call timeout ([toolloop.AgentLoop].ToolTimeout,
//     or [ServerConfig].Timeout for one server's tools); a call to a
//     serialized server ([ServerConfig].Serialize) waits its turn within
//     it.
//   - Closing an HTTP source: the SDK bounds the request that ends the
//     session at 5 s.
//   - What servers ask of the client: at most [MaxRoots] roots; a sampling
//     request of at most [MaxSamplingMessages] messages and
//     [MaxSamplingBytes], its maxTokens capped at [Sampling].MaxTokens
//     ([DefaultSamplingMaxTokens]); an elicitation of at most
//     [MaxElicitMessageBytes] of message and [MaxElicitSchemaBytes] of
//     schema; a log message kept to [MaxLogBytes]; a listing of resources,
//     templates or prompts of at most [MaxListItems] items.
//   - Serving: the registry is checked for changes before each listing
//     and call, and polled every [ServeOptions].ListPollInterval (1 s) to
//     notify clients; an approval put to a client waits at most
//     [ServeOptions].ApprovalTimeout (2 minutes), at most
//     [ServeOptions].MaxPendingApprovals (1024) are held for clients that
//     answer by calling again, and a call asks at most 8 times; an
//     approval not answered is a denial.
//
// For tests, and for servers living in the same process, set
// [ServerConfig].Transport to return one end of the SDK's
// NewInMemoryTransports (see the example).
package mcp
