package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// Defaults for the zero fields of [ServeOptions].
const (
	DefaultApprovalTimeout     = 2 * time.Minute
	DefaultListPollInterval    = time.Second
	DefaultMaxPendingApprovals = 1024
)

// ErrServerClosed is returned by a [Server] used after Close.
var ErrServerClosed = errors.New("mcp: server closed")

// ServeOptions configure a [Server]. The zero value is the documented
// defaults.
type ServeOptions struct {
	// Implementation is how the server introduces itself to clients; nil
	// means the name "toolloop".
	Implementation *sdk.Implementation
	// Instructions are sent to clients when they connect.
	Instructions string
	// Logger receives the SDK's reports and the server's own (tools it
	// cannot offer, approvals it could not ask for). Nil discards them.
	Logger *slog.Logger

	// ApprovalTimeout bounds the wait for a client's answer to an approval
	// request: the elicitation sent during the call, or, for a client on
	// a protocol version that answers by calling again (multi round-trip
	// requests, 2026-07-28 on), the time until that second call. A call
	// whose approval is not answered in time is denied, saying so. 0 means
	// [DefaultApprovalTimeout] (2 minutes).
	ApprovalTimeout time.Duration
	// MaxPendingApprovals bounds the approvals a server holds while it
	// waits for clients to call again with their answers (multi round-trip
	// requests); a call that would exceed it is denied. 0 means
	// [DefaultMaxPendingApprovals].
	MaxPendingApprovals int
	// EditableArguments adds the call's arguments, as JSON text, to the
	// approval form: a person may change them before approving. Changed
	// arguments go through validation and the guard again (a guard that
	// denies them still denies).
	EditableArguments bool

	// ListPollInterval is how often the server looks at the registry for
	// tools that came, went or changed, to tell clients (the tools
	// list_changed notification). The registry is also looked at before
	// every tools/list and tools/call, so a client never misses a tool it
	// asks for. 0 means [DefaultListPollInterval] (1 second); a negative
	// value turns the polling off.
	ListPollInterval time.Duration
	// HTTP configures [Server.Handler]'s streamable HTTP transport (the
	// SDK's options: JSON responses, session timeout...). Nil means the
	// SDK's defaults. Stateless need not be set for clients of the
	// stateless protocol (2026-07-28 on), which the handler serves anyway;
	// setting it serves every client without sessions.
	HTTP *sdk.StreamableHTTPOptions
	// AllowedOrigins are the origins ("https://app.example.com",
	// "http://localhost:3000") whose browser pages [Server.Handler]
	// serves; a request with another Origin header gets 403 Forbidden
	// (the protocol's guard against DNS rebinding). "*" allows every
	// origin. Requests without an Origin header (programs, not browsers)
	// are always served, and so are loopback origins (localhost,
	// 127.0.0.1, [::1], any port) on a loopback listener.
	AllowedOrigins []string
}

// Server exposes the tools of an [toolloop.AgentLoop]'s registry to MCP
// clients, over stdio ([Server.ServeStdio]), streamable HTTP
// ([Server.Handler]) or any transport of the SDK ([Server.Run]). The tools
// may come from any source: Go functions, builtin tools, plugins, other
// MCP servers.
//
// # Tools
//
// tools/list mirrors the registry: each tool's name, description and input
// schema, and its [toolloop.Annotations] as MCP's hints (title, readOnlyHint,
// destructiveHint, idempotentHint, openWorldHint). A tool with no
// annotations at all gets none, which MCP clients read as the cautious
// defaults (may write, destructive, open world). When the registry
// changes, clients are sent notifications/tools/list_changed (see
// [ServeOptions.ListPollInterval]).
// The loop's ToolFilter and Deferred, which shape what the loop's own
// model is offered each turn, do not apply: a client is offered every
// tool of the registry, and a program that wants to serve fewer serves a
// registry of its own with fewer.
//
// # Calls
//
// Every call goes through the loop's whole pipeline with
// [toolloop.AgentLoop.RunCall]: resolution, argument repair and
// validation, the guard, the pre-hooks, the tool (with the loop's timeout
// and hang protection), the post-hooks, truncation to MaxResultBytes and
// the loop's events. Each call is its own run of one turn: its events
// carry a run ID "mcp_" and a number, and the call ID "call_" and the
// same number.
//
//   - A result becomes content blocks of the same kind (text, image,
//     audio, resources); a JSON object block is also the result's
//     structuredContent, with its text in a text block.
//   - A failed call (any [toolloop.ErrorKind]: invalid arguments, denied,
//     timeout, the tool's own failure...) is a result with isError set and
//     the loop's error text, never a JSON-RPC error; its kind is in the
//     result's _meta under "toolloop/kind". A tool the registry does not
//     have is a JSON-RPC invalid-params error, as the protocol asks.
//   - A client that sent a progress token gets the tool's progress
//     ([toolloop.Call.ReportProgress]) as notifications/progress, at the
//     rate the loop's ReportInterval allows.
//   - A client's notifications/cancelled cancels the call's context; the
//     call ends as the loop ends a cancelled call (within its grace for a
//     tool that ignores its context). Over [Server.Run] and
//     [Server.ServeStdio] no reply is sent for the cancelled request.
//     Over HTTP a reply is what ends the request's stream, so one is
//     sent: a short "canceled" error, never the tool's output (clients
//     ignore replies to requests they cancelled).
//   - An agent served as a tool (see [toolloop.AgentTool]) whose call the
//     client cancels is interrupted now ([toolloop.InterruptNow]), over
//     every transport: its model's turn is cut short, keeping the text it
//     had streamed, and its running calls are cancelled. The loop's
//     OnEvent sees the agent's run.interrupted event (mode now) and its
//     cut turn (a model.response with StopReason interrupted), both with
//     ParentRunID set to the call's run, and the call's result, which
//     says what the agent had written so far (the client, which
//     cancelled, is not sent it).
//
// A tool whose spec allows background runs ([toolloop.ToolSpec].Background)
// is offered as an MCP task to clients that make tasks (see the package
// documentation's "Tasks").
//
// # Approvals
//
// When the guard answers a call with Ask and the loop has an Approver,
// the Approver decides, on the server's side. Otherwise the client is
// asked, if it declared the elicitation capability: a form with a yes/no
// field "approve" (and, with [ServeOptions.EditableArguments], the
// arguments), whose message names the tool, the guard's reason and the
// arguments. Accepting with approve true (or absent) approves; anything
// else (approve false, decline, cancel, an error, no answer within
// [ServeOptions.ApprovalTimeout]) denies, and the call's result says why.
// A client without the capability gets a denial saying the call needs an
// approval it cannot give. The message quotes at most 2 KiB of the
// arguments. An agent served as a tool whose run pauses for approval (see
// [toolloop.AgentTool]) has each call it waits on asked about, and
// resumes; after 8 rounds of asking, what still waits is denied.
//
// A client on protocol 2026-07-28 or later is not sent requests during a
// call: the call's result lists the approval requests and an opaque,
// unguessable state, and the client calls again with its answers (the
// SDK's multi round-trip requests). The server holds the call meanwhile,
// until ApprovalTimeout, at most [ServeOptions.MaxPendingApprovals] calls
// at once; a state is good for one call, and the call runs with the
// arguments that were approved, whatever the second call sends.
//
// A Server holds one goroutine from NewServer to Close that watches the
// registry (none if polling is off), and one per session of [Server.Run],
// which ends before Run returns. Close ends every session, stops the
// watcher and waits for it.
type Server struct {
	sdk    *sdk.Server
	reg    *toolloop.ToolRegistry
	opts   ServeOptions
	logger *slog.Logger

	// plain runs calls without progress; observed runs calls whose client
	// asked for progress, with onEvent added. Both ask instead of denying
	// when the user's loop has no Approver (see serve_approve.go).
	plain, observed *toolloop.AgentLoop
	hasApprover     bool
	userOnEvent     func(toolloop.Event)

	seq   atomic.Uint64
	calls sync.Map // run ID -> *serveCall, for calls that report progress
	// requests holds the contexts of the HTTP POSTs being served, by the
	// token their calls see (see httpHandler.serveStateful).
	requests sync.Map

	syncMu sync.Mutex
	specs  []toolloop.ToolSpec // the registry's specs the SDK server mirrors

	approvals approvalStore
	tasks     taskStore

	mu        sync.Mutex
	closed    bool
	sessions  map[*sdk.ServerSession]struct{}
	done      chan struct{}
	stopWatch context.CancelFunc
	wg        sync.WaitGroup
}

// NewServer makes a server for the tools of loop.Tools, whose calls run
// through loop (its Guard, Approver, Hooks, OnEvent, timeouts and byte
// budgets apply). loop must have Tools; Model is not used. The loop's
// fields must not change while the server runs. opts may be nil. Call
// Close when done.
func NewServer(loop *toolloop.AgentLoop, opts *ServeOptions) (*Server, error) {
	if loop == nil || loop.Tools == nil {
		return nil, errors.New("mcp: NewServer: the loop has no tool registry")
	}
	s := &Server{reg: loop.Tools, done: make(chan struct{}), sessions: map[*sdk.ServerSession]struct{}{}}
	if opts != nil {
		s.opts = *opts
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.approvals.max = DefaultMaxPendingApprovals
	if s.opts.MaxPendingApprovals > 0 {
		s.approvals.max = s.opts.MaxPendingApprovals
	}

	plain := *loop
	s.hasApprover = loop.Approver != nil
	if !s.hasApprover {
		plain.PauseForApproval = true
	}
	observed := plain
	s.userOnEvent = loop.OnEvent
	observed.OnEvent = s.onEvent
	s.plain, s.observed = &plain, &observed

	impl := s.opts.Implementation
	if impl == nil {
		impl = &sdk.Implementation{Name: "toolloop"}
	}
	s.sdk = sdk.NewServer(impl, &sdk.ServerOptions{
		Instructions: s.opts.Instructions,
		Logger:       s.opts.Logger,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
	})
	s.sdk.AddReceivingMiddleware(s.mirrorFirst, s.taskWire)
	if err := s.registerTasks(); err != nil {
		return nil, fmt.Errorf("mcp: NewServer: %w", err)
	}
	s.sync(context.Background())

	if s.opts.ListPollInterval >= 0 {
		ctx, stop := context.WithCancel(context.Background())
		s.stopWatch = stop
		s.wg.Go(func() { s.watch(ctx) })
	}
	return s, nil
}

// Serve serves loop's tools over stdin and stdout until ctx is done or the
// client goes away: the one line a program needs to be an MCP server.
// Stdout then carries the protocol: the program must write nothing else
// to it (log to stderr). It returns nil when the client closed stdin, ctx's
// error when ctx ended it, and [ErrClientGone] when the client went away
// during calls or stopped reading (see [Server.Run]).
func Serve(ctx context.Context, loop *toolloop.AgentLoop, opts *ServeOptions) error {
	s, err := NewServer(loop, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.ServeStdio(ctx)
}

// ServeStdio serves one client over stdin and stdout until ctx is done,
// the client closes stdin or goes away, or the server is closed. It
// returns as [Server.Run] does.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.Run(ctx, &sdk.StdioTransport{})
}

// Run serves one client session over t until ctx is done, the client goes
// away, or the server is closed. Many sessions may run at once. It returns
// nil when the client ended the session or the server was closed, ctx's
// error when ctx ended it, and [ErrClientGone] when the client went away
// (its calls in flight are cancelled).
//
// Over [sdk.StdioTransport] and [sdk.IOTransport], SIGPIPE is caught
// (signal.Notify) while Run runs, so that a client that closed its end of
// stdout makes writes fail with EPIPE, and Run return [ErrClientGone],
// instead of the Go runtime killing the program. After the last such Run
// returns, SIGPIPE is Go's default again.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	if stdioLike(t) {
		defer catchSIGPIPE()()
	}
	gone := &clientGone{}
	ss, err := s.sdk.Connect(ctx, &dropCancelled{Transport: t, gone: gone}, nil)
	if err != nil {
		return err
	}
	if !s.track(ss) {
		_ = ss.Close()
		_ = ss.Wait()
		return ErrServerClosed
	}
	defer s.untrack(ss)
	defer s.tasks.cancelOwned(taskOwner(ss))
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }() // joined below, in every case
	select {
	case err := <-ended:
		// Not when Close or ctx ended the session, and this case won
		// the race: closing the connection ends its reads too.
		if gerr := gone.err(); gerr != nil && ctx.Err() == nil && !s.isClosed() {
			return gerr
		}
		if errors.Is(err, sdk.ErrConnectionClosed) {
			err = nil
		}
		return err
	case <-ctx.Done():
		_ = ss.Close()
		<-ended
		return ctx.Err()
	case <-s.done:
		_ = ss.Close()
		<-ended
		return nil
	}
}

func (s *Server) track(ss *sdk.ServerSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.sessions[ss] = struct{}{}
	return true
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Server) untrack(ss *sdk.ServerSession) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}

// Handler returns an http.Handler that serves the tools over streamable
// HTTP to clients of every protocol version: a session per client for
// clients that initialize one, and none for clients of the stateless
// protocol (2026-07-28 on). It is configured by [ServeOptions.HTTP] and
// [ServeOptions.AllowedOrigins]; see the package documentation's "Serving
// over HTTP" for the status codes and what each version gets. Each
// Handler has sessions of its own; mount one. After Close it refuses new
// sessions (400 Bad Request).
func (s *Server) Handler() http.Handler {
	return s.newHTTPHandler()
}

// Close ends every session (the calls in flight are cancelled), stops
// watching the registry, drops the approvals that wait for an answer, and
// waits for the server's goroutines to end. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.tasks.cancelAll()
	for ss := range s.sdk.Sessions() {
		_ = ss.Close()
	}
	s.wg.Wait()
	s.approvals.clear()
	return nil
}

// SDK returns the underlying SDK server, for what this package does not
// cover (resources, prompts, middleware). A tool added to it directly
// under the name of one of the registry's tools is replaced when that
// tool changes, and removed when it goes.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// watch looks at the registry every ListPollInterval until Close
// cancels ctx.
func (s *Server) watch(ctx context.Context) {
	t := time.NewTicker(orDur(s.opts.ListPollInterval, DefaultListPollInterval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sync(ctx)
		}
	}
}

// mirrorFirst brings the SDK server's tools up to date before the requests
// that read them.
func (s *Server) mirrorFirst(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/list" || method == "tools/call" {
			s.sync(ctx)
		}
		return next(ctx, method, req)
	}
}

// sync makes the SDK server's tools those of the registry. The registry
// hands out the same slice until it changes, so a registry that did not
// change costs a comparison. The SDK tells the sessions when the list
// changed.
func (s *Server) sync(ctx context.Context) {
	specs := s.reg.Specs(ctx)
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if len(specs) == len(s.specs) && (len(specs) == 0 || &specs[0] == &s.specs[0]) {
		return
	}
	old := make(map[string]*toolloop.ToolSpec, len(s.specs))
	for i := range s.specs {
		old[s.specs[i].Name] = &s.specs[i]
	}
	var added []*sdk.Tool
	for i := range specs {
		sp := &specs[i]
		if o, ok := old[sp.Name]; ok {
			delete(old, sp.Name)
			if sameSpec(o, sp) {
				continue
			}
		}
		t, err := sdkTool(sp)
		if err != nil {
			s.logger.Warn("mcp: serve: tool left out", "tool", sp.Name, "err", err)
			continue
		}
		added = append(added, t)
	}
	if len(old) > 0 {
		gone := make([]string, 0, len(old))
		for name := range old {
			gone = append(gone, name)
		}
		s.sdk.RemoveTools(gone...)
	}
	for _, t := range added {
		if err := s.addTool(t); err != nil {
			s.logger.Warn("mcp: serve: tool left out", "tool", t.Name, "err", err)
		}
	}
	s.specs = specs
}

// addTool adds t, turning the SDK's panic on a tool it refuses into an
// error.
func (s *Server) addTool(t *sdk.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the SDK refused it: %v", r)
		}
	}()
	s.sdk.AddTool(t, s.callTool)
	return nil
}

func sameSpec(a, b *toolloop.ToolSpec) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Annotations == b.Annotations &&
		string(a.InputSchema) == string(b.InputSchema) && a.Background == b.Background
}

// objectSchema is the input schema of a tool that says none.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// sdkTool describes sp as an MCP tool. The registry accepts an input
// schema that describes an object without saying "type": "object"; MCP
// requires it, so it is added.
func sdkTool(sp *toolloop.ToolSpec) (*sdk.Tool, error) {
	schema := json.RawMessage(sp.InputSchema)
	if len(schema) == 0 || string(schema) == "null" {
		schema = objectSchema
	} else {
		var m map[string]any
		if err := json.Unmarshal(schema, &m); err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		switch m["type"] {
		case "object":
		case nil:
			m["type"] = "object"
			b, err := json.Marshal(m)
			if err != nil {
				return nil, fmt.Errorf("input schema: %w", err)
			}
			schema = b
		default:
			return nil, fmt.Errorf("input schema of type %v, not object", m["type"])
		}
	}
	t := &sdk.Tool{Name: sp.Name, Title: sp.Annotations.Title, Description: sp.Description, InputSchema: schema}
	if len(sp.OutputSchema) > 0 && string(sp.OutputSchema) != "null" {
		// Declared as the tool declares it: the client checks the
		// structured content against it, as the spec asks.
		if !json.Valid(sp.OutputSchema) {
			return nil, errors.New("output schema is not JSON")
		}
		t.OutputSchema = sp.OutputSchema
	}
	a := sp.Annotations
	switch {
	case a.ReadOnly || a.Destructive || a.Idempotent || a.OpenWorld:
		t.Annotations = &sdk.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnly,
			DestructiveHint: new(a.Destructive && !a.ReadOnly),
			IdempotentHint:  a.Idempotent,
			OpenWorldHint:   new(a.OpenWorld),
		}
	case a.Title != "":
		// Only a title: say nothing about the tool's effects.
		t.Annotations = &sdk.ToolAnnotations{Title: a.Title}
	}
	return t, nil
}
