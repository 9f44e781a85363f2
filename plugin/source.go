package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/rpc"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// DefaultHangTimeout is how long a call may go on in the plugin after its
// context is done before the plugin is deemed hung and stopped, when
// Config.HangTimeout is zero.
const DefaultHangTimeout = 5 * time.Second

// Errors of a Source.
var (
	// ErrHandshake: the program started but did not complete the plugin
	// handshake. It is not a plugin built with [Serve], or it was built
	// against an incompatible version of this package, or it failed
	// before it could serve. The error names the binary.
	ErrHandshake = errors.New("plugin: handshake failed")
	// ErrClosed: the Source was closed.
	ErrClosed = errors.New("plugin: source is closed")
)

// Config says how to run a plugin program.
type Config struct {
	// Name identifies the plugin in results and events (as their
	// SourceName) and must be unique within a registry. Empty means the
	// base name of Command.
	Name string
	// Command is the plugin program, a path or a name looked up in PATH,
	// and Args its arguments.
	Command string
	Args    []string
	// Env is added to the host's environment for the plugin.
	Env []string
	// Dir is the plugin's working directory; empty means the host's.
	Dir string

	// StartTimeout bounds the start and handshake; 0 means one minute.
	StartTimeout time.Duration
	// HangTimeout is how long a call may go on in the plugin after its
	// context is done (its timeout passed, or the run was cancelled)
	// before the plugin is deemed hung and stopped; it is started again
	// on the next call. Other calls running in it fail then. 0 means
	// DefaultHangTimeout; a negative value never stops it.
	HangTimeout time.Duration

	// MaxMessageBytes is the largest message the host reads from the
	// plugin: a call's result, a report, the tool list. A result over it
	// fails its call with kind execution_failed, naming both sizes, and a
	// report over it is dropped; either is skipped as it arrives, never
	// held in memory. 0 (or less) means DefaultMaxMessageBytes.
	//
	// Each call also tells the plugin its output budget
	// (toolloop.Call.MaxOutputBytes, which the loop sets), and a plugin
	// built with this version of [Serve] cuts its result's text to it
	// before sending it, so the host holds no more of a tool's output
	// than the budget. The limit is for the rest: plugins built before
	// the budget was sent, hostile ones, and results with images as
	// large as the limit.
	MaxMessageBytes int

	// Logger, if set, receives go-plugin's messages about the process and
	// what the plugin logs: the stack of a tool that panicked, or what a
	// crashing plugin printed.
	Logger *slog.Logger
	// Output, if set, receives what the plugin program writes to its
	// standard output and standard error; nil discards it.
	Output io.Writer
}

// Source is a [toolloop.Source] of kind plugin: a program serving tools
// with [Serve], run in its own process.
//
// The process starts when the tools are first listed (when the source is
// added to a registry) and lives until Close. A call that is running when
// the process dies (it crashed, or called os.Exit) fails at once with
// kind execution_failed; the process is started again on the next call.
// When a call's context is done the host stops waiting for it at once,
// and the plugin's context for the call is cancelled; see
// Config.HangTimeout for a plugin that ignores that.
//
// Progress and partial output a plugin's tool reports arrive on the
// host's call, so the loop reports them as it does a built-in tool's,
// with this source's name as their provenance. Calls go through the
// loop's whole pipeline like any other tool's.
//
// A Source is safe for concurrent use. Close it to stop the process.
type Source struct {
	cfg  Config
	name string

	tokens atomic.Uint64
	calls  sync.Map // token → *toolloop.Call awaiting reports

	mu      sync.Mutex
	cur     *process
	specs   []toolloop.ToolSpec
	tools   []toolloop.Tool
	changed func()
	closed  bool
	wg      sync.WaitGroup // every goroutine the source starts
}

var (
	_ toolloop.Source   = (*Source)(nil)
	_ toolloop.Notifier = (*Source)(nil)
)

// New returns a Source that runs the plugin cfg describes. Nothing starts
// until its tools are listed.
func New(cfg Config) *Source {
	name := cfg.Name
	if name == "" {
		name = filepath.Base(cfg.Command)
	}
	return &Source{cfg: cfg, name: name}
}

// Name implements [toolloop.Source].
func (s *Source) Name() string { return s.name }

// Kind implements [toolloop.Source]: [toolloop.SourcePlugin].
func (s *Source) Kind() toolloop.SourceKind { return toolloop.SourcePlugin }

// Tools implements [toolloop.Source]: it starts the plugin if it is not
// running and returns its tools. A program that does not complete the
// handshake gives an error wrapping [ErrHandshake] that names it.
func (s *Source) Tools(ctx context.Context) ([]toolloop.Tool, error) {
	if _, err := s.acquire(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools), nil
}

// Notify implements [toolloop.Notifier]. The plugin's tools are read again
// each time it is restarted; changed is called if they differ.
func (s *Source) Notify(changed func()) {
	s.mu.Lock()
	s.changed = changed
	s.mu.Unlock()
}

// Close stops the plugin process and waits for it to exit. Calls running
// in it fail. A start in progress is waited for (at most StartTimeout)
// and then stopped. Close is idempotent; it always returns nil.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	p := s.cur
	s.cur = nil
	s.mu.Unlock()
	if p != nil {
		<-p.ready
		p.stop()
	}
	s.wg.Wait()
	return nil
}

func (s *Source) logger() *slog.Logger {
	if s.cfg.Logger != nil {
		return s.cfg.Logger
	}
	return discard
}

var discard = slog.New(slog.DiscardHandler)

// socketDirPrefix starts the name of the folder a host makes for a
// plugin's socket. A plugin whose host died removes that folder itself.
const socketDirPrefix = "toolloop-plugin-"

// process is one run of the plugin program.
type process struct {
	ready chan struct{} // closed when the start has finished
	err   error         // why the start failed

	// Set by the start, read after ready.
	client *goplugin.Client
	cmd    *exec.Cmd
	rpc    *rpc.Client
	pid    int
	dir    string // the private folder of the plugin's socket

	dead     chan struct{} // closed when the process is being stopped
	deadOnce sync.Once
	stopOnce sync.Once
	exit     string // how the process ended, once stopped
}

// gone reports whether the process has exited or is being stopped.
func (p *process) gone() bool {
	select {
	case <-p.dead:
		return true
	default:
	}
	return p.client != nil && p.client.Exited()
}

// stop ends the process, if it still runs, and waits for it: gracefully
// through go-plugin (which kills it if it does not exit within two
// seconds), then records how it ended.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		p.deadOnce.Do(func() { close(p.dead) })
		if p.client == nil {
			return
		}
		p.client.Kill()
		if p.cmd.ProcessState != nil {
			p.exit = p.cmd.ProcessState.String()
		}
		// A plugin that was killed, or crashed, leaves its socket behind.
		if p.dir != "" {
			_ = os.RemoveAll(p.dir)
		}
	})
}

// track adds a goroutine to the source's wait group, unless the source is
// closed.
func (s *Source) track() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// acquire returns the running process, starting one if there is none or
// the last one died.
func (s *Source) acquire(ctx context.Context) (*process, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	p := s.cur
	var old *process
	if p != nil && isClosed(p.ready) && (p.err != nil || p.gone()) {
		old, p = p, nil
	}
	if p == nil {
		p = &process{ready: make(chan struct{}), dead: make(chan struct{})}
		s.cur = p
		s.wg.Add(1)
		go s.start(p)
	}
	s.mu.Unlock()
	if old != nil {
		old.stop() // it is dead or never started: this is quick
	}
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.err != nil {
		return nil, p.err
	}
	return p, nil
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (s *Source) start(p *process) {
	defer s.wg.Done()
	defer close(p.ready)
	specs, err := s.launch(p)
	if err != nil {
		p.err = err
		return
	}
	s.mu.Lock()
	var changed func()
	if !reflect.DeepEqual(specs, s.specs) {
		if s.specs != nil {
			changed = s.changed
		}
		s.specs = specs
		s.tools = make([]toolloop.Tool, len(specs))
		for i, sp := range specs {
			s.tools[i] = &remoteTool{src: s, spec: sp}
		}
	}
	s.mu.Unlock()
	if changed != nil {
		changed()
	}
}

// launch starts the program, checks the handshake, opens the callback
// stream and lists the tools.
func (s *Source) launch(p *process) ([]toolloop.ToolSpec, error) {
	if s.cfg.Command == "" {
		return nil, fmt.Errorf("plugin %q: no command", s.name)
	}
	// The plugin makes its socket in a folder of its own, which stop
	// removes even if the plugin could not (it was killed).
	dir, err := os.MkdirTemp("", socketDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", s.name, err)
	}
	p.dir = dir
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Env = append(os.Environ(), s.cfg.Env...)
	cmd.Env = append(cmd.Env, goplugin.EnvUnixSocketDir+"="+dir)
	cmd.Dir = s.cfg.Dir
	out := io.Discard
	if s.cfg.Output != nil {
		out = &lockedWriter{w: s.cfg.Output}
	}
	p.cmd = cmd
	p.client = goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		Plugins:          goplugin.PluginSet{wire.PluginName: &rpcPlugin{}},
		Cmd:              cmd,
		SkipHostEnv:      true, // cmd.Env has it, with Config.Env taking precedence
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolNetRPC},
		StartTimeout:     s.cfg.StartTimeout,
		Logger:           hclogFor(s.cfg.Logger).Named(s.name),
		SyncStdout:       out,
		SyncStderr:       out,
		// Not Managed: Close kills the process, and go-plugin never
		// forgets a managed client, so restarts would pile up.
	})
	fail := func(err error) ([]toolloop.ToolSpec, error) {
		p.client.Kill()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	rc, err := p.client.Client()
	if err != nil {
		var ee *exec.Error
		var pe *fs.PathError
		if errors.As(err, &ee) || errors.As(err, &pe) {
			return fail(fmt.Errorf("plugin %q: starting %s: %w", s.name, cmd.Path, err))
		}
		return fail(fmt.Errorf("plugin %q: %s: %w: %w", s.name, cmd.Path, ErrHandshake, err))
	}
	d, capped, err := dispense(rc, s.maxMessageBytes())
	if err != nil {
		return fail(fmt.Errorf("plugin %q: %s: %w: dispensing its tools: %w", s.name, cmd.Path, ErrHandshake, err))
	}
	if !capped {
		s.logger().Warn("plugin: this version of go-plugin hides what the host needs to limit the size of replies; they are read whatever their size",
			"plugin", s.name)
	}
	id := d.broker.NextId()
	s.wg.Add(1) // the caller holds a count, so this cannot race with Close's Wait
	go s.serveCallback(d.broker, id)
	var hello wire.HelloReply
	if err := d.rpc.Call(wire.MethodHello, wire.Hello{CallbackID: id}, &hello); err != nil {
		return fail(fmt.Errorf("plugin %q: %s: %w: hello: %w", s.name, cmd.Path, ErrHandshake, err))
	}
	p.rpc, p.pid = d.rpc, hello.PID
	s.logger().Debug("plugin started", "plugin", s.name, "pid", hello.PID, "tools", len(hello.Specs))
	return hello.Specs, nil
}

// serveCallback serves Host.Report to the plugin on broker stream id,
// until the connection closes.
func (s *Source) serveCallback(b *goplugin.MuxBroker, id uint32) {
	defer s.wg.Done()
	conn, err := b.Accept(id)
	if err != nil {
		s.logger().Warn("plugin: the plugin did not open its callback stream; progress is lost", "plugin", s.name, "err", err)
		return
	}
	srv := rpc.NewServer()
	if err := srv.RegisterName(wire.HostService, &callback{src: s}); err != nil {
		panic(err) // a bug in this package
	}
	limit := s.maxMessageBytes()
	srv.ServeCodec(newServerCodec(conn, limit, func(size int64) {
		s.logger().Warn("plugin: a report over the size limit was dropped", "plugin", s.name, "bytes", size, "limit", limit)
	}))
}

// maxMessageBytes is the limit on what the host reads from the plugin.
func (s *Source) maxMessageBytes() int64 {
	if s.cfg.MaxMessageBytes > 0 {
		return int64(s.cfg.MaxMessageBytes)
	}
	return DefaultMaxMessageBytes
}

// lockedWriter serializes the plugin's stdout and stderr copies.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
