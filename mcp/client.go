//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the protocol of 2026-07-28 but work for at least a year, and servers use them; the issue asks for them.

package mcp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
	redaction "github.com/toolloop/toolloop/sanitize"
)

// The events a source reports to [Options.OnEvent]. Each carries Source
// mcp, SourceName the server's name, and the time it happened.
const (
	// EventLog is a log message of the server (notifications/message):
	// Text is the JSON object {"level", "logger", "data"}, secrets
	// redacted, and cut to [MaxLogBytes].
	EventLog toolloop.EventType = "mcp.log"
	// EventResourceUpdated: a resource subscribed to with
	// [Source.Subscribe] changed; Text is its URI.
	EventResourceUpdated toolloop.EventType = "mcp.resource_updated"
	// EventSampling: the server asked for a model completion. Approval
	// holds the decision; an approved request's Usage is what the model
	// spent, and Error says why a request failed.
	EventSampling toolloop.EventType = "mcp.sampling"
)

// clientState is what the client capabilities keep for a source.
type clientState struct {
	redact redaction.Redactor

	mu    sync.Mutex
	roots []string // URIs; nil means the roots capability is off
	subs  map[string]bool

	// outputs maps a tool's remote name to its compiled output schema.
	outputs sync.Map
	// resourceKey marks the resource tools the source adds to its tool
	// listings, so that a server cannot pass its own tools off as them.
	resourceKey string
}

// newClient checks the configuration of the client capabilities and
// returns the SDK client that declares those configured, and only those.
func (s *Source) newClient(impl *sdk.Implementation) (*sdk.Client, error) {
	cfg, opts := &s.cfg, &s.opts
	cl := &clientState{resourceKey: rand.Text()}
	s.cl = cl
	switch {
	case cfg.Sampling && opts.Sampling == nil:
		return nil, errors.New("sampling is on, but Options.Sampling is nil")
	case cfg.Sampling && opts.Sampling.Model == nil:
		return nil, errors.New("sampling is on, but Options.Sampling has no Model")
	case cfg.Elicitation && opts.Elicit == nil:
		return nil, errors.New("elicitation is on, but Options.Elicit is nil")
	case cfg.LogLevel != "" && !validLevel(cfg.LogLevel):
		return nil, fmt.Errorf("logLevel %q is not a level of the protocol", cfg.LogLevel)
	case cfg.OAuth != nil && s.http == nil:
		return nil, errors.New("oauth applies only to a remote server")
	case cfg.OAuth != nil && hasHeader(cfg.Headers, "Authorization"):
		return nil, errors.New("oauth and an Authorization header both authorize the server: set one")
	}
	dirs := cfg.Roots
	if dirs == nil {
		dirs = opts.Roots
	}
	caps := &sdk.ClientCapabilities{}
	if dirs != nil {
		roots, err := rootURIs(dirs)
		if err != nil {
			return nil, err
		}
		cl.roots = roots
		caps.RootsV2 = &sdk.RootCapabilities{ListChanged: true}
	}
	if cfg.OAuth != nil {
		s.http.Transport = &authTransport{base: s.http.Transport, h: cfg.OAuth, server: s.name, redact: &cl.redact}
	}
	co := &sdk.ClientOptions{
		Logger:                      s.logger,
		Capabilities:                caps,
		ToolListChangedHandler:      s.onListChanged,
		ProgressNotificationHandler: s.onProgress,
		ResourceUpdatedHandler:      s.onResourceUpdated,
		LoggingMessageHandler:       s.onLog,
	}
	if cfg.Sampling {
		co.CreateMessageHandler = s.onSampling
	}
	if cfg.Elicitation {
		co.ElicitationHandler = s.onElicit
	}
	c := sdk.NewClient(impl, co)
	if cl.roots != nil {
		c.AddRoots(sdkRoots(cl.roots)...)
	}
	// taskMiddleware is the inner one: middleware sees the protocol's
	// requests and results, before it makes a call a task.
	c.AddSendingMiddleware(s.taskMiddleware)
	c.AddSendingMiddleware(s.middleware)
	if err := registerTaskMethods(c); err != nil {
		return nil, err
	}
	return c, nil
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if http.CanonicalHeaderKey(k) == name {
			return true
		}
	}
	return false
}

// middleware sees the requests we send and their answers: it sets the log
// level and renews subscriptions once a connection is initialized, adds
// the resource tools to the tool list, and validates structured results
// against their tools' output schemas.
func (s *Source) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		s.setLogLevelMeta(req)
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch method {
		case "notifications/initialized":
			if cs, ok := req.GetSession().(*sdk.ClientSession); ok {
				s.initialized(ctx, cs)
			}
		case "tools/list":
			if r, ok := res.(*sdk.ListToolsResult); ok && r.NextCursor == "" {
				if cs, ok := req.GetSession().(*sdk.ClientSession); ok {
					r.Tools = s.addResourceTools(cs, r.Tools)
				}
			}
		case "tools/call":
			p, _ := req.GetParams().(*sdk.CallToolParams)
			if r, ok := res.(*sdk.CallToolResult); ok && p != nil {
				s.checkOutput(p.Name, r)
			}
		}
		return res, err
	}
}

// initialized runs on each new connection, right after the handshake:
// it sets the log level and renews the subscriptions. Failures are logged;
// the connection is usable all the same.
func (s *Source) initialized(ctx context.Context, cs *sdk.ClientSession) {
	if lvl := s.cfg.LogLevel; lvl != "" {
		if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: sdk.LoggingLevel(lvl)}); err != nil {
			s.logger.Warn("mcp server refused the log level", "level", lvl, "err", err)
		}
	}
	s.cl.mu.Lock()
	uris := make([]string, 0, len(s.cl.subs))
	for u := range s.cl.subs {
		uris = append(uris, u)
	}
	s.cl.mu.Unlock()
	for _, u := range uris {
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: u}); err != nil {
			s.logger.Warn("mcp server refused to renew a subscription", "uri", u, "err", err)
		}
	}
}

// setLogLevelMeta asks for the configured log level in a request's
// metadata, as the protocol of 2026-07-28 has it (no logging/setLevel).
func (s *Source) setLogLevelMeta(req sdk.Request) {
	if s.cfg.LogLevel == "" {
		return
	}
	cs, ok := req.GetSession().(*sdk.ClientSession)
	if !ok {
		return
	}
	ir := cs.InitializeResult()
	p := req.GetParams()
	if ir == nil || ir.ProtocolVersion < "2026-07-28" || p == nil {
		return
	}
	m := p.GetMeta()
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m[sdk.MetaKeyLogLevel]; !ok {
		m[sdk.MetaKeyLogLevel] = s.cfg.LogLevel
		p.SetMeta(m)
	}
}

// Session returns the live session with the server, connecting (or
// restarting the server) if need be, for what this package does not wrap.
// It is valid until the server stops or restarts, or the source closes;
// ask again then. Do not close it: Close the source. Requests through it
// are the source's: tool listings include the resource tools if
// configured, and tool results are checked against output schemas.
func (s *Source) Session(ctx context.Context) (*sdk.ClientSession, error) {
	sess, err := s.session(ctx, false)
	if err != nil {
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return sess.cs, nil
}

// emit reports an event to Options.OnEvent.
func (s *Source) emit(e toolloop.Event) {
	if s.opts.OnEvent == nil {
		return
	}
	e.Time, e.Source, e.SourceName = time.Now(), toolloop.SourceMCP, s.name
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("mcp: Options.OnEvent panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	s.opts.OnEvent(e)
}

// protect runs a handler of the user's, turning a panic into an error.
func (s *Source) protect(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("mcp: "+what+" panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("the client's %s failed", what)
		}
	}()
	return f()
}
