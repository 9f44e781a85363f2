package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/rpc"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// parentPollInterval is how often a plugin checks that its host is still
// its parent process.
const parentPollInterval = time.Second

// quitLinger bounds how long a plugin the host asked to stop waits for the
// host to close the connection before it exits. go-plugin waits two
// seconds for the exit before it kills the process.
const quitLinger = time.Second

// Serve serves tools to the host that launched this program, and returns
// when the host stops the plugin or goes away; main should return then.
// Call it from the plugin program's main:
//
//	func main() {
//		plugin.Serve(toolloop.NewTool("grep", "Search files.", grep))
//	}
//
// Any [toolloop.Tool] works, typed tools from [toolloop.NewTool] included.
// A tool that panics is recovered here, and its call fails with kind
// panic while the plugin goes on serving; the stack goes to the host's
// Logger. A *toolloop.ToolError a tool returns keeps its kind on the host.
// Progress and partial output reported on the call reach the host's call,
// coalesced while the host is busy (see the package doc's Memory). The
// result's text is cut to the output budget the host sends with the call.
//
// What the program writes to its standard output and error goes to the
// host's Config.Output. Run on its own, outside a host, the program
// says it is a plugin and exits with status 1.
//
// Serve panics if a tool is nil or two tools have the same name: a
// mistake in the plugin program.
func Serve(tools ...toolloop.Tool) {
	srv := newServer(tools)
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       "toolloop-plugin",
		Level:      hclog.Info,
		Output:     os.Stderr, // the process's real stderr: the host parses it
		JSONFormat: true,
	})
	srv.log = logger
	done := make(chan struct{})
	go func() {
		defer close(done)
		goplugin.Serve(&goplugin.ServeConfig{
			HandshakeConfig: wire.Handshake,
			Plugins:         goplugin.PluginSet{wire.PluginName: &rpcPlugin{srv: srv}},
			Logger:          logger,
		})
	}()
	go srv.watchParent(os.Getppid())
	select {
	case <-done:
		// The host asked the plugin to stop, and is closing its side of
		// the connection. Exiting first would make it write to a dead
		// socket, which yamux reports on the host's stderr.
		t := time.NewTimer(quitLinger)
		select {
		case <-srv.lost:
		case <-t.C:
		}
		t.Stop()
	case <-srv.lost:
		// The host went away without stopping the plugin, so nobody
		// else will remove the socket.
		if dir := os.Getenv(goplugin.EnvUnixSocketDir); strings.HasPrefix(filepath.Base(dir), socketDirPrefix) {
			_ = os.RemoveAll(dir)
		}
	}
	srv.stop()
}

// server is the plugin side of the protocol, shared by every session.
type server struct {
	tools map[string]toolloop.Tool
	specs []toolloop.ToolSpec
	log   hclog.Logger

	base     context.Context
	stop     context.CancelFunc
	lost     chan struct{}
	lostOnce sync.Once
}

func newServer(tools []toolloop.Tool) *server {
	s := &server{tools: make(map[string]toolloop.Tool, len(tools)), lost: make(chan struct{}), log: hclog.NewNullLogger()}
	for i, t := range tools {
		if t == nil {
			panic(fmt.Sprintf("plugin: Serve: tool %d is nil", i))
		}
		spec := t.Spec()
		if _, dup := s.tools[spec.Name]; dup {
			panic(fmt.Sprintf("plugin: Serve: tool %q given twice", spec.Name))
		}
		s.tools[spec.Name] = t
		s.specs = append(s.specs, spec)
	}
	s.base, s.stop = context.WithCancel(context.Background())
	return s
}

// hostLost records that the host is gone.
func (s *server) hostLost() {
	s.lostOnce.Do(func() { close(s.lost) })
}

// watchParent notices a host that died before it could connect, or whose
// connection somehow outlived it: the plugin is reparented then.
func (s *server) watchParent(ppid int) {
	t := time.NewTicker(parentPollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.lost:
			return
		case <-t.C:
			if os.Getppid() != ppid {
				s.hostLost()
				return
			}
		}
	}
}

// session serves one host connection. Its exported methods are exactly
// its RPC methods.
type session struct {
	srv    *server
	broker *goplugin.MuxBroker

	mu      sync.Mutex
	host    *rpc.Client
	running map[uint64]context.CancelFunc
	early   map[uint64]bool // tokens cancelled before their Run arrived
}

// Hello implements the Plugin.Hello RPC.
func (ss *session) Hello(h wire.Hello, reply *wire.HelloReply) error {
	conn, err := ss.broker.Dial(h.CallbackID)
	if err != nil {
		return fmt.Errorf("dialing the host's callback stream: %w", err)
	}
	ss.mu.Lock()
	ss.host = rpc.NewClient(&watchConn{Conn: conn, lost: ss.srv.hostLost})
	ss.mu.Unlock()
	reply.Specs = ss.srv.specs
	reply.PID = os.Getpid()
	return nil
}

// Cancel implements the Plugin.Cancel RPC.
func (ss *session) Cancel(c wire.Cancel, _ *wire.Empty) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if cancel, ok := ss.running[c.Token]; ok {
		cancel()
	} else {
		// Run and Cancel are read in order but served concurrently: the
		// Run may not have registered yet.
		ss.early[c.Token] = true
	}
	return nil
}

// Run implements the Plugin.Run RPC.
func (ss *session) Run(r wire.Run, reply *wire.RunReply) error {
	ctx, cancel := context.WithCancel(ss.srv.base)
	defer cancel()
	if !r.Deadline.IsZero() {
		var cancelDL context.CancelFunc
		ctx, cancelDL = context.WithDeadline(ctx, r.Deadline)
		defer cancelDL()
	}
	ss.mu.Lock()
	if ss.early[r.Token] {
		delete(ss.early, r.Token)
		cancel()
	} else {
		ss.running[r.Token] = cancel
	}
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.running, r.Token)
		ss.mu.Unlock()
	}()

	call := &toolloop.Call{
		ID: r.ID, Name: r.Tool, Arguments: r.Arguments,
		Annotations: r.Annotations, Source: toolloop.SourceKind(r.Source), SourceName: r.SourceName,
		RunID: r.RunID, Turn: r.Turn, Job: r.Job,
	}
	var rep *hostReporter
	if r.Report {
		rep = &hostReporter{ss: ss, token: r.Token}
		call.Reporter = rep
	}
	res, stack := ss.srv.run(ctx, call)
	if rep != nil {
		rep.finish() // every report goes before the result
	}
	if r.MaxOutputBytes > 0 {
		res = cutResult(res, r.MaxOutputBytes)
	}
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(toolloop.ErrorResult(toolloop.Errorf(toolloop.KindExecutionFailed,
			"the plugin could not encode the result of %s: %v", r.Tool, err)))
	}
	// The host would refuse a reply over its limit: say why instead. The
	// reply's other fields and gob's framing take a few bytes more.
	if size := len(b) + len(stack) + replyOverhead; r.MaxReplyBytes > 0 && size > r.MaxReplyBytes {
		b, _ = json.Marshal(toolloop.ErrorResult(toolloop.Errorf(toolloop.KindExecutionFailed,
			"the result of %s is %d bytes encoded, over the host's limit of %d bytes", r.Tool, size, r.MaxReplyBytes)))
		stack = ""
	}
	reply.Result, reply.Stack = b, stack
	return nil
}

// replyOverhead bounds what a RunReply adds to its Result and Stack.
const replyOverhead = 256

// run runs one call, recovering a panic, whose stack it returns.
func (s *server) run(ctx context.Context, call *toolloop.Call) (res *toolloop.ToolResult, stack string) {
	t, ok := s.tools[call.Name]
	if !ok {
		return toolloop.ErrorResult(toolloop.Errorf(toolloop.KindNotFound, "the plugin has no tool %q", call.Name)), ""
	}
	// A call cancelled before it arrived, or past its deadline, never
	// starts.
	if err := ctx.Err(); err != nil {
		return toolloop.ErrorResult(err), ""
	}
	defer func() {
		if p := recover(); p != nil {
			stack = string(debug.Stack())
			s.log.Error("tool panicked", "tool", call.Name, "call_id", call.ID, "panic", fmt.Sprint(p), "stack", stack)
			res = toolloop.ErrorResult(toolloop.Errorf(toolloop.KindPanic, "tool %s panicked: %v", call.Name, p))
		}
	}()
	r, err := t.Run(ctx, call)
	switch {
	case err != nil:
		return toolloop.ErrorResult(err), ""
	case r == nil:
		return &toolloop.ToolResult{Status: toolloop.StatusOK}, ""
	}
	return r, ""
}

// watchConn reports the first read error on the host's callback stream:
// the host closed the connection or died.
type watchConn struct {
	net.Conn
	once sync.Once
	lost func()
}

func (c *watchConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.once.Do(c.lost)
	}
	return n, err
}
