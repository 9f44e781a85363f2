package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// Defaults for the zero fields of [Options].
const (
	DefaultConnectTimeout  = 30 * time.Second
	DefaultShutdownTimeout = 5 * time.Second
	DefaultMinBackoff      = 250 * time.Millisecond
	DefaultMaxBackoff      = 30 * time.Second
)

// ErrClosed is returned by a [Source] used after Close.
var ErrClosed = errors.New("mcp: source closed")

// Options configure sources. The zero value is the documented defaults;
// one Options may serve many sources.
type Options struct {
	// Logger receives the lines a stdio server writes to its stderr (at
	// Info, with the server's name), the lines it writes to its stdout
	// that are not JSON-RPC (at Warn), and reports of servers that stop,
	// restart or fail to list their tools. Nil discards them; the last
	// lines of a server's stderr are kept for its start errors all the
	// same.
	Logger *slog.Logger
	// ClientInfo is how we introduce ourselves to servers; nil means
	// "toolloop".
	ClientInfo *sdk.Implementation
	// HTTPClient carries requests to remote servers; nil means a client
	// of each source's own, configured like http.DefaultClient. A
	// server's Headers are added to each request. A failed start is tried
	// again once right away after closing the client's idle connections,
	// in case the first went out on a connection the server had closed.
	HTTPClient *http.Client
	// ConnectTimeout bounds starting a server and the protocol handshake,
	// and listing its tools; 0 means 30 seconds. A server that does not
	// make it in time fails with a [TimeoutError].
	ConnectTimeout time.Duration
	// ShutdownTimeout is how long Close waits for a stdio server to exit
	// after closing its stdin, before it sends SIGTERM and then SIGKILL;
	// 0 means 5 seconds. A server that failed to start gets one second
	// for each step instead.
	ShutdownTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts to restart a
	// server that keeps failing: the first restart after a server stops is
	// immediate, and each further failure without a successful request in
	// between doubles the wait, from MinBackoff up to MaxBackoff. 0 means
	// 250ms and 30s.
	MinBackoff, MaxBackoff time.Duration

	// MaxOutputBytes bounds the text a call keeps when the call does not
	// say ([toolloop.Call.MaxOutputBytes] is 0); 0 means
	// the loop's default (1 MiB, see [toolloop.Limits]). A stdio or SSE server's stream,
	// which carries the answers to every call, keeps the largest budget
	// of the calls in flight, or this.
	//
	// What an HTTP, SSE or stdio server sends is cut while it is read, so
	// a server that returns gigabytes costs no more memory than these
	// limits: text over the budget (text blocks, embedded resources'
	// text, structured content) is cut from the middle, keeping its head
	// and tail around a marker saying how much was cut, as the loop cuts;
	// content blocks that get nothing of it are left out, and the content
	// ends with a text block saying how many were and why. Whatever else a
	// message holds (its envelope, metadata, tool lists, notifications)
	// may take up to 16 MiB, the SDK's own limit on a message; a larger
	// message answering a request fails it with an error of kind
	// execution_failed naming its size and the limit. A Transport of
	// your own is not cut.
	MaxOutputBytes int
	// MaxBinaryBytes bounds the base64 data of the images, audio and
	// blobs a call keeps, in all; a block whose data does not fit what is
	// left is left out, as above. 0 means [DefaultMaxBinaryBytes] (8 MiB
	// of base64, 6 MiB of data).
	MaxBinaryBytes int

	// Client capabilities: what servers may ask of the client. Each is
	// off unless set, and, except Roots, reaches only the servers whose
	// [ServerConfig] asks for it; a capability that is off is not
	// declared to servers.

	// Roots are the workspace directories offered to servers as roots
	// (file:// URIs), unless a server lists its own ([ServerConfig.Roots]).
	// Nil declares no roots capability. [Source.SetRoots] changes them.
	Roots []string
	// Sampling answers the sampling requests of the servers whose config
	// sets Sampling, with a model of yours, through an approval; nil
	// declares no sampling capability. See [Sampling].
	Sampling *Sampling
	// Elicit answers the elicitation requests (a question for the user,
	// with a form) of the servers whose config sets Elicitation; nil
	// declares no elicitation capability. See [ElicitFunc].
	Elicit ElicitFunc
	// OnEvent receives what servers report outside tool calls, as events
	// of source mcp named after the server: their log messages
	// ([EventLog]), updates of subscribed resources
	// ([EventResourceUpdated]) and the sampling requests answered or
	// refused ([EventSampling]). It is called on the SDK's goroutines,
	// possibly several at once, and must not block for long (a
	// notification waits for it); a panic in it is recovered. Nil discards
	// them (log messages still go to Logger).
	OnEvent func(toolloop.Event)
}

func orDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Source is one MCP server as a [toolloop.Source] of kind mcp. Its name is
// the server's name, which the loop records as the provenance of every
// result and event of the server's tools.
//
// Each of the server's tools is offered as "server__tool" (see [ToolName])
// with the server's description, input schema and annotations; the loop
// validates arguments against the schema before the server sees them.
// Tools whose schema the loop cannot use are left out, and logged.
//
// # Calls
//
// A call goes to the server under the tool's original name, with a progress
// token of its own: the server's progress notifications for it are reported
// through [toolloop.Call.ReportProgress], so they reach the loop's events as
// tool.execution_progress of that call. Progress is best-effort: the SDK
// hands notifications to their handler on a queue of its own, while the
// result goes straight to the call, so a report sent just before the
// result may be handled after it, and is then dropped, since nothing of a
// call is reported after its result. When the call's context is
// cancelled or times out, the SDK sends the server notifications/cancelled
// and the call returns at once. A call whose context is done before it is
// sent (it may wait for the server to start) sends nothing, and starts
// nothing. What the server answers is cut to the call's output budget as
// it is read (see [Options.MaxOutputBytes]). The server's result is
// converted as the package documentation says; a protocol error, or the
// server stopping mid-call, fails the call with kind execution_failed.
// Result metadata carries the original tool name in Meta.Extra["mcp_tool"],
// and the task's ID in Meta.Extra["mcp_task"] for a call run as an MCP
// task (see the package documentation's "Tasks").
//
// # Connecting
//
// By default the source connects when it is added to a registry
// (AddSource calls Tools). A Lazy source connects on first use instead:
// Tools returns no tools until the source has been given a [toolloop.Notifier]
// callback, which the registry does right after AddSource; the source then
// at once reports a change, so the registry lists its tools again, now
// connecting, before its next Specs or Lookup, typically the first model
// turn. Nothing is started for an agent that never runs. (The registry
// lists tools while holding its lock, so other lookups wait for that first
// start, at most [Options.ConnectTimeout].) If the start fails, the source
// asks the registry to try again once the backoff has passed.
//
// # Failures
//
// When the server stops (its process exits, its connection breaks, a
// remote server forgets the session), calls in flight fail at once with a
// [ConnectionLostError] (an execution_failed result saying the connection
// to the server was lost), and the next call or listing starts it again.
// A call whose request provably did not reach a remote server (its
// connection was refused, or the server answered that it did not know the
// session, as a restarted server does, or one that expired the session)
// is sent again, once, on a new session, so the first call after a
// restart or an expiry succeeds; a call that may have reached the server
// is never sent twice: one whose answer was lost with its session fails
// with a [ConnectionLostError]. A session the server no longer knows
// costs no backoff: the server answered, so it is up. See the package
// documentation's "Timeouts and bounds". A server that keeps failing is retried with
// backoff (see [Options]); while it waits, calls fail at once saying when
// the next attempt will be. After a restart the source reports a change,
// so the registry reads the tool list afresh. A server's tools/list_changed
// notification is reported the same way. The tools come in name order,
// whatever the server's, so the same tools give the same specs, byte for
// byte, and a model's prompt cache holds across re-listings.
//
// Close stops the server: a stdio server's stdin is closed, and it is
// signalled if it does not exit (SIGTERM after [Options.ShutdownTimeout],
// SIGKILL after as long again), then reaped. A server that had to be
// killed is no error.
type Source struct {
	name   string
	cfg    ServerConfig
	kind   string
	opts   Options
	logger *slog.Logger
	client *sdk.Client
	// http carries requests to a remote server; ownTransport says its
	// transport is the source's own, whose idle connections Close closes.
	http         *http.Client
	ownTransport bool
	inflight     inflight
	// serial queues the calls of a server configured to take one at a
	// time; nil if not.
	serial *serial

	nextToken atomic.Uint64
	progress  sync.Map // progress token (string) → *toolloop.Call
	// tasks holds what each live session's server said of tasks
	// (task_client.go): *sdk.ClientSession → *sessionTasks.
	tasks sync.Map

	// changes counts list changes (notifications and restarts); listed is
	// its value when Tools last listed.
	changes, listed atomic.Uint64

	mu        sync.Mutex
	sess      *session
	dialing   *dialAttempt
	everUp    bool
	hasListed bool
	failures  int
	retryAt   time.Time
	lastErr   error
	closed    bool
	changed   func()
	retry     *time.Timer
	wg        sync.WaitGroup

	// cl holds the state of the client capabilities (client.go).
	cl *clientState
}

// New returns a source for the server configured by cfg, under the given
// name. It checks cfg but starts nothing: that happens when the source is
// added to a registry, or on first use if cfg.Lazy is set.
func New(name string, cfg ServerConfig, opts *Options) (*Source, error) {
	if name == "" {
		return nil, errors.New("mcp: New: empty server name")
	}
	kind, err := cfg.kind()
	if err != nil {
		return nil, fmt.Errorf("mcp: server %q: %w", name, err)
	}
	s := &Source{name: name, cfg: cfg, kind: kind}
	if cfg.Serialize {
		s.serial = &serial{}
	}
	if opts != nil {
		s.opts = *opts
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.logger = s.logger.With("mcp_server", name)
	impl := s.opts.ClientInfo
	if impl == nil {
		impl = &sdk.Implementation{Name: "toolloop", Version: "1"}
	}
	if kind == typeHTTP || kind == typeSSE {
		s.http = s.newHTTPClient()
	}
	if s.client, err = s.newClient(impl); err != nil {
		return nil, fmt.Errorf("mcp: server %q: %w", name, err)
	}
	return s, nil
}

// Name implements [toolloop.Source]: the server's name.
func (s *Source) Name() string { return s.name }

// Kind implements [toolloop.Source]: [toolloop.SourceMCP].
func (s *Source) Kind() toolloop.SourceKind { return toolloop.SourceMCP }

// Tools implements [toolloop.Source]: it lists the server's tools, page by
// page, connecting (or restarting) the server if need be, and returns those
// the allow and deny lists let through.
func (s *Source) Tools(ctx context.Context) ([]toolloop.Tool, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if s.cfg.Lazy && s.changed == nil && !s.everUp {
		s.mu.Unlock()
		return nil, nil
	}
	s.mu.Unlock()
	sess, err := s.session(ctx, true)
	if err != nil {
		s.retryLater()
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("mcp: %w", err)
	}
	gen := s.changes.Load()
	var list []*sdk.Tool
	// A server that never answers the listing is as good as one that
	// never starts.
	limit := orDur(s.opts.ConnectTimeout, DefaultConnectTimeout)
	lctx, cancel := context.WithTimeoutCause(ctx, limit, &TimeoutError{Server: s.name, What: "list its tools", Limit: limit})
	defer cancel()
	for t, err := range toolPages(lctx, sess.cs) {
		if err != nil {
			var te *TimeoutError
			if ctx.Err() == nil && errors.As(context.Cause(lctx), &te) {
				err = fmt.Errorf("mcp: %w", te)
			} else {
				err = s.callError(ctx, sess, "the tool listing", err, false)
			}
			s.retryLater()
			return nil, err
		}
		list = append(list, t)
	}
	tools := s.wrap(sess, list)
	s.mu.Lock()
	s.failures = 0
	s.hasListed = true
	s.mu.Unlock()
	s.listed.Store(gen)
	return tools, nil
}

// Notify implements [toolloop.Notifier]. changed is called when the server
// announces that its tool list changed, after a restart, when a failed
// listing is due to be retried, and at once (before Notify returns) for a
// lazy source not yet listed, or when the list changed since Tools last
// read it. A source serves one registry: a second Notify replaces the
// first callback.
func (s *Source) Notify(changed func()) {
	s.mu.Lock()
	s.changed = changed
	pending := !s.hasListed || s.changes.Load() != s.listed.Load()
	s.mu.Unlock()
	if pending && changed != nil {
		changed()
	}
}

// Close stops the server and waits for it to exit. Calls in flight fail at
// once. Close is idempotent; the source is unusable afterwards.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	sess := s.sess
	s.sess = nil
	if s.retry != nil {
		s.retry.Stop()
	}
	dialing := s.dialing
	if dialing != nil {
		dialing.cancel()
	}
	s.mu.Unlock()
	if dialing != nil {
		<-dialing.done
	}
	var err error
	if sess != nil {
		err = sess.close()
	}
	s.wg.Wait()
	if s.ownTransport {
		s.http.CloseIdleConnections()
	}
	return err
}

// wrap turns the server's tool list into toolloop tools, sorted by the
// server's names for them.
func (s *Source) wrap(sess *session, list []*sdk.Tool) []toolloop.Tool {
	var names []string
	byName := make(map[string]*sdk.Tool, len(list))
	for _, t := range list {
		if t == nil || !s.cfg.exposes(t.Name) {
			continue
		}
		if _, dup := byName[t.Name]; dup {
			s.logger.Warn("mcp server lists a tool twice; using the first", "tool", t.Name)
			continue
		}
		byName[t.Name] = t
		names = append(names, t.Name)
	}
	// In name order, whatever order the server listed them in: the same
	// tools make the same tools, so a re-listing (after list_changed or a
	// restart) leaves the specs, and a model's prompt cache, as they were.
	slices.Sort(names)
	assigned := assignNames(s.name, names)
	tools := make([]toolloop.Tool, 0, len(names))
	for _, remote := range names {
		t := byName[remote]
		tl, err := s.newTool(assigned[remote], t, s.taskSupport(sess.cs, remote))
		if err != nil {
			s.logger.Warn("mcp tool left out: the loop cannot use it", "tool", remote, "err", err)
			continue
		}
		tools = append(tools, tl)
	}
	return tools
}

// session returns the live session, starting the server if there is none
// and no backoff forbids it. Concurrent callers share one start. fromTools
// says Tools asked, and will list the tools itself after a restart.
func (s *Source) session(ctx context.Context, fromTools bool) (*session, error) {
	s.mu.Lock()
	for {
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if sess := s.sess; sess != nil && !sess.ended() {
			s.mu.Unlock()
			return sess, nil
		}
		if d := s.dialing; d != nil {
			s.mu.Unlock()
			select {
			case <-d.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if d.err != nil && !d.abandoned {
				return nil, d.err
			}
			s.mu.Lock()
			continue
		}
		if wait := time.Until(s.retryAt); wait > 0 {
			err := fmt.Errorf("server %q is down (%v); the next restart attempt is in %v", s.name, s.lastErr, wait.Round(time.Millisecond))
			s.mu.Unlock()
			return nil, err
		}
		d := &dialAttempt{done: make(chan struct{})}
		// Some transports (SSE) keep the context they connect with for the
		// life of the connection: it must outlive the dial, and end only if
		// the dial times out, its caller gives up, or the source closes.
		dctx, cancelCause := context.WithCancelCause(context.WithoutCancel(ctx))
		cancel := func() { cancelCause(nil) }
		limit := orDur(s.opts.ConnectTimeout, DefaultConnectTimeout)
		timer := time.AfterFunc(limit, func() {
			cancelCause(&TimeoutError{Server: s.name, What: "finish starting", Limit: limit})
		})
		stop := context.AfterFunc(ctx, cancel)
		s.dialing, d.cancel = d, cancel
		restart := s.everUp
		s.mu.Unlock()

		sess, err := s.dial(dctx)
		if err != nil && s.http != nil && dctx.Err() == nil {
			// The initialize request may have gone out on a kept-alive
			// connection the server had closed (as a restarted server
			// has), which the HTTP client does not retry: try once more,
			// on a fresh connection.
			s.logger.Info("mcp server failed to start; trying once more on a fresh connection", "err", err)
			s.http.CloseIdleConnections()
			sess, err = s.dial(dctx)
		}
		timer.Stop()
		stop()
		if err != nil {
			cancel()
		} else {
			sess.release = cancel
		}

		s.mu.Lock()
		s.dialing = nil
		d.err = err
		// A start abandoned by its caller or by Close is no failure of the
		// server's; whoever waited for it starts afresh.
		d.abandoned = err != nil && (ctx.Err() != nil || s.closed)
		close(d.done)
		switch {
		case s.closed:
			s.mu.Unlock()
			if err == nil {
				_ = sess.close()
			}
			return nil, ErrClosed
		case d.abandoned:
			s.mu.Unlock()
			return nil, ctx.Err()
		case err != nil:
			// A remote server that refuses connections costs nothing to
			// try again: the first call after it comes back finds it.
			if s.http == nil || !refused(err) {
				s.failures++
				s.retryAt = time.Now().Add(s.backoff())
			}
			s.lastErr = err
			failures := s.failures
			s.mu.Unlock()
			s.logger.Warn("mcp server failed to start", "err", err, "failures", failures)
			return nil, err
		}
		s.sess, s.everUp, s.lastErr = sess, true, nil
		s.wg.Add(1)
		go s.watch(sess)
		changed := s.changed
		s.mu.Unlock()
		if restart {
			s.logger.Info("mcp server restarted")
			s.changes.Add(1)
			if !fromTools && changed != nil {
				changed()
			}
		}
		return sess, nil
	}
}

// dialAttempt is a start of the server in progress, which concurrent
// callers wait for.
type dialAttempt struct {
	done      chan struct{} // closed when the attempt is over
	cancel    context.CancelFunc
	err       error
	abandoned bool
}

// backoff is the wait before the next restart attempt. s.mu must be held.
func (s *Source) backoff() time.Duration {
	if s.failures <= 1 {
		return 0
	}
	d := orDur(s.opts.MinBackoff, DefaultMinBackoff)
	maxd := orDur(s.opts.MaxBackoff, DefaultMaxBackoff)
	for i := 2; i < s.failures && d < maxd; i++ {
		d *= 2
	}
	return min(d, maxd)
}

// retryLater makes the registry list the tools again once the backoff has
// passed, after a listing failed.
func (s *Source) retryLater() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.changed == nil {
		return
	}
	if s.retry != nil {
		s.retry.Stop()
	}
	s.changes.Add(1)
	s.retry = time.AfterFunc(max(time.Until(s.retryAt), orDur(s.opts.MinBackoff, DefaultMinBackoff)), s.notifyChanged)
}

func (s *Source) notifyChanged() {
	s.mu.Lock()
	changed := s.changed
	s.mu.Unlock()
	if changed != nil {
		changed()
	}
}

// watch waits for the session to end, however it ends: the connection
// closes, or the source gives up on it, in which case watch closes it.
func (s *Source) watch(sess *session) {
	defer s.wg.Done()
	waited := make(chan error, 1)
	go func() { waited <- sess.cs.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-sess.ctx.Done():
		_ = sess.cs.Close()
		err = <-waited
	}
	// Closing a session that ended on its own still releases what the SDK
	// holds for it (its subscription listener).
	_ = sess.cs.Close()
	s.tasks.Delete(sess.cs)
	if sess.proc != nil {
		sess.proc.cleanup()
	}
	s.ended(sess, err)
}

// ended records that sess is over, for the given cause (nil: the server
// stopped). It is safe to call more than once.
func (s *Source) ended(sess *session, err error) {
	if err == nil {
		err = errServerStopped
	}
	if !sess.end(err) {
		return
	}
	s.mu.Lock()
	if s.sess != sess || s.closed {
		s.mu.Unlock()
		return
	}
	s.sess = nil
	// A remote server that answered that it no longer knows the session
	// (it expired it, or restarted) is up: a new session is no restart
	// attempt to back off from.
	if !errors.Is(err, errSessionGone) {
		s.failures++
		s.retryAt = time.Now().Add(s.backoff())
	}
	s.lastErr = err
	s.mu.Unlock()
	s.logger.Warn("mcp server stopped; the next call restarts it", "err", err)
}

var errServerStopped = errors.New("the server stopped")

// onListChanged handles the server's tools/list_changed notification.
func (s *Source) onListChanged(context.Context, *sdk.ToolListChangedRequest) {
	s.changes.Add(1)
	s.notifyChanged()
}

// onProgress routes a progress notification to the call it belongs to.
func (s *Source) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	if c, ok := s.progress.Load(tok); ok {
		c.(*toolloop.Call).ReportProgress(toolloop.Progress{
			Message: req.Params.Message, Done: req.Params.Progress, Total: req.Params.Total,
		})
	}
}

// call calls a tool of the server. Nothing of a call whose context is
// done is sent: not even a start of the server.
//
// A call whose request provably was not processed because the session
// was gone (a remote server refused the connection, or answered that it
// does not know the session: see httpsession.go) is sent again, once, on
// a new session. A call that may have reached the server is never sent
// twice.
func (s *Source) call(ctx context.Context, remote string, call *toolloop.Call) (*toolloop.ToolResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.serial != nil {
		if err := s.serial.acquire(ctx); err != nil {
			return nil, err
		}
		defer s.serial.release()
	}
	budget := s.textBudget(call.MaxOutputBytes)
	defer s.inflight.add(budget)()
	params := &sdk.CallToolParams{Name: remote, Arguments: json.RawMessage(call.Arguments)}
	if call.Reporter != nil {
		tok := "toolloop-" + strconv.FormatUint(s.nextToken.Add(1), 10)
		s.progress.Store(tok, call)
		defer s.progress.Delete(tok)
		params.SetProgressToken(tok)
	}
	for retried := false; ; retried = true {
		sess, err := s.session(ctx, false)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case errors.Is(err, ErrClosed):
				return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "MCP server %q is shut down", s.name)
			}
			return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "MCP %v", err)
		}
		st := noState
		var streamEnded atomic.Bool
		actx := ctx
		if s.http != nil {
			st = new(callState)
			actx = withStreamEnd(ctx, &streamEnded)
		}
		var r *toolloop.ToolResult
		if s.asTask(sess, remote, call) {
			var sent bool
			r, sent, err = s.runTask(actx, sess, remote, call, params, budget, st)
			if err != nil && sent {
				return nil, err // classified already
			}
		} else {
			var res *sdk.CallToolResult
			if res, err = s.send(actx, sess, params, budget, st); err == nil {
				r = toResult(res)
			}
		}
		if err == nil {
			s.mu.Lock()
			s.failures = 0
			s.mu.Unlock()
			if r.Meta.Extra == nil {
				r.Meta.Extra = map[string]any{"mcp_tool": remote}
			}
			return r, nil
		}
		if st.unsent.Load() && !retried && ctx.Err() == nil {
			s.ended(sess, err)
			s.logger.Info("mcp call not delivered: the session was gone; sending it on a new session", "tool", remote, "err", err)
			continue
		}
		lost := st.broken.Load() || st.unsent.Load() || streamEnded.Load()
		return nil, s.callError(ctx, sess, fmt.Sprintf("the call to %q", remote), err, lost)
	}
}

// noState is the call state of calls over transports that learn nothing
// about their requests (all but HTTP): it stays zero.
var noState = new(callState)

// send sends one call on sess. The call ends when the session does,
// whatever the transport noticed.
func (s *Source) send(ctx context.Context, sess *session, params *sdk.CallToolParams, budget int, st *callState) (*sdk.CallToolResult, error) {
	cctx := withBudget(ctx, budget)
	if s.http != nil {
		cctx = withCallState(cctx, st)
	}
	cctx, cancel := context.WithCancelCause(cctx)
	defer cancel(nil)
	stop := context.AfterFunc(sess.ctx, func() { cancel(context.Cause(sess.ctx)) })
	defer stop()
	// The server may have taken a while to start: a call answered for
	// meanwhile (cancelled, timed out) must not reach it.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return sess.cs.CallTool(cctx, params)
}

// callError classifies the failure of a request (what describes it): the
// caller's own cancellation or timeout is returned as is (the loop reports
// it, and the SDK has told the server); the end of the session ends it for
// good, so the next call restarts the server, and is a
// [ConnectionLostError], as is a request whose own connection broke (lost);
// anything else is a protocol error.
func (s *Source) callError(ctx context.Context, sess *session, what string, err error, lost bool) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !sess.ended() && !connectionLost(err) {
		if lost && !isWireError(err) {
			// The request's own stream broke, but the server is there:
			// the session lives on, this request is lost.
			return &ConnectionLostError{Server: s.name, During: what, Err: err}
		}
		return toolloop.Errorf(toolloop.KindExecutionFailed, "MCP server %q: %s failed: %v", s.name, what, err)
	}
	s.ended(sess, err)
	cause := context.Cause(sess.ctx)
	if errors.Is(cause, ErrClosed) {
		return toolloop.Errorf(toolloop.KindExecutionFailed, "MCP server %q was shut down during %s", s.name, what)
	}
	if errors.Is(err, context.Canceled) {
		err = cause // the session ended under the request
	}
	return &ConnectionLostError{Server: s.name, During: what, Err: err}
}

// isWireError reports whether err is an error the server sent.
func isWireError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}
